// What one node knows of the queues it has read from Redis, so that a poll is
// answered without a round trip when the node already holds the answer.
//
// A read (FETCH) registers the node as a watcher of the queue, atomically
// with the read; from then on every append to the queue sends the node the
// appended events, and the queue's removal or drop sends it a wake-up. So the
// node can keep, for each queue it read, its unacknowledged events: what the
// read returned plus what later arrived, as long as the IDs follow on. The
// state stays true until a wake-up without events, a gap, or the time the
// queue may have expired: its TTL was refreshed by the read (or a later
// touch), so it lives at least until then plus its lifespan.
//
// A ticket taken before a read tells whether anything arrived for the queue
// while the read was in flight (then its result is not kept: the read may or
// may not include it), and a dropped subscription forgets everything, since
// messages may have been lost while it was down. Memory is bounded: past
// MAX_EVENTS_PER_QUEUE or MAX_EVENTS in all, states are forgotten instead of
// growing, and reads go to Redis.
import type { QueuedEvent } from './types.js'

export interface KnownState {
  /** Last event ID the queue issued. */
  issued: number
  /** Newest acknowledged event ID. */
  pruned: number
  /** The events after `pruned`, up to `issued`, in order. */
  events: QueuedEvent[]
  /** UNIX ms until which the queue is certainly alive. */
  aliveUntil: number
}

interface Entry {
  changes: number
  state: KnownState | undefined
}

export interface Ticket {
  queueId: string
  entry: Entry
  changes: number
  epoch: number
}

const MAX_ENTRIES = 100_000
const MAX_EVENTS_PER_QUEUE = 100
const MAX_EVENTS = 50_000

export class KnownStates {
  private readonly entries = new Map<string, Entry>()
  private epoch = 0
  private live = false
  /** Events held in all states. */
  private held = 0

  /** Whether this node's signals reach it (the subscription is active). */
  get listening(): boolean {
    return this.live
  }

  /** Taken before a read from Redis. */
  ticket(queueId: string): Ticket {
    let entry = this.entries.get(queueId)
    if (!entry) {
      if (this.entries.size >= MAX_ENTRIES) {
        const oldest = this.entries.keys().next().value
        if (oldest !== undefined) this.forget(oldest)
      }
      entry = { changes: 0, state: undefined }
      this.entries.set(queueId, entry)
    }
    return { queueId, entry, changes: entry.changes, epoch: this.epoch }
  }

  /** After the read: keeps its result when nothing arrived for the queue (and no reconnection happened) in between. */
  settle(ticket: Ticket, state: KnownState): void {
    const { entry } = ticket
    if (!this.live || ticket.epoch !== this.epoch || entry.changes !== ticket.changes || this.entries.get(ticket.queueId) !== entry) return
    if (state.events.length > MAX_EVENTS_PER_QUEUE || this.held + state.events.length > MAX_EVENTS) return
    this.setState(entry, state)
  }

  /** The state while it is certainly still true at `now`. */
  lookup(queueId: string, now: number): KnownState | undefined {
    if (!this.live) return undefined
    const state = this.entries.get(queueId)?.state
    return state && now < state.aliveUntil ? state : undefined
  }

  /** A poll answered from memory acknowledged the events up to `upTo`. */
  acknowledge(queueId: string, upTo: number): void {
    const state = this.entries.get(queueId)?.state
    if (!state || upTo <= state.pruned || upTo > state.issued) return
    const before = state.events.length
    state.events = state.events.filter((e) => e.id > upTo)
    this.held -= before - state.events.length
    state.pruned = upTo
  }

  /**
   * Another node pruned the queue up to `upTo`: a read in flight is not kept
   * (it may predate the prune), and the state drops the pruned events, so a
   * poll with an older ID goes to Redis (which answers that it was pruned).
   */
  prunedElsewhere(queueId: string, upTo: number): void {
    const entry = this.entries.get(queueId)
    if (!entry) return
    entry.changes++
    const state = entry.state
    if (!state || upTo <= state.pruned) return
    if (upTo <= state.issued) this.acknowledge(queueId, upTo)
    else this.setState(entry, undefined)
  }

  /** A touch refreshed the queue's TTL. */
  extend(queueId: string, aliveUntil: number): void {
    const state = this.entries.get(queueId)?.state
    if (state && aliveUntil > state.aliveUntil) state.aliveUntil = aliveUntil
  }

  /**
   * `count` events appended to the queue, the first with ID `firstId`: kept
   * when they follow on from the state, ignored when the state has them
   * already (the publishing node applies its own appends before their
   * message arrives). `events` is called only when they are kept.
   */
  appended(queueId: string, firstId: number, count: number, events: () => QueuedEvent[]): void {
    const entry = this.entries.get(queueId)
    if (!entry) return
    entry.changes++
    const state = entry.state
    if (!state) return
    if (firstId + count - 1 <= state.issued) return
    if (state.issued === firstId - 1 && state.events.length + count <= MAX_EVENTS_PER_QUEUE && this.held + count <= MAX_EVENTS) {
      state.events.push(...events())
      state.issued = firstId + count - 1
      this.held += count
    } else {
      this.setState(entry, undefined)
    }
  }

  /** Something changed that the node was not told: forget the queue's state. */
  woken(queueId: string): void {
    const entry = this.entries.get(queueId)
    if (!entry) return
    entry.changes++
    this.setState(entry, undefined)
  }

  forget(queueId: string): void {
    const entry = this.entries.get(queueId)
    if (!entry) return
    this.setState(entry, undefined)
    this.entries.delete(queueId)
  }

  /** The subscription came up (true) or went down (false): forget everything either way. */
  reset(live: boolean): void {
    this.epoch++
    this.live = live
    this.entries.clear()
    this.held = 0
  }

  private setState(entry: Entry, state: KnownState | undefined): void {
    this.held += (state?.events.length ?? 0) - (entry.state?.events.length ?? 0)
    entry.state = state
  }
}
