// Browser Web Push subscriptions: POST/DELETE /users/me/webpush_subscription.
// Upstream has no such endpoint (its web app gets no push); Roost names it
// after the mobile ones. The fields are a browser PushSubscription's:
// `endpoint` (the push service's https URL) and the RFC 8291 keys `p256dh`
// (the 65-byte uncompressed P-256 public key) and `auth` (16-byte secret),
// base64url. The endpoint must be one the outbound policy lets Roost reach
// (src/outbound/: a public address on the default port, or an OUTBOUND_ALLOW
// entry); it is checked again at every send. A user has at most
// MAX_WEB_PUSH_SUBSCRIPTIONS_PER_USER subscriptions. Subscribing twice
// replaces the keys; removing an unknown endpoint is an error, as for the
// mobile tokens. Humans only.
import type { ActionContext } from './context.js'
import { badRequest, botRequestsNotAccepted } from '../errors.js'
import { outboundClientFor, OutboundRefused, OutboundUnresolved } from '../outbound/index.js'
import { lockUserForCap } from './push-cap.js'

export const MAX_ENDPOINT_LENGTH = 2048
/** Browsers (and profiles) one user may have subscribed at once. */
export const MAX_WEB_PUSH_SUBSCRIPTIONS_PER_USER = 10

function decodedLength(value: string): number {
  return /^[A-Za-z0-9_-]+={0,2}$/.test(value) ? Buffer.from(value, 'base64url').length : -1
}

async function checkEndpoint(ctx: ActionContext, endpoint: string): Promise<void> {
  let url: URL | undefined
  try {
    url = new URL(endpoint)
  } catch {
    url = undefined
  }
  if (!url || url.protocol !== 'https:' || endpoint.length > MAX_ENDPOINT_LENGTH) throw badRequest('Invalid endpoint: an https URL of at most 2048 characters is required', { parameter: 'endpoint' })
  try {
    await outboundClientFor(ctx.config).check(endpoint)
  } catch (error) {
    if (error instanceof OutboundRefused || error instanceof OutboundUnresolved) throw badRequest(`Invalid endpoint: not a push service this server may reach (${error.message})`, { parameter: 'endpoint' })
    throw error
  }
}

export async function addWebPushSubscription(ctx: ActionContext, input: { endpoint: string; p256dh: string; auth: string }): Promise<void> {
  if (ctx.user.isBot) throw botRequestsNotAccepted()
  if (decodedLength(input.p256dh) !== 65 || Buffer.from(input.p256dh, 'base64url')[0] !== 4) throw badRequest('Invalid p256dh: a base64url uncompressed P-256 public key is required', { parameter: 'p256dh' })
  if (decodedLength(input.auth) !== 16) throw badRequest('Invalid auth: a base64url 16-byte secret is required', { parameter: 'auth' })
  await checkEndpoint(ctx, input.endpoint)
  await ctx.prisma.$transaction(async (tx) => {
    await lockUserForCap(tx, ctx.user.id)
    const existing = await tx.webPushSubscription.findUnique({ where: { userId_endpoint: { userId: ctx.user.id, endpoint: input.endpoint } }, select: { id: true } })
    if (existing) return void (await tx.webPushSubscription.update({ where: { id: existing.id }, data: { p256dh: input.p256dh, auth: input.auth } }))
    if ((await tx.webPushSubscription.count({ where: { userId: ctx.user.id } })) >= MAX_WEB_PUSH_SUBSCRIPTIONS_PER_USER) {
      throw badRequest(`Invalid endpoint: a user may have at most ${MAX_WEB_PUSH_SUBSCRIPTIONS_PER_USER} Web Push subscriptions`, { parameter: 'endpoint' })
    }
    await tx.webPushSubscription.create({ data: { userId: ctx.user.id, endpoint: input.endpoint, p256dh: input.p256dh, auth: input.auth, createdAt: ctx.now() } })
  })
}

export async function removeWebPushSubscription(ctx: ActionContext, input: { endpoint: string }): Promise<void> {
  if (ctx.user.isBot) throw botRequestsNotAccepted()
  const removed = await ctx.prisma.webPushSubscription.deleteMany({ where: { userId: ctx.user.id, endpoint: input.endpoint } })
  if (removed.count === 0) throw badRequest('Web Push subscription does not exist', { parameter: 'endpoint' })
}
