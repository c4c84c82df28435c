// Reporting the user's presence as upstream's web app does: active while the
// window has had the focus or input in the last 5 minutes, idle after; a
// report with everyone's changes every server_presence_ping_interval_seconds,
// and one at once (ping only) at start and when the user comes back.
import { reportPresence } from '../api/presence.js'
import { applyPresences } from '../model/presence.js'
import { store } from './store.js'

/** No input for this long marks the user idle (sent with the next periodic report). */
const IDLE_AFTER_MS = 5 * 60 * 1000
const INPUT_EVENTS = ['mousemove', 'mousedown', 'keydown', 'wheel', 'touchstart'] as const

/** Starts reporting (after register); returns the function that stops it. */
export function startPresence(): () => void {
  // When the user last gave input (or focused the window); a window opened without the focus starts idle.
  let lastInput = document.hasFocus() ? Date.now() : -Infinity
  let newUserInput = true
  const idle = () => Date.now() - lastInput >= IDLE_AFTER_MS

  function send(pingOnly: boolean): void {
    const state = store.snapshot.state
    if (!state) return
    reportPresence({ status: idle() ? 'idle' : 'active', pingOnly, newUserInput, lastUpdateId: state.presenceLastUpdateId })
      .then((answer) => {
        newUserInput = false
        if (!pingOnly) store.change((s) => s.state && applyPresences(s.state, answer))
      })
      .catch(() => undefined)
  }
  /** Back from idle: the server hears it at once rather than at the next periodic report. */
  function markActive(): void {
    const wasIdle = idle()
    lastInput = Date.now()
    if (wasIdle) send(true)
  }
  function onInput(): void {
    newUserInput = true
    markActive()
  }

  window.addEventListener('focus', markActive)
  for (const type of INPUT_EVENTS) window.addEventListener(type, onInput, { passive: true })
  const seconds = store.snapshot.state?.timing.presencePingSeconds ?? 60
  const interval = setInterval(() => send(false), seconds * 1000)
  send(true)
  return () => {
    clearInterval(interval)
    window.removeEventListener('focus', markActive)
    for (const type of INPUT_EVENTS) window.removeEventListener(type, onInput)
  }
}
