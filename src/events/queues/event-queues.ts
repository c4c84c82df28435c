// What the HTTP layer sees of the event system: register, fetch (long-poll),
// delete, drain. Long-poll waiters live on the node that holds the request;
// they are woken by the queue store's signals, never by polling.
import { committedBefore, parsePgSnapshot } from '../../domain/pg-snapshot.js'
import { XID_FIELD } from './filter.js'
import { randomUUID } from 'node:crypto'
import { ApiError, badEventQueueId, badRequest } from '../../errors.js'
import type { NarrowTerm } from '../../domain/narrow.js'
import {
  MAX_QUEUE_LIFESPAN_SECS,
  NO_CAPABILITIES,
  type ClientCapabilities,
  type FetchOutcome,
  type HeldPoll,
  type Holder,
  type QueueDescriptor,
  type QueuedEvent,
  type QueueStore,
  type WakeSignal,
} from './types.js'

export interface RegisterQueueInput {
  userId: number
  userEmail: string
  realmId: number
  eventTypes?: string[] | null
  narrow?: NarrowTerm[]
  allPublicStreams?: boolean
  capabilities?: Partial<ClientCapabilities>
  applyMarkdown?: boolean
  clientExtavatar?: boolean
  slimPresence?: boolean
  /** queue_lifespan_secs; 0 or absent → the configured default; capped at 7 days. */
  lifespanSecs?: number
}

export interface GetEventsInput {
  queueId: string
  userId: number
  lastEventId: number
  dontBlock?: boolean
  /** Aborted when the client goes away: the poll ends, the queue stays. */
  signal?: PollAbort
}

/**
 * Whether a long-poll's client went away (http/routes/events.ts closeSignal):
 * what a poll needs of an AbortSignal, without one. An AbortController and
 * its EventTarget listeners per held poll were ~1 % of a node's CPU in the
 * load simulation's profile (bench/README.md).
 */
export interface PollAbort {
  readonly aborted: boolean
  /** Calls `fn` once when the client goes away; returns what stops that. */
  onAbort(fn: () => void): () => void
}

export interface EventQueuesOptions {
  nodeId: string
  defaultLifespanSecs: number
  heartbeatSecs: number
  onError?: (error: unknown) => void
}

type WaiterSignal = 'wake' | 'supersede' | 'heartbeat' | 'drain' | 'abort'
const PRIORITY: Record<WaiterSignal, number> = { wake: 0, heartbeat: 1, supersede: 2, abort: 3, drain: 4 }

/** One held long-poll: a latch of the strongest signal received since the last wait. */
class Waiter {
  private pending: WaiterSignal | undefined
  private resolve: ((s: WaiterSignal) => void) | undefined
  constructor(readonly token: string) {}

  signal(s: WaiterSignal): void {
    if (this.resolve) {
      const r = this.resolve
      this.resolve = undefined
      r(s)
    } else if (this.pending === undefined || PRIORITY[s] > PRIORITY[this.pending]) {
      this.pending = s
    }
  }

  next(): Promise<WaiterSignal> {
    if (this.pending !== undefined) {
      const s = this.pending
      this.pending = undefined
      return Promise.resolve(s)
    }
    return new Promise((resolve) => (this.resolve = resolve))
  }
}

interface ReadResult {
  events: QueuedEvent[]
  ackOwed?: number
}

function ownDescriptor(desc: QueueDescriptor | null, queueId: string, userId: number): QueueDescriptor {
  if (!desc || desc.userId !== userId) throw badEventQueueId(queueId)
  return desc
}

export class EventQueues {
  private readonly waiters = new Map<string, Set<Waiter>>()
  private listening: Promise<() => Promise<void>> | undefined
  /** The last listening promise that resolved: while it is `listening`, polls need not await it (an await per poll costs). */
  private listened: Promise<() => Promise<void>> | undefined
  private draining = false

  /** This node's listening has started and succeeded (then polls need not await it). */
  private get isListening(): boolean {
    return this.listening !== undefined && this.listened === this.listening
  }

  constructor(
    readonly store: QueueStore,
    private readonly options: EventQueuesOptions,
  ) {}

  get nodeId(): string {
    return this.options.nodeId
  }

  /** Long-polls this node holds that the store knows about (parked). */
  heldPolls = 0
  /** Queues registered through this node, and events its polls answered with (metrics). */
  registeredQueues = 0
  deliveredEvents = 0

  async register(input: RegisterQueueInput): Promise<QueueDescriptor> {
    const requested = input.lifespanSecs ?? 0
    const desc: QueueDescriptor = {
      queueId: randomUUID(),
      userId: input.userId,
      userEmail: input.userEmail,
      realmId: input.realmId,
      eventTypes: input.eventTypes ?? null,
      narrow: input.narrow ?? [],
      allPublicStreams: input.allPublicStreams ?? false,
      capabilities: { ...NO_CAPABILITIES, ...input.capabilities },
      applyMarkdown: input.applyMarkdown ?? false,
      clientExtavatar: input.clientExtavatar ?? false,
      slimPresence: input.slimPresence ?? false,
      lifespanSecs: requested > 0 ? Math.min(requested, MAX_QUEUE_LIFESPAN_SECS) : this.options.defaultLifespanSecs,
      createdAt: Date.now(),
    }
    await this.store.create(desc)
    this.registeredQueues++
    return desc
  }

