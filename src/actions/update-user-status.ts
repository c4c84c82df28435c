// POST /users/me/status: stores the status, maps the deprecated `away` onto
// presence_enabled, and tells everyone who can access the user.
import type { ActionContext } from './context.js'
import { inTransaction } from './context.js'
import { botRequestsNotAccepted } from '../errors.js'
import { parseStatusRequest, type StatusRequest } from '../domain/user-status.js'
import { userStatusEvent } from '../events/schemas/users.js'
import { userSettingsEvent } from '../events/schemas/personal.js'
import { usersWhoCanAccess } from '../presence/audience.js'
import { applyPresenceEnabled } from './update-presence.js'

export async function updateUserStatus(ctx: ActionContext, request: StatusRequest): Promise<void> {
  if (ctx.user.isBot) throw botRequestsNotAccepted()
  const realmEmoji = request.emojiName ? await ctx.prisma.realmEmoji.findMany({ where: { realmId: ctx.realm.id } }) : []
  const change = parseStatusRequest(request, realmEmoji)
  const now = ctx.now()
  const presenceChanged = await inTransaction(ctx, async (tx, emit) => {
    const fields = {
      ...(change.statusText !== undefined ? { statusText: change.statusText } : {}),
      ...(change.emoji ? change.emoji : {}),
      timestamp: now,
    }
    await tx.userStatus.upsert({ where: { userId: ctx.user.id }, create: { userId: ctx.user.id, ...fields }, update: fields })
    let presenceChanged = false
    if (change.away !== undefined) {
      const settings = await tx.userSettings.upsert({ where: { userId: ctx.user.id }, create: { userId: ctx.user.id }, update: {} })
      if (settings.presenceEnabled === change.away) {
        await tx.userSettings.update({ where: { userId: ctx.user.id }, data: { presenceEnabled: !change.away } })
        emit(userSettingsEvent('presence_enabled', !change.away), [ctx.user.id])
        presenceChanged = true
      }
    }
    emit(userStatusEvent(ctx.user.id, change), await usersWhoCanAccess(tx, ctx.realm, ctx.user.id))
    return presenceChanged
  })
  if (presenceChanged && change.away !== undefined) await applyPresenceEnabled(ctx, !change.away)
}
