// Typing notifications, both ways, as upstream's apps do. Sending: a `start`
// when the user begins writing to a conversation, again every
// server_typing_started_wait_period_milliseconds while they keep typing, and
// a `stop` after server_typing_stopped_wait_period_milliseconds without a
// keystroke, when the text is emptied, when the conversation changes and when
// the compose box closes. Receiving: a typist is dropped without a `stop`
// after server_typing_started_expiry_period_milliseconds. Time and timers are
// given by the caller (no I/O here).
import { dmKey } from './narrow.js'
import { topicKey, type State } from './state.js'

export type TypingRecipient = { type: 'stream'; streamId: number; topic: string } | { type: 'direct'; userIds: number[] }

export interface TypingWorker {
  now(): number
  send(to: TypingRecipient, op: 'start' | 'stop'): void
  setTimer(fn: () => void, ms: number): unknown
  clearTimer(timer: unknown): void
}

/** Streams and topics compare as upstream's: topics without regard to case; direct recipients as the same set. */
export function sameRecipient(a: TypingRecipient, b: TypingRecipient): boolean {
  if (a.type === 'stream' && b.type === 'stream') return a.streamId === b.streamId && a.topic.toLowerCase() === b.topic.toLowerCase()
  if (a.type === 'direct' && b.type === 'direct') return [...a.userIds].sort().join() === [...b.userIds].sort().join()
  return false
}

/** The sending side's state machine: call `update` on every edit of the text (null: nothing is being written to anyone). */
export class TypingNotifier {
  private current: { to: TypingRecipient; nextStart: number; idle: unknown } | undefined

  constructor(
    private readonly worker: TypingWorker,
    private readonly periods: () => { startedWaitMs: number; stoppedWaitMs: number },
  ) {}

  update(to: TypingRecipient | null): void {
    const { startedWaitMs, stoppedWaitMs } = this.periods()
    if (this.current && to && sameRecipient(to, this.current.to)) {
      const now = this.worker.now()
      if (now >= this.current.nextStart) {
        this.worker.send(this.current.to, 'start')
        this.current.nextStart = now + startedWaitMs
      }
      this.worker.clearTimer(this.current.idle)
      this.current.idle = this.worker.setTimer(() => this.stop(), stoppedWaitMs)
      return
    }
    this.stop()
    if (!to) return
    this.worker.send(to, 'start')
    this.current = { to, nextStart: this.worker.now() + startedWaitMs, idle: this.worker.setTimer(() => this.stop(), stoppedWaitMs) }
  }

  /** The conversation changed (not by a keystroke in the text): a `stop` to the one being written to, if it was another. */
  recipientChanged(to: TypingRecipient | null): void {
    if (this.current && !(to && sameRecipient(to, this.current.to))) this.stop()
  }

  /** Sends the `stop` for the conversation being written to, if any. */
  stop(): void {
    if (!this.current) return
    this.worker.clearTimer(this.current.idle)
    this.worker.send(this.current.to, 'stop')
    this.current = undefined
  }
}

/** The key of a conversation in State.typing. */
export function typingKey(to: TypingRecipient, selfId: number): string {
  return to.type === 'stream' ? `s:${topicKey(to.streamId, to.topic)}` : `d:${dmKey(to.userIds, selfId)}`
}

/** A typing event's conversation. */
export function typingEventRecipient(event: { message_type?: string; stream_id?: number; topic?: string; recipients?: { user_id: number }[] }): TypingRecipient {
  return event.message_type === 'stream' ? { type: 'stream', streamId: event.stream_id ?? 0, topic: event.topic ?? '' } : { type: 'direct', userIds: (event.recipients ?? []).map((r) => r.user_id) }
}

/** Drops a typist (a `stop`, or their `start` expired). */
export function removeTypist(state: State, key: string, userId: number): void {
  const who = state.typing.get(key)
  if (!who?.has(userId)) return
  const rest = new Set(who)
  rest.delete(userId)
  if (rest.size > 0) state.typing.set(key, rest)
  else state.typing.delete(key)
}

export function addTypist(state: State, key: string, userId: number): void {
  state.typing.set(key, new Set(state.typing.get(key) ?? []).add(userId))
}
