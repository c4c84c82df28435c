// An administrator sets a user's password or gives it a new API key (the
// admin CLI's `user reset-password` and `user regenerate-api-key`). As
// upstream (do_change_password, do_regenerate_api_key for people) neither
// sends an event; every node's authentication cache drops the old row when
// the user row changes (db/auth-cache.ts), so the old key fails at once. A
// new password also ends the user's browser sessions.
import type { ActionContext } from './context.js'
import { inTransaction } from './context.js'
import { accessUserById } from '../access/user.js'
import { PASSWORD_MIN_LENGTH } from '../domain/credentials.js'
import { hashPassword, randomAlphanumeric } from '../domain/credentials.js'
import { isOwner } from '../domain/roles.js'
import { insufficientPermission, mustBeOwner, passwordTooWeak } from '../errors.js'
import { canAdminUser } from './update-user.js'
import { revokeWebSessions } from './web-sessions.js'

async function adminTarget(ctx: ActionContext, userId: number) {
  const target = await accessUserById(ctx, userId)
  if (!canAdminUser(ctx.user, target)) throw insufficientPermission()
  if (isOwner(target.role) && !isOwner(ctx.user.role)) throw mustBeOwner()
  return target
}

export async function setUserPassword(ctx: ActionContext, userId: number, password: string): Promise<void> {
  if (password.length < PASSWORD_MIN_LENGTH) throw passwordTooWeak()
  const target = await adminTarget(ctx, userId)
  const passwordHash = await hashPassword(password)
  await inTransaction(ctx, async (tx) => {
    await tx.user.update({ where: { id: target.id }, data: { passwordHash } })
    await revokeWebSessions(tx, [target.id])
  })
}

/** Returns the new key. */
export async function regenerateApiKey(ctx: ActionContext, userId: number): Promise<string> {
  const target = await adminTarget(ctx, userId)
  const apiKey = randomAlphanumeric(32)
  await inTransaction(ctx, (tx) => tx.user.update({ where: { id: target.id }, data: { apiKey } }))
  return apiKey
}
