// Push-notification device registration (upstream views/push_notifications.py):
// POST/DELETE /users/me/apns_device_token and /users/me/android_gcm_reg_id.
// Tokens are kept per user for the notification sender; registering a token
// twice is not an error, removing an unknown one is. Humans only.
import type { ActionContext } from './context.js'
import { Prisma } from '../db/index.js'
import { botRequestsNotAccepted, emptyOrInvalidLengthToken, invalidApnsToken, invalidAppId, pushTokenDoesNotExist } from '../errors.js'

export const PUSH_KIND = { APNS: 1, FCM: 2 } as const
export type PushKind = (typeof PUSH_KIND)[keyof typeof PUSH_KIND]
export const MAX_PUSH_TOKEN_LENGTH = 4096
export const MAX_APP_ID_LENGTH = 255

/** Upstream validate_token; APNs tokens are hex (stored lower-case, as they compare). */
export function normalizePushToken(token: string, kind: PushKind): string {
  if (token === '' || token.length > MAX_PUSH_TOKEN_LENGTH) throw emptyOrInvalidLengthToken()
  if (kind === PUSH_KIND.APNS) {
    if (!/^(?:[0-9a-fA-F]{2})+$/.test(token)) throw invalidApnsToken()
    return token.toLowerCase()
  }
  return token
}

export async function addPushDevice(ctx: ActionContext, input: { kind: PushKind; token: string; appId?: string }): Promise<void> {
  if (ctx.user.isBot) throw botRequestsNotAccepted()
  const token = normalizePushToken(input.token, input.kind)
  const appId = input.kind === PUSH_KIND.APNS ? (input.appId ?? '') : null
  if (appId !== null && (appId.length > MAX_APP_ID_LENGTH || !/^[.a-zA-Z0-9-]+$/.test(appId))) throw invalidAppId()
  await ctx.prisma.$executeRaw(Prisma.sql`
    INSERT INTO push_device (user_id, kind, token, app_id, created_at)
    VALUES (${ctx.user.id}, ${input.kind}, ${token}, ${appId}, ${ctx.now()})
    ON CONFLICT (user_id, kind, md5(token)) DO UPDATE SET app_id = EXCLUDED.app_id`)
}

export async function removePushDevice(ctx: ActionContext, input: { kind: PushKind; token: string }): Promise<void> {
  if (ctx.user.isBot) throw botRequestsNotAccepted()
  const token = normalizePushToken(input.token, input.kind)
  const removed = await ctx.prisma.pushDevice.deleteMany({ where: { userId: ctx.user.id, kind: input.kind, token } })
  if (removed.count === 0) throw pushTokenDoesNotExist()
}
