// Notifications of new messages while the app is open.
// Desktop notifications while the window is not focused (the browser's
// permission and the user's settings): direct messages, mentions, and
// messages in channels whose desktop notifications are on (the
// subscription's desktop_notifications, else the user's
// enable_stream_desktop_notifications), unless the channel or topic or the
// sender is muted.
// Sounds, focused or not, as upstream plays them (model/sounds.ts), at most
// one per batch of events. Upstream plays none for a message read on arrival
// (shown in the focused window's open view): a message of the open narrow
// waits until the view has drawn it (two animation frames) and plays only if
// it is neither read nor on screen, where the view marks it read.
import { tick } from 'svelte'
import type { AppEvent, MessageEvent } from '../model/events.js'
import { matches } from '../model/narrow.js'
import { notifiesDesktop } from '../model/notifications.js'
import { chosenSound, soundFor } from '../model/sounds.js'
import type { State } from '../model/state.js'
import { readOrSeen } from './actions.js'
import { playSound, unlockAudioOnGesture } from './sounds.js'
import { store } from './store.js'

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
  if (!notifiesDesktop(state, e)) return
  const text = new DOMParser().parseFromString(e.message.content, 'text/html').body.textContent ?? ''
  new Notification(e.message.sender_full_name, { body: text.slice(0, 200), tag: String(e.message.id) })
}
