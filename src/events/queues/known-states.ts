// What one node knows of the queues it has read from Redis, so that a poll of
// a queue with nothing new is answered without a round trip.
//
// A read (FETCH) registers the node as a watcher of the queue, atomically
// with the read; from then on every append to the queue, its removal and its
// drop for exceeding the backlog cap send the node a wake-up. So what the read
// returned (last issued and newest acknowledged IDs) stays true until a
// wake-up for that queue arrives, or until the queue may have expired: its
// TTL was refreshed by the read (or a later touch), so it lives at least until
// then plus its lifespan. A ticket taken before the read tells whether a
// wake-up arrived while the read was in flight (then nothing is remembered),
// and a dropped subscription forgets everything, since wake-ups may have been
// lost while it was down.

export interface KnownState {
  /** Last event ID the queue issued. */
  issued: number
  /** Newest acknowledged (pruned) event ID. */
  pruned: number
  /** UNIX ms until which the queue is certainly alive. */
  aliveUntil: number
}

interface Entry {
  wakes: number
  state: KnownState | undefined
}

export interface Ticket {
  queueId: string
  entry: Entry
  wakes: number
  epoch: number
}

const MAX_ENTRIES = 100_000

export class KnownStates {
  private readonly entries = new Map<string, Entry>()
  private epoch = 0
  private live = false

  /** Whether wake-ups reach this node (the subscription is active). */
  get listening(): boolean {
    return this.live
  }

  /** Taken before a read from Redis. */
  ticket(queueId: string): Ticket {
    let entry = this.entries.get(queueId)
    if (!entry) {
      if (this.entries.size >= MAX_ENTRIES) {
        const oldest = this.entries.keys().next().value
        if (oldest !== undefined) this.entries.delete(oldest)
      }
      entry = { wakes: 0, state: undefined }
      this.entries.set(queueId, entry)
    }
    return { queueId, entry, wakes: entry.wakes, epoch: this.epoch }
  }

  /** After the read: remembers its result when no wake-up (and no reconnection) came in between. */
  settle(ticket: Ticket, state: KnownState): void {
    const { entry } = ticket
    if (!this.live || ticket.epoch !== this.epoch || entry.wakes !== ticket.wakes || this.entries.get(ticket.queueId) !== entry) return
    entry.state = state
  }

  /** The remembered state while it is certainly still true at `now`. */
  lookup(queueId: string, now: number): KnownState | undefined {
    if (!this.live) return undefined
    const state = this.entries.get(queueId)?.state
    return state && now < state.aliveUntil ? state : undefined
  }

  /** A touch refreshed the queue's TTL. */
  extend(queueId: string, aliveUntil: number): void {
    const state = this.entries.get(queueId)?.state
    if (state && aliveUntil > state.aliveUntil) state.aliveUntil = aliveUntil
  }

  /** A wake-up for the queue: something changed. */
  woken(queueId: string): void {
    const entry = this.entries.get(queueId)
    if (!entry) return
    entry.wakes++
    entry.state = undefined
  }

  forget(queueId: string): void {
    this.entries.delete(queueId)
  }

  /** The subscription came up (true) or went down (false): forget everything either way. */
  reset(live: boolean): void {
    this.epoch++
    this.live = live
    this.entries.clear()
  }
}
