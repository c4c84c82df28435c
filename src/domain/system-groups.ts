// The system user groups every realm has (one per role, plus everyone,
// internet and nobody) and the one a role belongs to directly.
import { ROLE } from './roles.js'

export const SYSTEM_GROUPS = {
  internet: 'role:internet',
  everyone: 'role:everyone',
  members: 'role:members',
  fullMembers: 'role:fullmembers',
  moderators: 'role:moderators',
  administrators: 'role:administrators',
  owners: 'role:owners',
  nobody: 'role:nobody',
} as const

/** The system group a role belongs to directly (higher roles reach lower groups through subgroups). */
export function roleGroupName(role: number): string {
  switch (role) {
    case ROLE.OWNER:
      return SYSTEM_GROUPS.owners
    case ROLE.ADMIN:
      return SYSTEM_GROUPS.administrators
    case ROLE.MODERATOR:
      return SYSTEM_GROUPS.moderators
    case ROLE.GUEST:
      return SYSTEM_GROUPS.everyone
    default:
      return SYSTEM_GROUPS.fullMembers
  }
}
