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
// messages may have been lost while it was down. Memory is bounded in events
// and in bytes: past MAX_EVENTS_PER_QUEUE or MAX_BYTES_PER_QUEUE for one
// queue, or MAX_EVENTS or MAX_BYTES in all, states are forgotten instead of
// growing, and reads go to Redis. An event's size is the length of its JSON
// as Redis holds it, which the caller passes beside the events.
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
  /** The JSON length of each of state.events, in the same order. */
  sizes: number[]
  /** The sum of `sizes`. */
  bytes: number
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
/** JSON characters of one queue's kept events (1 MiB). */
export const MAX_BYTES_PER_QUEUE = 1024 * 1024
/** JSON characters of all kept events (128 MiB). */
export const MAX_BYTES = 128 * 1024 * 1024

const sum = (sizes: readonly number[]): number => sizes.reduce((a, b) => a + b, 0)

export class KnownStates {
  private readonly entries = new Map<string, Entry>()
  private epoch = 0
  private live = false
  /** Events held in all states. */
  private held = 0
  /** JSON characters of the events held in all states. */
  private heldBytes = 0

  /** Events and JSON characters held in all states (for tests and metrics). */
  get usage(): { events: number; bytes: number } {
    return { events: this.held, bytes: this.heldBytes }
  }

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
      entry = { changes: 0, state: undefined, sizes: [], bytes: 0 }
      this.entries.set(queueId, entry)
    }
    return { queueId, entry, changes: entry.changes, epoch: this.epoch }
  }

  /**
   * After the read: keeps its result when nothing arrived for the queue (and
   * no reconnection happened) in between, and it fits the bounds. `sizes`
   * are the JSON lengths of `state.events`.
   */
  settle(ticket: Ticket, state: KnownState, sizes: readonly number[]): void {
    const { entry } = ticket
    if (!this.live || ticket.epoch !== this.epoch || entry.changes !== ticket.changes || this.entries.get(ticket.queueId) !== entry) return
    const bytes = sum(sizes)
    if (!this.fits(entry, state.events.length, bytes)) return
    this.setState(entry, state, [...sizes], bytes)
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
    const entry = this.entries.get(queueId) as Entry
    const before = state.events.length
    state.events = state.events.filter((e) => e.id > upTo)
    const removed = before - state.events.length
    const freed = sum(entry.sizes.splice(0, removed))
    entry.bytes -= freed
    this.held -= removed
    this.heldBytes -= freed
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
   * Events appended to the queue, the first with ID `firstId`, `sizes` their
   * JSON lengths: kept when they follow on from the state and fit the
   * bounds, ignored when the state has them already (the publishing node
   * applies its own appends before their message arrives). `events` is
   * called only when they are kept.
   */
  appended(queueId: string, firstId: number, sizes: readonly number[], events: () => QueuedEvent[]): void {
    const count = sizes.length
    const entry = this.entries.get(queueId)
    if (!entry) return
    entry.changes++
    const state = entry.state
    if (!state) return
    if (firstId + count - 1 <= state.issued) return
    const bytes = sum(sizes)
    if (state.issued === firstId - 1 && this.fits(entry, state.events.length + count, entry.bytes + bytes)) {
      state.events.push(...events())
      entry.sizes.push(...sizes)
      entry.bytes += bytes
      state.issued = firstId + count - 1
      this.held += count
      this.heldBytes += bytes
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
    this.heldBytes = 0
  }

  /** Whether the entry may hold `events` events of `bytes` JSON characters in all, given what the others hold. */
  private fits(entry: Entry, events: number, bytes: number): boolean {
    const othersEvents = this.held - (entry.state?.events.length ?? 0)
    const othersBytes = this.heldBytes - entry.bytes
    return events <= MAX_EVENTS_PER_QUEUE && bytes <= MAX_BYTES_PER_QUEUE && othersEvents + events <= MAX_EVENTS && othersBytes + bytes <= MAX_BYTES
  }

  private setState(entry: Entry, state: KnownState | undefined, sizes: number[] = [], bytes = 0): void {
    this.held += (state?.events.length ?? 0) - (entry.state?.events.length ?? 0)
    this.heldBytes += bytes - entry.bytes
    entry.state = state
    entry.sizes = sizes
    entry.bytes = bytes
  }
}
