// The app's service worker, served at /sw.js (scope: the whole app; a classic
// script: it imports only model/push.ts, which the page does not). It shows
// each Web Push that Roost sends (the server decides who gets one, by the
// user's notification settings) as a notification, closes the notifications
// of messages that were read elsewhere (removal notices), and on a click opens
// the message's conversation: in an open app window (told by postMessage, then
// focused) or in a new one.
import { noticeFor, removedMessageIds, type PushPayload } from './model/push.js'

// The few service-worker types used here (the WebWorker lib cannot be loaded beside the DOM one).
interface ExtendableEvent extends Event { waitUntil(p: Promise<unknown>): void }
interface PushEvent extends ExtendableEvent { data: { json(): unknown } | null }
interface ShownNotification { data: { messageId?: number; hash?: string } | null; close(): void }
interface NotificationClickEvent extends ExtendableEvent { notification: ShownNotification }
interface WindowClient { url: string; focus(): Promise<unknown>; postMessage(message: unknown): void }
interface Scope {
  location: Location
  registration: { showNotification(title: string, options: NotificationOptions): Promise<void>; getNotifications(): Promise<ShownNotification[]> }
  clients: { claim(): Promise<void>; matchAll(options: { type: 'window'; includeUncontrolled: boolean }): Promise<WindowClient[]>; openWindow(url: string): Promise<unknown> }
  skipWaiting(): Promise<void>
  addEventListener(type: 'install' | 'activate', listener: (e: ExtendableEvent) => void): void
  addEventListener(type: 'push', listener: (e: PushEvent) => void): void
  addEventListener(type: 'notificationclick', listener: (e: NotificationClickEvent) => void): void
}
const worker = self as unknown as Scope

/** The message an app window receives when a notification is clicked. */
const OPEN_NARROW = 'roost-open-narrow'

worker.addEventListener('install', (e) => e.waitUntil(worker.skipWaiting()))
worker.addEventListener('activate', (e) => e.waitUntil(worker.clients.claim()))

worker.addEventListener('push', (e) => {
  let payload: PushPayload = {}
  try {
    payload = (e.data?.json() ?? {}) as PushPayload
  } catch {
    /* not JSON: nothing to show */
  }
  e.waitUntil(onPush(payload))
})

async function onPush(payload: PushPayload): Promise<void> {
  const removed = removedMessageIds(payload)
  if (removed.length > 0) {
    for (const n of await worker.registration.getNotifications()) if (n.data?.messageId !== undefined && removed.includes(n.data.messageId)) n.close()
    return
  }
  const notice = noticeFor(payload)
  if (!notice) return
  await worker.registration.showNotification(notice.title, { body: notice.body, tag: notice.tag, icon: notice.icon, data: { messageId: notice.messageId, hash: notice.hash } })
}

worker.addEventListener('notificationclick', (e) => {
  e.notification.close()
  e.waitUntil(open(e.notification.data?.hash ?? ''))
})

async function open(hash: string): Promise<void> {
  const windows = await worker.clients.matchAll({ type: 'window', includeUncontrolled: true })
  const app = windows.find((c) => new URL(c.url).origin === worker.location.origin)
  if (!app) {
    await worker.clients.openWindow(`/${hash}`)
    return
  }
  app.postMessage({ type: OPEN_NARROW, hash })
  // Focusing needs the click's user activation; a window that cannot be focused still shows the conversation.
  await app.focus().catch(() => undefined)
}
