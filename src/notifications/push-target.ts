// What a push sender is given and answers (notifications/push-senders.ts,
// notifications/push-bouncer.ts) and upstream's APNs alert, which the direct
// APNs sender and the bouncer both build. Its own file, so that the senders
// and the bouncer import it rather than each other.

/** A target with a row of its own counts its consecutive failures and backs off (notifications/push-delivery.ts). */
export interface TargetBackoff {
  failures?: number
  /** Not sent to before this time. */
  retryAt?: Date | null
}

export interface WebPushTarget extends TargetBackoff {
  kind: 'webpush'
  id: number
  endpoint: string
  p256dh: string
  auth: string
}

export interface FcmTarget extends TargetBackoff {
  kind: 'fcm'
  id: number
  token: string
}

export interface ApnsTarget extends TargetBackoff {
  kind: 'apns'
  id: number
  token: string
  /** The app's bundle ID given at registration (null: APNS_TOPIC). */
  appId: string | null
}

export type PushTarget = WebPushTarget | FcmTarget | ApnsTarget | BouncerTarget
/** 'invalid': the target is gone; `gone`: sent, and the bouncer no longer knows these tokens of the user. */
export type PushOutcome = 'sent' | 'invalid' | { gone: { fcm: string[]; apns: string[] } }

export interface PushSender {
  readonly kind: PushTarget['kind']
  /** Sends one payload (upstream's data payload, JSON) to one target. */
  send(target: PushTarget, payload: Record<string, unknown>): Promise<PushOutcome>
}

/** All of one user's mobile devices, reached with one `push/notify`. */
export interface BouncerTarget {
  kind: 'bouncer'
  /** The user's ID (the target has no row of its own). */
  id: number
  realmId: number
  androidDevices: string[]
  appleDevices: string[]
}

/** Upstream's APNs alert: the conversation as title, the sender as subtitle where the title does not say it. */
export function apnsAlert(payload: Record<string, unknown>): { title: string; subtitle: string; body: string } {
  const sender = String(payload.sender_full_name ?? '')
  const body = String(payload.content ?? '')
  if (payload.recipient_type === 'stream') return { title: `#${String(payload.stream)} > ${String(payload.topic)}`, subtitle: `${sender}:`, body }
  if (typeof payload.pm_users === 'string') return { title: 'Group DM', subtitle: `${sender}:`, body }
  return { title: sender, subtitle: '', body }
}