  /** The caller's queue, or BAD_EVENT_QUEUE_ID (also for another user's queue). */
  async get(queueId: string, userId: number): Promise<QueueDescriptor> {
    return this.descriptorFor(queueId, userId)
  }

  /** As get(), at once when the store has the descriptor in memory. */
  private descriptorFor(queueId: string, userId: number): QueueDescriptor | Promise<QueueDescriptor> {
    const found = this.store.descriptorOf(queueId)
    return found instanceof Promise ? found.then((desc) => ownDescriptor(desc, queueId, userId)) : ownDescriptor(found, queueId, userId)
  }

  async delete(queueId: string, userId: number): Promise<void> {
    const desc = await this.get(queueId, userId)
    if (!(await this.store.remove(desc))) throw badEventQueueId(queueId)
  }

  /** Events after lastEventId; waits (long-poll) when there are none unless dontBlock. */
  async getEvents(input: GetEventsInput): Promise<QueuedEvent[]> {
    return this.poll(input)
  }

  /**
   * As getEvents(), but a dont_block poll that the store answers from memory
   * (the descriptor and the events) is answered at once, without a promise:
   * the hot path of clients that poll without blocking.
   */
  poll(input: GetEventsInput): QueuedEvent[] | Promise<QueuedEvent[]> {
    const events = input.dontBlock && this.isListening ? this.answerNow(input) : this.waitForEvents(input)
    return events instanceof Promise ? events.then((list) => this.delivered(list)) : this.delivered(events)
  }

  private delivered(events: QueuedEvent[]): QueuedEvent[] {
    for (const event of events) if (event.type !== 'heartbeat') this.deliveredEvents++
    return events
  }

  /** A poll that does not block, once this node listens: a rejected promise, never a throw. */
  private answerNow(input: GetEventsInput): QueuedEvent[] | Promise<QueuedEvent[]> {
    try {
      const desc = this.descriptorFor(input.queueId, input.userId)
      if (desc instanceof Promise) return desc.then((found) => this.readEvents(found, input.lastEventId))
      return this.readEvents(desc, input.lastEventId)
    } catch (error) {
      return Promise.reject(error)
    }
  }

  private readEvents(desc: QueueDescriptor, lastEventId: number): QueuedEvent[] | Promise<QueuedEvent[]> {
    const read = this.read(desc, lastEventId, false)
    return read instanceof Promise ? read.then((r) => r.events) : read.events
  }

  private async waitForEvents(input: GetEventsInput): Promise<QueuedEvent[]> {
    const desc = await this.descriptorFor(input.queueId, input.userId)
    if (!this.isListening) await this.startListening()
    const blocking = () => !input.dontBlock && !this.draining && !input.signal?.aborted
    // A poll that will park leaves an acknowledgement it owes to the park, when the store can do both in one call.
    const first = await this.read(desc, input.lastEventId, blocking() && this.store.ackAndPark !== undefined)
    if (first.events.length > 0) return first.events
    if (!blocking()) return first.ackOwed === undefined ? first.events : this.fetch(desc, input.lastEventId)

    const waiter = new Waiter(randomUUID())
    const holder: Holder = { nodeId: this.options.nodeId, token: waiter.token }
    const set = this.waiters.get(desc.queueId) ?? new Set<Waiter>()
    this.waiters.set(desc.queueId, set)
    set.add(waiter)
    const stopWatchingAbort = input.signal?.onAbort(() => waiter.signal('abort'))
    const heartbeat = setTimeout(() => waiter.signal('heartbeat'), this.options.heartbeatSecs * 1000)
    let parked = false
    try {
      // Mark the poll as held, then read again: an event appended before the mark is
      // seen by this read; one appended after it wakes us.
      if (first.ackOwed !== undefined && this.store.ackAndPark) {
        const outcome = await this.store.ackAndPark(desc, holder, first.ackOwed, this.options.nodeId)
        if (outcome === 'gone') throw badEventQueueId(desc.queueId)
        if (outcome === 'parked') parked = true
        else {
          // The queue moved on elsewhere (another node acknowledged further): read it as any poll does.
          const events = await this.fetch(desc, input.lastEventId)
          if (events.length > 0) return events
        }
      }
      if (!parked && !(await this.store.park(desc, holder))) throw badEventQueueId(desc.queueId)
      parked = true
      this.heldPolls++
      for (;;) {
        const events = await this.fetch(desc, input.lastEventId)
        if (events.length > 0) return events
        switch (await waiter.next()) {
          case 'wake':
            continue
          case 'heartbeat':
            await this.store.heartbeat(desc)
            continue
          case 'supersede':
            // A newer poll took the queue over; answer with what there is (upstream does the same).
            return this.fetch(desc, input.lastEventId)
          case 'drain':
          case 'abort':
            return []
        }
      }
    } catch (error) {
      // Deleted (DELETE /events) while held: upstream finishes the held request with no events.
      if (parked && error instanceof ApiError && error.code === 'BAD_EVENT_QUEUE_ID' && (await this.store.wasDeleted(desc.queueId))) return []
      throw error
    } finally {
      clearTimeout(heartbeat)
      if (parked) this.heldPolls--
      stopWatchingAbort?.()
      set.delete(waiter)
      if (set.size === 0 && this.waiters.get(desc.queueId) === set) this.waiters.delete(desc.queueId)
      this.releaseSoon(desc, holder)
    }
  }

