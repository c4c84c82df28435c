// Web Push in this browser: registers the service worker (/sw.js, web/src/sw.ts),
// subscribes with the server's VAPID public key (`webpush_vapid_public_key`
// of /server_settings) and gives the subscription to the server
// (POST /users/me/webpush_subscription); turning it off unsubscribes and
// tells the server (DELETE). The choice is remembered in this browser, and the
// subscription is given again at every start (the server keeps one per
// endpoint). A click on a notification opens its conversation here.
import { call } from '../api/client.js'

const KEY = 'roost.push'
const OPEN_NARROW = 'roost-open-narrow'

export type PushState = 'on' | 'off' | 'unsupported' | 'unconfigured' | 'denied'

export const pushSupported = (): boolean => 'serviceWorker' in navigator && 'PushManager' in window && typeof Notification !== 'undefined'
export const pushChosen = (): boolean => localStorage.getItem(KEY) === 'on'

function keyBytes(base64url: string): Uint8Array<ArrayBuffer> {
  const raw = atob(base64url.replace(/-/g, '+').replace(/_/g, '/').padEnd(Math.ceil(base64url.length / 4) * 4, '='))
  const out = new Uint8Array(new ArrayBuffer(raw.length))
  for (let i = 0; i < raw.length; i++) out[i] = raw.charCodeAt(i)
  return out
}

async function vapidKey(): Promise<string | null> {
  const settings = await call<{ webpush_vapid_public_key?: string | null }>('GET', '/server_settings')
  return settings.webpush_vapid_public_key ?? null
}

export function registerWorker(): Promise<ServiceWorkerRegistration> {
  return navigator.serviceWorker.register('/sw.js', { scope: '/' })
}

/** Subscribes this browser (asking for the notification permission when needed). Throws the browser's or the server's error. */
export async function enablePush(): Promise<PushState> {
  if (!pushSupported()) return 'unsupported'
  const key = await vapidKey()
  if (!key) return 'unconfigured'
  const registration = await registerWorker()
  if ((await Notification.requestPermission()) !== 'granted') return 'denied'
  await navigator.serviceWorker.ready
  const subscription = (await registration.pushManager.getSubscription()) ?? (await registration.pushManager.subscribe({ userVisibleOnly: true, applicationServerKey: keyBytes(key) }))
  const json = subscription.toJSON()
  await call('POST', '/users/me/webpush_subscription', { endpoint: json.endpoint ?? subscription.endpoint, p256dh: json.keys?.p256dh ?? '', auth: json.keys?.auth ?? '' })
  localStorage.setItem(KEY, 'on')
  return 'on'
}

/** Unsubscribes this browser, here and on the server. */
export async function disablePush(): Promise<PushState> {
  localStorage.removeItem(KEY)
  if (!pushSupported()) return 'unsupported'
  const registration = await navigator.serviceWorker.getRegistration('/')
  const subscription = await registration?.pushManager.getSubscription()
  if (subscription) {
    await call('DELETE', '/users/me/webpush_subscription', { endpoint: subscription.endpoint }).catch(() => undefined)
    await subscription.unsubscribe()
  }
  return 'off'
}

/** At the app's start: a notification clicked opens its conversation; a browser that chose push subscribes again. */
export function startPush(): void {
  if (!pushSupported()) return
  navigator.serviceWorker.addEventListener('message', (e: MessageEvent<{ type?: string; hash?: string }>) => {
    if (e.data?.type === OPEN_NARROW && typeof e.data.hash === 'string' && e.data.hash.startsWith('#')) window.location.hash = e.data.hash
  })
  if (pushChosen() && Notification.permission === 'granted') void enablePush().catch(() => undefined)
}
