// Rules for a user's full name and for role changes (upstream check_full_name
// and the role checks of user updates). Pure; they throw ApiError.
import { invalidNameCharacters, invalidRole, mustBeAdmin, mustBeOwner, nameTooLong, nameTooShort } from '../errors.js'
import { isAdmin, isOwner, isRole, ROLE } from './roles.js'

export const MAX_NAME_LENGTH = 100
export const MIN_NAME_LENGTH = 2
const NAME_INVALID_CHARS = ['*', '`', '\\', '>', '"', '@']

/**
 * Characters of Unicode's "Other" categories (C0 and C1 controls with DEL and
 * NEL, format characters such as U+200E, surrogates, private use,
 * unassigned) and the line and paragraph separators U+2028/U+2029: refused in
 * names, as upstream refuses category C.
 */
const UNPRINTABLE = /[\p{C}\u2028\u2029]/u

/** Upstream check_full_name: trimmed, 2–100 characters, none of the mention/markup characters. */
export function checkFullName(raw: string): string {
  const name = raw.trim()
  if (name.length > MAX_NAME_LENGTH) throw nameTooLong()
  if (name.length < MIN_NAME_LENGTH) throw nameTooShort()
  if (NAME_INVALID_CHARS.some((c) => name.includes(c)) || UNPRINTABLE.test(name)) throw invalidNameCharacters()
  return name
}

/** Throws unless `actor` may move `target` from its role to `role` (roles only up to the actor's own). */
export function checkRoleChange(actor: { role: number }, target: { role: number }, role: number): void {
  if (!isRole(role)) throw invalidRole()
  if (role === target.role) return
  if ((role === ROLE.OWNER || target.role === ROLE.OWNER) && !isOwner(actor.role)) throw mustBeOwner()
  if (!isAdmin(actor.role)) throw mustBeAdmin()
}
