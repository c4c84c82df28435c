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

/** How a silent mention of a system group shows it (upstream's SystemGroups.GROUP_DISPLAY_NAME_MAP). */
export const SYSTEM_GROUP_DISPLAY_NAMES: Readonly<Record<string, string>> = {
  [SYSTEM_GROUPS.internet]: 'Everyone on the internet',
  [SYSTEM_GROUPS.everyone]: 'Everyone including guests',
  [SYSTEM_GROUPS.members]: 'Everyone except guests',
  [SYSTEM_GROUPS.fullMembers]: 'Full members',
  [SYSTEM_GROUPS.moderators]: 'Moderators',
  [SYSTEM_GROUPS.administrators]: 'Administrators',
  [SYSTEM_GROUPS.owners]: 'Owners',
  [SYSTEM_GROUPS.nobody]: 'Nobody',
}

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
