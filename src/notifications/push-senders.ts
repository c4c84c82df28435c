// Push senders behind one interface, and the one place that chooses them from
// the configuration (pushSendersFor):
// * Web Push (RFC 8030 delivery, RFC 8291 aes128gcm encryption, RFC 8292
//   VAPID) through the `web-push` library, to browsers' subscriptions
//   (POST /users/me/webpush_subscription);
// * FCM HTTP v1 to tokens from /users/me/android_gcm_reg_id: an OAuth2
//   JWT-bearer exchange (RS256 assertion signed with the service account's
//   key, cached until shortly before it expires), then
//   POST {endpoint}/v1/projects/{project}/messages:send with upstream's data
//   payload (FCM data values are strings).
// * APNs with token auth to tokens from /users/me/apns_device_token: an ES256
//   JWT (kid = APNS_KEY_ID, iss = APNS_TEAM_ID; renewed every 50 minutes) on
//   HTTP/2 `POST /3/device/{token}`, apns-topic = the device's appid (else
//   APNS_TOPIC), the body upstream's: `aps` (alert title, subtitle, body,
//   sound) and the payload under `zulip`.
// * upstream's push bouncer (notifications/push-bouncer.ts) instead of FCM and
//   APNs: one request per user carrying all of their mobile devices' tokens.
// Both JWTs are signed by the `jose` library.
//
// Every request goes through the guarded outbound client (src/outbound/), never
// a socket of a sender's own.
// A sender answers per target: 'sent', or 'invalid' when the provider says the
// token is gone (Web Push 404 / 410, FCM 404 or UNREGISTERED, APNs 410 or
// BadDeviceToken / Unregistered) or, for Web Push, when the subscription's
// endpoint is one the outbound policy refuses, so the caller prunes it. Any
// other failure throws, and the caller retries later.
import { createPrivateKey, type KeyObject } from 'node:crypto'
import { SignJWT } from 'jose'
import webpush from 'web-push'
import type { ApnsConfig, Config, FcmConfig } from '../config.js'
import { outboundClientFor, OutboundClient, OutboundRefused, type OutboundResponse } from '../outbound/index.js'
import { PushBouncerSender } from './push-bouncer.js'
import { apnsAlert, type PushOutcome, type PushSender, type PushTarget } from './push-target.js'

export type { ApnsTarget, BouncerTarget, FcmTarget, PushOutcome, PushSender, PushTarget, TargetBackoff, WebPushTarget } from './push-target.js'
export { apnsAlert } from './push-target.js'

export const WEB_PUSH_TTL_SECONDS = 24 * 60 * 60

export class WebPushSender implements PushSender {
  readonly kind = 'webpush' as const
  constructor(
    private readonly vapid: NonNullable<Config['webPush']>,
    private readonly outbound: OutboundClient,
  ) {}

  async send(target: PushTarget, payload: Record<string, unknown>): Promise<PushOutcome> {
    if (target.kind !== 'webpush') throw new Error(`the Web Push sender got a ${target.kind} target`)
    // web-push encrypts and signs; the request itself goes through the outbound client.
    const details = webpush.generateRequestDetails({ endpoint: target.endpoint, keys: { p256dh: target.p256dh, auth: target.auth } }, JSON.stringify(payload), {
      vapidDetails: { subject: this.vapid.subject, publicKey: this.vapid.publicKey, privateKey: this.vapid.privateKey },
      TTL: WEB_PUSH_TTL_SECONDS,
      contentEncoding: 'aes128gcm',
    })
    let answer: OutboundResponse
    try {
      answer = await this.outbound.request(details.endpoint, {
        method: details.method,
        headers: Object.fromEntries(Object.entries(details.headers).map(([name, value]) => [name, String(value)])),
        body: details.body ?? '',
      })
    } catch (error) {
      if (error instanceof OutboundRefused) return 'invalid'
      throw error
    }
    if (answer.status >= 200 && answer.status < 300) return 'sent'
    if (answer.status === 404 || answer.status === 410) return 'invalid'
    throw new Error(`the Web Push service answered HTTP ${answer.status}`)
  }
}

export const FCM_SCOPE = 'https://www.googleapis.com/auth/firebase.messaging'

export class FcmSender implements PushSender {
  readonly kind = 'fcm' as const
  private token: { value: string; expiresAt: number } | undefined
  private signingKey: KeyObject | undefined

  constructor(
    private readonly fcm: FcmConfig,
    private readonly outbound: OutboundClient,
    private readonly now: () => number = Date.now,
  ) {}

  private post(url: string, headers: Record<string, string>, body: string): Promise<OutboundResponse> {
    return this.outbound.request(url, { method: 'POST', headers, body })
  }

  /** OAuth2 JWT-bearer grant (RFC 7523) for the service account; cached until a minute before it expires. */
  private async accessToken(): Promise<string> {
    const nowMs = this.now()
    if (this.token && this.token.expiresAt > nowMs + 60_000) return this.token.value
    const iat = Math.floor(nowMs / 1000)
    this.signingKey ??= createPrivateKey(this.fcm.privateKey)
    const assertion = await new SignJWT({ scope: FCM_SCOPE })
      .setProtectedHeader({ alg: 'RS256', typ: 'JWT' })
      .setIssuer(this.fcm.clientEmail)
      .setAudience(this.fcm.tokenUri)
      .setIssuedAt(iat)
      .setExpirationTime(iat + 3600)
      .sign(this.signingKey)
    const form = new URLSearchParams({ grant_type: 'urn:ietf:params:oauth:grant-type:jwt-bearer', assertion }).toString()
    const answer = await this.post(this.fcm.tokenUri, { 'content-type': 'application/x-www-form-urlencoded' }, form)
    if (answer.status !== 200) throw new Error(`FCM token exchange failed: HTTP ${answer.status} ${answer.body.slice(0, 200)}`)
    const parsed = JSON.parse(answer.body) as { access_token?: unknown; expires_in?: unknown }
    if (typeof parsed.access_token !== 'string') throw new Error('FCM token exchange: no access_token in the answer')
    const lifetime = typeof parsed.expires_in === 'number' ? parsed.expires_in : 3600
    this.token = { value: parsed.access_token, expiresAt: nowMs + lifetime * 1000 }
    return parsed.access_token
  }

