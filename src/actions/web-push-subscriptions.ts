// Browser Web Push subscriptions: POST/DELETE /users/me/webpush_subscription.
// Upstream has no such endpoint (its web app gets no push); Roost names it
// after the mobile ones. The fields are a browser PushSubscription's:
// `endpoint` (the push service's https URL) and the RFC 8291 keys `p256dh`
// (the 65-byte uncompressed P-256 public key) and `auth` (16-byte secret),
// base64url. Subscribing twice replaces the keys; removing an unknown
// endpoint is an error, as for the mobile tokens. Humans only.
import type { ActionContext } from './context.js'
import { badRequest, botRequestsNotAccepted } from '../errors.js'

export const MAX_ENDPOINT_LENGTH = 2048

function decodedLength(value: string): number {
  return /^[A-Za-z0-9_-]+={0,2}$/.test(value) ? Buffer.from(value, 'base64url').length : -1
}

function checkEndpoint(endpoint: string): void {
  let url: URL | undefined
  try {
    url = new URL(endpoint)
  } catch {
    url = undefined
  }
  if (!url || url.protocol !== 'https:' || endpoint.length > MAX_ENDPOINT_LENGTH) throw badRequest('Invalid endpoint: an https URL of at most 2048 characters is required', { parameter: 'endpoint' })
}

export async function addWebPushSubscription(ctx: ActionContext, input: { endpoint: string; p256dh: string; auth: string }): Promise<void> {
  if (ctx.user.isBot) throw botRequestsNotAccepted()
  checkEndpoint(input.endpoint)
  if (decodedLength(input.p256dh) !== 65 || Buffer.from(input.p256dh, 'base64url')[0] !== 4) throw badRequest('Invalid p256dh: a base64url uncompressed P-256 public key is required', { parameter: 'p256dh' })
  if (decodedLength(input.auth) !== 16) throw badRequest('Invalid auth: a base64url 16-byte secret is required', { parameter: 'auth' })
  await ctx.prisma.webPushSubscription.upsert({
    where: { userId_endpoint: { userId: ctx.user.id, endpoint: input.endpoint } },
    create: { userId: ctx.user.id, endpoint: input.endpoint, p256dh: input.p256dh, auth: input.auth, createdAt: ctx.now() },
    update: { p256dh: input.p256dh, auth: input.auth },
  })
}

export async function removeWebPushSubscription(ctx: ActionContext, input: { endpoint: string }): Promise<void> {
  if (ctx.user.isBot) throw botRequestsNotAccepted()
  const removed = await ctx.prisma.webPushSubscription.deleteMany({ where: { userId: ctx.user.id, endpoint: input.endpoint } })
  if (removed.count === 0) throw badRequest('Web Push subscription does not exist', { parameter: 'endpoint' })
}
