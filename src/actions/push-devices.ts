// Push-notification device registration (upstream views/push_notifications.py):
// POST/DELETE /users/me/apns_device_token and /users/me/android_gcm_reg_id.
// Tokens are kept per user for the notification sender; registering a token
// twice is not an error, removing an unknown one is. A user has at most
// MAX_PUSH_DEVICES_PER_USER tokens (APNs and FCM together), each at most
// MAX_PUSH_TOKEN_LENGTH characters. Humans only.
// With a push bouncer configured, the token is also registered with
// (`push/register`) or removed from (`push/unregister`) the bouncer, after the
// local change, as upstream does; a bouncer that cannot be reached makes the
// request fail with 502 (the local row stays, and the app registers again on
// its next start), a bouncer's 4xx is answered with its message.
import type { ActionContext } from './context.js'
import { PUSH_KIND, type PushKind } from '../domain/push-kind.js'
import { Prisma } from '../db/index.js'
import { botRequestsNotAccepted, emptyOrInvalidLengthToken, invalidApnsToken, invalidAppId, pushBouncerUnavailable, pushTokenDoesNotExist, badRequest } from '../errors.js'
import { BouncerError, bouncerRequest, realmUuid, userUuid } from '../notifications/push-bouncer.js'
import { outboundClientFor } from '../outbound/index.js'
import { lockUserForCap } from './push-cap.js'

export const MAX_PUSH_TOKEN_LENGTH = 4096
export const MAX_APP_ID_LENGTH = 255
/** Mobile devices (APNs and FCM tokens together) one user may have registered at once. */
export const MAX_PUSH_DEVICES_PER_USER = 20

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
  await ctx.prisma.$transaction(async (tx) => {
    await lockUserForCap(tx, ctx.user.id)
    const [counts] = await tx.$queryRaw<{ total: number; same: number }[]>`
      SELECT count(*)::int AS total, count(*) FILTER (WHERE kind = ${input.kind} AND token = ${token})::int AS same
      FROM push_device WHERE user_id = ${ctx.user.id}`
    if (counts && counts.same === 0 && counts.total >= MAX_PUSH_DEVICES_PER_USER) {
      throw badRequest(`Invalid token: a user may have at most ${MAX_PUSH_DEVICES_PER_USER} push notification tokens`, { parameter: 'token' })
    }
    await tx.$executeRaw(Prisma.sql`
      INSERT INTO push_device (user_id, kind, token, app_id, created_at)
      VALUES (${ctx.user.id}, ${input.kind}, ${token}, ${appId}, ${ctx.now()})
      ON CONFLICT (user_id, kind, md5(token)) DO UPDATE SET app_id = EXCLUDED.app_id`)
  })
  await tellBouncer(ctx, 'push/register', { token, token_kind: input.kind, ...(appId !== null ? { ios_app_id: appId } : {}) })
}

/** Registers or unregisters a token with the push bouncer, when one is configured (form fields as upstream sends them). */
async function tellBouncer(ctx: ActionContext, endpoint: 'push/register' | 'push/unregister', fields: Record<string, string | number>): Promise<void> {
  const config = ctx.config.pushBouncer
  if (!config) return
  try {
    await bouncerRequest(outboundClientFor(ctx.config), config, endpoint, {
      form: { server_uuid: config.orgId, user_uuid: userUuid(config, ctx.user.id), realm_uuid: realmUuid(config, ctx.user.realmId), user_id: ctx.user.id, ...fields },
    })
  } catch (error) {
    if (!(error instanceof BouncerError)) throw error
    ctx.log.warn({ user_id: ctx.user.id, endpoint, err: error }, 'push bouncer request failed')
    // Unregistering a token the bouncer does not have is what the caller wanted.
    if (endpoint === 'push/unregister' && error.status === 400 && /Token does not exist/.test(error.message)) return
    throw error.retryable || error.code === 'INVALID_ZULIP_SERVER' ? pushBouncerUnavailable(error.message) : badRequest(error.message)
  }
}

export async function removePushDevice(ctx: ActionContext, input: { kind: PushKind; token: string }): Promise<void> {
  if (ctx.user.isBot) throw botRequestsNotAccepted()
  const token = normalizePushToken(input.token, input.kind)
  const removed = await ctx.prisma.pushDevice.deleteMany({ where: { userId: ctx.user.id, kind: input.kind, token } })
  if (removed.count === 0) throw pushTokenDoesNotExist()
  await tellBouncer(ctx, 'push/unregister', { token, token_kind: input.kind })
}
