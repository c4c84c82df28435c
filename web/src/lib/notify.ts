// Desktop notifications for direct messages and mentions while the app is
// open and not focused (the browser's permission and the user's settings).
import type { AppEvent } from '../model/events.js'
import { store } from './store.js'

export function notifyFor(events: AppEvent[]): void {
  if (typeof Notification === 'undefined' || Notification.permission !== 'granted' || document.hasFocus()) return
  const state = store.snapshot.state
  if (!state) return
  for (const e of events) {
    if (e.type !== 'message' || e.message.sender_id === state.selfId) continue
    const direct = e.message.type === 'private'
    const mentioned = e.flags.some((f) => f === 'mentioned')
    if (direct && state.settings.enable_desktop_notifications === false) continue
    if (!direct && !mentioned) continue
    const text = new DOMParser().parseFromString(e.message.content, 'text/html').body.textContent ?? ''
    new Notification(e.message.sender_full_name, { body: text.slice(0, 200), tag: String(e.message.id) })
  }
}
