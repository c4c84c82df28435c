// Upstream's push notification bouncer, for operators who send their mobile
// push notifications through one (upstream's PUSH_NOTIFICATION_BOUNCER_URL /
// ZULIP_SERVICES_URL with ZULIP_ORG_ID and ZULIP_ORG_KEY; here
// PUSH_BOUNCER_URL, PUSH_BOUNCER_ORG_ID, PUSH_BOUNCER_ORG_KEY). The protocol,
// as upstream's server speaks it (zerver/lib/remote_server.py,
// zerver/lib/push_notifications.py) and its bouncer answers (zilencer/views.py):
//
// * every request goes to `{PUSH_BOUNCER_URL}/api/v1/remotes/<endpoint>` with
//   HTTP Basic auth, the server's registration UUID as user name and its key as
//   password; a bouncer that does not know the server answers 401
//   INVALID_ZULIP_SERVER;
// * `push/register` and `push/unregister` (form-encoded: server_uuid,
//   user_uuid, realm_uuid, user_id, token, token_kind 1 = APNs / 2 = FCM, and
//   ios_app_id for APNs) as a device token is added or removed;
// * `push/notify` (JSON): user_id and user_uuid, realm_uuid, apns_payload,
//   gcm_payload, gcm_options and the tokens this server holds for the user
//   (android_devices, apple_devices); the answer counts the devices reached
//   (total_android_devices, total_apple_devices) and lists under
//   deleted_devices the tokens the bouncer no longer has, which the server
//   deletes;
// * 5xx, an unreachable bouncer or a timeout: retry later; 4xx carries
//   `{msg, code}` (PUSH_NOTIFICATIONS_DISALLOWED when the plan does not allow
//   pushes).
//
// Roost has no user or organization UUID columns: the UUIDs it sends are
// name-based (RFC 9562 version 5) under the server's registration UUID, so
// they are stable, distinct per user and organization, and say nothing about
// other servers.
import { createHash } from 'node:crypto'
import type { PushBouncerConfig } from '../config.js'
import { SERVICE_VERSION } from '../version.js'
import type { OutboundClient } from '../outbound/index.js'
import { apnsAlert, type PushOutcome, type PushSender, type PushTarget } from './push-target.js'

export const BOUNCER_TOKEN_KIND = { apns: 1, fcm: 2 } as const

/** A name-based UUID (version 5, SHA-1) under the server's registration UUID. */
export function bouncerUuid(orgId: string, name: string): string {
  const hash = createHash('sha1').update(Buffer.from(orgId.replace(/-/g, ''), 'hex')).update(name).digest()
  const bytes = hash.subarray(0, 16)
  bytes[6] = (bytes[6]! & 0x0f) | 0x50
  bytes[8] = (bytes[8]! & 0x3f) | 0x80
  const hex = bytes.toString('hex')
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`
}

export const userUuid = (config: PushBouncerConfig, userId: number) => bouncerUuid(config.orgId, `user:${userId}`)
export const realmUuid = (config: PushBouncerConfig, realmId: number) => bouncerUuid(config.orgId, `realm:${realmId}`)

/** A failed bouncer request; `retryable` for network errors and 5xx, else the bouncer's 4xx `msg` and `code`. */
export class BouncerError extends Error {
  override name = 'BouncerError'
  constructor(
    message: string,
    readonly retryable: boolean,
    readonly status?: number,
    readonly code?: string,
  ) {
    super(message)
  }
}

/** One request to the bouncer: JSON or form body; the parsed answer of a 200, else a BouncerError. */
export async function bouncerRequest(outbound: OutboundClient, config: PushBouncerConfig, endpoint: string, body: { json: object } | { form: Record<string, string | number> }): Promise<Record<string, unknown>> {
  const auth = Buffer.from(`${config.orgId}:${config.orgKey}`).toString('base64')
  const [contentType, text] =
    'json' in body
      ? ['application/json', JSON.stringify(body.json)]
      : ['application/x-www-form-urlencoded', new URLSearchParams(Object.entries(body.form).map(([k, v]) => [k, String(v)])).toString()]
  let answer
  try {
    answer = await outbound.request(`${config.url}/api/v1/remotes/${endpoint}`, {
      method: 'POST',
      headers: { authorization: `Basic ${auth}`, 'content-type': contentType, 'user-agent': `RoostServer/${SERVICE_VERSION}` },
      body: text,
    })
  } catch (error) {
    throw new BouncerError(`${error instanceof Error ? error.message : String(error)} while trying to connect to the push notification bouncer`, true)
  }
  if (answer.status >= 500) throw new BouncerError(`Received ${answer.status} from the push notification bouncer`, true, answer.status)
  let parsed: Record<string, unknown> | undefined
  try {
    parsed = JSON.parse(answer.body) as Record<string, unknown>
  } catch {
    parsed = undefined
  }
  if (answer.status >= 400) {
    const msg = typeof parsed?.msg === 'string' ? parsed.msg : `HTTP ${answer.status}`
    const code = typeof parsed?.code === 'string' ? parsed.code : undefined
    throw new BouncerError(`Push notification bouncer: ${msg}`, false, answer.status, code)
  }
  if (answer.status !== 200 || !parsed) throw new BouncerError(`The push notification bouncer answered HTTP ${answer.status} ${answer.body.slice(0, 200)}`, true, answer.status)
  return parsed
}

/** Upstream's APNs payload for the bouncer: `aps` fields at the top, the data under custom.zulip. */
export function bouncerApnsPayload(payload: Record<string, unknown>): Record<string, unknown> {
  if (payload.event === 'remove') {
    const { zulip_message_id: _legacy, ...zulip } = payload
    return { badge: 0, custom: { zulip } }
  }
  return { alert: apnsAlert(payload), sound: 'default', badge: 0, custom: { zulip: { ...payload, message_ids: [payload.zulip_message_id] } } }
}

export class PushBouncerSender implements PushSender {
  readonly kind = 'bouncer' as const
  constructor(
    private readonly config: PushBouncerConfig,
    private readonly outbound: OutboundClient,
  ) {}

  async send(target: PushTarget, payload: Record<string, unknown>): Promise<PushOutcome> {
    if (target.kind !== 'bouncer') throw new Error(`the bouncer sender got a ${target.kind} target`)
    const answer = await bouncerRequest(this.outbound, this.config, 'push/notify', {
      json: {
        user_uuid: userUuid(this.config, target.id),
        user_id: target.id,
        realm_uuid: realmUuid(this.config, target.realmId),
        apns_payload: bouncerApnsPayload(payload),
        gcm_payload: payload,
        gcm_options: { priority: payload.event === 'remove' ? 'normal' : 'high' },
        android_devices: target.androidDevices,
        apple_devices: target.appleDevices,
      },
    })
    const deleted = answer.deleted_devices as { android_devices?: unknown; apple_devices?: unknown } | undefined
    const list = (v: unknown) => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : [])
    const fcm = list(deleted?.android_devices)
    const apns = list(deleted?.apple_devices)
    return fcm.length + apns.length > 0 ? { gone: { fcm, apns } } : 'sent'
  }
}
