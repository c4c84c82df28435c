// Upstream's require_member_or_admin: endpoints for people who are members or
// above, never guests or bots (invitations, user groups, custom emoji).
import type { User } from '../db/index.js'
import { isGuest } from '../domain/roles.js'
import { botRequestsNotAccepted, notAllowedForGuests } from '../errors.js'

export function requireMemberOrAdmin(ctx: { user: Pick<User, 'role' | 'isBot'> }): void {
  if (isGuest(ctx.user.role)) throw notAllowedForGuests()
  if (ctx.user.isBot) throw botRequestsNotAccepted()
}