  async send(target: PushTarget, payload: Record<string, unknown>): Promise<PushOutcome> {
    if (target.kind !== 'fcm') throw new Error(`the FCM sender got a ${target.kind} target`)
    const data = Object.fromEntries(Object.entries(payload).map(([k, v]) => [k, typeof v === 'string' ? v : JSON.stringify(v)]))
    const body = JSON.stringify({ message: { token: target.token, data, android: { priority: 'high' } } })
    const url = `${this.fcm.endpoint}/v1/projects/${encodeURIComponent(this.fcm.projectId)}/messages:send`
    const send = async () => this.post(url, { authorization: `Bearer ${await this.accessToken()}`, 'content-type': 'application/json' }, body)
    let answer = await send()
    if (answer.status === 401) {
      this.token = undefined // revoked or expired early: one fresh token
      answer = await send()
    }
    if (answer.status === 200) return 'sent'
    if (answer.status === 404 || /"UNREGISTERED"/.test(answer.body)) return 'invalid'
    throw new Error(`FCM answered HTTP ${answer.status}: ${answer.body.slice(0, 300)}`)
  }
}

export const APNS_JWT_LIFETIME_MS = 50 * 60 * 1000

export class ApnsSender implements PushSender {
  readonly kind = 'apns' as const
  private jwt: { value: string; madeAt: number } | undefined
  private signingKey: KeyObject | undefined

  constructor(
    private readonly apns: ApnsConfig,
    private readonly outbound: OutboundClient,
    private readonly now: () => number = Date.now,
  ) {}

  private async bearer(): Promise<string> {
    const nowMs = this.now()
    if (this.jwt && nowMs - this.jwt.madeAt < APNS_JWT_LIFETIME_MS) return this.jwt.value
    this.signingKey ??= createPrivateKey(this.apns.key)
    const value = await new SignJWT({}).setProtectedHeader({ alg: 'ES256', kid: this.apns.keyId }).setIssuer(this.apns.teamId).setIssuedAt(Math.floor(nowMs / 1000)).sign(this.signingKey)
    this.jwt = { value, madeAt: nowMs }
    return value
  }

  async send(target: PushTarget, payload: Record<string, unknown>): Promise<PushOutcome> {
    if (target.kind !== 'apns') throw new Error(`the APNs sender got a ${target.kind} target`)
    const topic = target.appId || this.apns.topic
    if (!topic) throw new Error('APNs: the device has no appid and APNS_TOPIC is unset')
    const removal = payload.event === 'remove'
    const aps = removal ? { 'content-available': 1 } : { alert: apnsAlert(payload), sound: 'default' }
    const body = JSON.stringify({ aps, zulip: payload })
    const headers = {
      authorization: `bearer ${await this.bearer()}`,
      'apns-topic': topic,
      'apns-push-type': removal ? 'background' : 'alert',
      'apns-priority': removal ? '5' : '10',
      'content-type': 'application/json',
    }
    const answer = await this.outbound.http2Request(`${this.apns.endpoint}/3/device/${target.token}`, { method: 'POST', headers, body })
    if (answer.status === 200) return 'sent'
    const reason = (() => {
      try {
        return String((JSON.parse(answer.body) as { reason?: unknown }).reason ?? '')
      } catch {
        return ''
      }
    })()
    if (answer.status === 410 || reason === 'BadDeviceToken' || reason === 'Unregistered') return 'invalid'
    if (answer.status === 403 && reason === 'ExpiredProviderToken') this.jwt = undefined
    throw new Error(`APNs answered HTTP ${answer.status} ${reason}`)
  }
}

export interface PushSenderOptions {
  /** PEM certificates the senders trust besides the system's CAs (tests' self-signed peers). */
  ca?: string[]
}

/** The configured senders, by target kind; empty when push is off. */
export function pushSendersFor(config: Pick<Config, 'webPush' | 'fcm' | 'apns' | 'pushBouncer' | 'outboundAllow'>, options: PushSenderOptions = {}): Map<PushTarget['kind'], PushSender> {
  const senders = new Map<PushTarget['kind'], PushSender>()
  const outbound = outboundClientFor(config, options.ca)
  if (config.pushBouncer) senders.set('bouncer', new PushBouncerSender(config.pushBouncer, outbound))
  if (config.webPush) senders.set('webpush', new WebPushSender(config.webPush, outbound))
  if (config.fcm) senders.set('fcm', new FcmSender(config.fcm, outbound))
  if (config.apns) senders.set('apns', new ApnsSender(config.apns, outbound))
  return senders
}

/** Whether any push sender is configured (`push_notifications_enabled` of /server_settings). */
export function pushConfigured(config: Pick<Config, 'webPush' | 'fcm' | 'apns' | 'pushBouncer'>): boolean {
  return config.webPush !== undefined || config.fcm !== undefined || config.apns !== undefined || config.pushBouncer !== undefined
}
