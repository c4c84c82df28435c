// Desktop notifications while the app is open and not focused (the
// browser's permission and the user's settings): direct messages, mentions,
// and messages in channels whose desktop notifications are on (the
// subscription's desktop_notifications, else the user's
// enable_stream_desktop_notifications), unless the channel or topic is muted.
import type { AppEvent } from '../model/events.js'
import { store } from './store.js'
import { effectiveNotification } from '../model/notifications.js'
import { isTopicMuted } from '../model/unread.js'

export function notifyFor(events: AppEvent[]): void {
  if (typeof Notification === 'undefined' || Notification.permission !== 'granted' || document.hasFocus()) return
  const state = store.snapshot.state
  if (!state) return
  for (const e of events) {
    if (e.type !== 'message' || e.message.sender_id === state.selfId) continue
    const direct = e.message.type === 'private'
    const mentioned = e.flags.some((f) => f === 'mentioned')
    if (direct && state.settings.enable_desktop_notifications === false) continue
    const sub = e.message.type === 'stream' && e.message.stream_id !== undefined ? state.subscriptions.get(e.message.stream_id) : undefined
    const channelOn = sub !== undefined && !sub.is_muted && !isTopicMuted(state, sub.stream_id, e.message.subject) && effectiveNotification(state, sub, 'desktop_notifications')
    if (!direct && !mentioned && !channelOn) continue
    const text = new DOMParser().parseFromString(e.message.content, 'text/html').body.textContent ?? ''
    new Notification(e.message.sender_full_name, { body: text.slice(0, 200), tag: String(e.message.id) })
  }
}