  private releases: HeldPoll[] = []

  /**
   * Releases a poll's mark after the answers of this turn of the event loop
   * are written: a wake-up that answers many polls at once sends their
   * releases together, in one call, after the answers rather than between them.
   */
  private releaseSoon(desc: QueueDescriptor, holder: Holder): void {
    this.releases.push({ desc, holder })
    if (this.releases.length > 1) return
    setImmediate(() => {
      const releases = this.releases
      this.releases = []
      this.store.unpark(releases).catch((error: unknown) => this.options.onError?.(error))
    })
  }

  /** Overload (http/admission.ts): answer every held poll now with a heartbeat; the clients poll again. */
  releaseHeld(): void {
    for (const set of this.waiters.values()) for (const waiter of set) waiter.signal('heartbeat')
  }

  /** Graceful shutdown: answer every held poll with no events (clients retry on another node) and hold no new ones. */
  drain(): void {
    this.draining = true
    for (const set of this.waiters.values()) for (const waiter of set) waiter.signal('drain')
  }

  async close(): Promise<void> {
    this.drain()
    const listening = this.listening
    this.listening = undefined
    if (listening) await (await listening.catch(() => async () => {}))()
  }

  /**
   * Records the database snapshot the register state was read at: events of
   * transactions that committed before it are already in that state, so
   * fetches drop them (they can still arrive after register, since events are
   * published after their commit).
   */
  async recordSnapshot(desc: QueueDescriptor, snapshot: string): Promise<void> {
    await this.store.setSnapshot(desc.queueId, snapshot, desc.lifespanSecs)
  }

  private async withoutSnapshotted(desc: QueueDescriptor, events: QueuedEvent[]): Promise<QueuedEvent[]> {
    const text = await this.store.snapshotOf(desc.queueId)
    const snapshot = text === null ? null : parsePgSnapshot(text)
    const out: QueuedEvent[] = []
    for (const { [XID_FIELD]: xid, ...event } of events) {
      if (snapshot && typeof xid === 'string' && committedBefore(snapshot, xid)) continue
      out.push(event as QueuedEvent)
    }
    return out
  }

  private async fetch(desc: QueueDescriptor, lastEventId: number): Promise<QueuedEvent[]> {
    return (await this.read(desc, lastEventId, false)).events
  }

  /**
   * The events after lastEventId; with `deferAck`, possibly none and the
   * acknowledgement still owed (see QueueStore.fetch). At once when the store
   * answers at once and no event has a transaction to check; errors are thrown then.
   */
  private read(desc: QueueDescriptor, lastEventId: number, deferAck: boolean): ReadResult | Promise<ReadResult> {
    const outcome = this.store.fetch(desc, lastEventId, this.options.nodeId, deferAck)
    return outcome instanceof Promise ? outcome.then((o) => this.readOutcome(desc, lastEventId, o)) : this.readOutcome(desc, lastEventId, outcome)
  }

  private readOutcome(desc: QueueDescriptor, lastEventId: number, outcome: FetchOutcome): ReadResult | Promise<ReadResult> {
    switch (outcome.kind) {
      case 'ok':
        // Most answers carry no transaction ID to check: no promise for them.
        if (outcome.events.some((e) => e[XID_FIELD] !== undefined)) {
          return this.withoutSnapshotted(desc, outcome.events).then((events) => ({ events, ackOwed: outcome.ackOwed }))
        }
        return { events: outcome.events, ackOwed: outcome.ackOwed }
      case 'gone':
        throw badEventQueueId(desc.queueId)
      case 'pruned':
        throw badRequest(`An event newer than ${lastEventId} has already been pruned!`)
      case 'ahead':
        throw new ApiError(`Event ${lastEventId} was not in this queue`, 'BAD_REQUEST', 400)
    }
  }

  private startListening(): Promise<unknown> {
    if (this.listening) return this.listening
    const listening = this.store.listen(this.options.nodeId, (signal) => this.onSignal(signal))
    this.listening = listening
    // A start that failed (the store unreachable) is tried again by the next poll, never remembered.
    listening.then(
      () => {
        if (this.listening === listening) this.listened = listening
      },
      () => {
        if (this.listening === listening) this.listening = undefined
      },
    )
    return listening
  }

  private onSignal(signal: WakeSignal): void {
    if (signal.kind === 'resync') {
      for (const set of this.waiters.values()) for (const waiter of set) waiter.signal('wake')
      return
    }
    const set = this.waiters.get(signal.queueId)
    if (!set) return
    for (const waiter of set) {
      if (signal.kind === 'wake') waiter.signal('wake')
      else if (waiter.token === signal.token) waiter.signal('supersede')
    }
  }
}
