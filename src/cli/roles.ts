// Roles by name on the command line: owner, administrator (or admin),
// moderator, member, guest; the API's numbers (100…600) are accepted too.
import { InvalidArgumentError } from 'commander'
import { ROLE, isRole } from '../domain/roles.js'

const BY_NAME: Record<string, number> = {
  owner: ROLE.OWNER,
  administrator: ROLE.ADMIN,
  admin: ROLE.ADMIN,
  moderator: ROLE.MODERATOR,
  member: ROLE.MEMBER,
  guest: ROLE.GUEST,
}

/** The names help lists, in role order. */
export const ROLE_CHOICES = 'owner, administrator, moderator, member or guest'

const NAMES: Record<number, string> = {
  [ROLE.OWNER]: 'owner',
  [ROLE.ADMIN]: 'administrator',
  [ROLE.MODERATOR]: 'moderator',
  [ROLE.MEMBER]: 'member',
  [ROLE.GUEST]: 'guest',
}

export const roleName = (role: number): string => NAMES[role] ?? String(role)

/** Commander's argument parser: a role name or number; anything else names the accepted values. */
export function parseRole(raw: string): number {
  const given = raw.trim().toLowerCase()
  const role = /^\d+$/.test(given) ? Number(given) : BY_NAME[given]
  if (role === undefined || !isRole(role)) throw new InvalidArgumentError(`'${raw}' is not a role: ${ROLE_CHOICES} (or 100, 200, 300, 400, 600).`)
  return role
}
