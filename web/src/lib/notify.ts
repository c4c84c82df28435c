// Notifications of new messages while the app is open.
// Desktop notifications while the window is not focused, with the browser's
// permission, for the messages the user's settings alert of
// (model/notifications.ts, the same decision as for sounds).
// Sounds, focused or not, as upstream plays them (model/sounds.ts), at most
// one per batch of events. Upstream plays none for a message read on arrival
// (shown in the focused window's open view): a message of the open narrow
// waits until the view has drawn it (two animation frames) and plays only if
// it is neither read nor on screen, where the view marks it read.
import { tick } from 'svelte'
import type { AppEvent, MessageEvent } from '../model/events.js'
import { matches } from '../model/narrow.js'
import { alerts } from '../model/notifications.js'
import { chosenSound, soundFor } from '../model/sounds.js'
import type { State } from '../model/state.js'
import { readOrSeen } from './actions.js'
import { playSound, unlockAudioOnGesture } from './sounds.js'
import { store } from './store.js'
import { t } from './strings.js'

/** Prepares sounds: the audio context starts at the user's first gesture while a sound is chosen. Returns the remover. */
export function startSounds(): () => void {
  return unlockAudioOnGesture(() => {
    const state = store.snapshot.state
    return state !== undefined && chosenSound(state) !== undefined
  })
}

export function notifyFor(events: AppEvent[]): void {
  const state = store.snapshot.state
  if (!state) return
  const focused = document.hasFocus()
  let sound: string | undefined
  const inView: { id: number; sound: string }[] = []
  for (const e of events) {
    if (e.type !== 'message') continue
    if (!focused) notifyDesktop(state, e)
    const s = soundFor(state, e)
    if (s === undefined) continue
    if (focused && inOpenView(state, e)) inView.push({ id: e.message.id, sound: s })
    else sound ??= s
  }
  if (sound !== undefined) return playSound(sound)
  if (inView.length > 0) {
    void tick().then(() =>
      requestAnimationFrame(() =>
        requestAnimationFrame(() => {
          const unseen = inView.find((m) => !readOrSeen(m.id) && !onScreen(m.id))
          if (unseen) playSound(unseen.sound)
        }),
      ),
    )
  }
}

/** Whether the message's row is at least half visible in the message list: what the view marks read (message-list.svelte). */
function onScreen(id: number): boolean {
  const row = document.querySelector(`.messages [data-id="${id}"]`)
  const list = row?.closest('.messages')
  if (!row || !list) return false
  const r = row.getBoundingClientRect()
  const v = list.getBoundingClientRect()
  const visible = Math.min(r.bottom, v.bottom) - Math.max(r.top, v.top)
  return visible > 0 && visible >= Math.min(r.height, v.height) / 2
}

/** Whether a new message belongs in the open view (its narrow's message list). */
function inOpenView(state: State, e: MessageEvent): boolean {
  const { view, narrow } = store.snapshot
  return view === 'messages' && matches(narrow, { ...e.message, flags: e.flags }, state.selfId) === true
}

function notifyDesktop(state: State, e: MessageEvent): void {
  if (typeof Notification === 'undefined' || Notification.permission !== 'granted') return
  if (!alerts(state, e, 'desktop')) return
  const m = e.message
  const sub = m.type === 'stream' && m.stream_id !== undefined ? state.subscriptions.get(m.stream_id) : undefined
  const title = sub ? t.desktopChannelTitle(m.sender_full_name, sub.name, m.subject) : m.sender_full_name
  // Upstream leaves a direct message's text out unless pm_content_in_desktop_notifications is on.
  const hidden = m.type === 'private' && state.settings.pm_content_in_desktop_notifications === false
  const text = hidden ? t.desktopHiddenDirect(m.sender_full_name) : (new DOMParser().parseFromString(m.content, 'text/html').body.textContent ?? '')
  new Notification(title, { body: text.slice(0, 200), tag: String(m.id) })
}
