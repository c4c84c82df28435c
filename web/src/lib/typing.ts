// Typing notifications with the browser's clock and timers: the compose box's
// notifier (model/typing.ts TypingNotifier sending POST /typing), and the
// expiry of others' typing when no `stop` comes.
import { setTyping } from '../api/messages.js'
import type { AppEvent } from '../model/events.js'
import { removeTypist, typingEventRecipient, typingKey, TypingNotifier, type TypingRecipient } from '../model/typing.js'
import { store } from './store.js'

/** A notifier for one compose box, honouring the user's settings for sending typing notifications. */
export function typingNotifier(): TypingNotifier {
  const allowed = (to: TypingRecipient) => store.snapshot.state?.settings[to.type === 'direct' ? 'send_private_typing_notifications' : 'send_stream_typing_notifications'] !== false
  return new TypingNotifier(
    {
      now: () => Date.now(),
      send: (to, op) => {
        if (allowed(to)) void setTyping(to, op).catch(() => undefined)
      },
      setTimer: (fn, ms) => setTimeout(fn, ms),
      clearTimer: (timer) => clearTimeout(timer as ReturnType<typeof setTimeout>),
    },
    () => {
      const timing = store.snapshot.state?.timing
      return { startedWaitMs: timing?.typingStartedWaitMs ?? 10_000, stoppedWaitMs: timing?.typingStoppedWaitMs ?? 5_000 }
    },
  )
}

const expiries = new Map<string, ReturnType<typeof setTimeout>>()

/** After each applied batch: a `start` drops its typist after the expiry period unless another `start` or a `stop` comes first. */
export function watchTypists(events: AppEvent[]): void {
  const state = store.snapshot.state
  if (!state) return
  for (const event of events) {
    if (event.type !== 'typing') continue
    const key = typingKey(typingEventRecipient(event), state.selfId)
    const userId = event.sender.user_id
    const id = `${userId}|${key}`
    clearTimeout(expiries.get(id))
    expiries.delete(id)
    if (event.op !== 'start') continue
    expiries.set(id, setTimeout(() => {
      expiries.delete(id)
      store.change((s) => s.state && removeTypist(s.state, key, userId))
    }, state.timing.typingExpiryMs))
  }
}
