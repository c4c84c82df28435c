// Upstream's can_change_user_emails special permission (level 313), granted
// or revoked by the server's operator (`roost user allow-email-changes`), as
// upstream's change_user_role command does: with it, an administrator may
// give other users new addresses (PATCH /users/{user_id} with new_email).
// Nothing in the API shows it, so no event is sent.
import type { User } from '../db/index.js'
import type { ActionContext } from './context.js'
import { noSuchUser } from '../errors.js'

export async function setCanChangeUserEmails(ctx: ActionContext, userId: number, allowed: boolean): Promise<User> {
  const target = await ctx.prisma.user.findFirst({ where: { id: userId, realmId: ctx.realm.id } })
  if (!target) throw noSuchUser()
  if (target.canChangeUserEmails === allowed) return target
  return ctx.prisma.user.update({ where: { id: target.id }, data: { canChangeUserEmails: allowed } })
}
