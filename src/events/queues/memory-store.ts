// In-process queue store for the embedded single-node mode. Same semantics as
// the Redis store: IDs from a per-queue counter, pruning on acknowledgement,
// backlog caps (events and bytes) that drop the queue, expiry after
// `lifespanSecs` untouched.
import { DEFAULT_EVENT_QUEUE_MAX_BYTES, DEFAULT_EVENT_QUEUE_MAX_EVENTS, DEFAULT_EVENT_QUEUES_PER_USER } from '../../config.js'
import type { BusItem, WireEvent } from '../bus.js'
import { eventBytes, eventsFanOut } from './filter.js'
import { DELETED_QUEUE_MEMORY_SECS, type FetchOutcome, type HeldPoll, type Holder, type QueueDescriptor, type QueuedEvent, type QueueStore, type WakeSignal } from './types.js'
import { heartbeatEvent } from '../schemas/index.js'

interface MemoryQueue {
  desc: QueueDescriptor
  events: QueuedEvent[]
  /** The size of each event of `events` (eventBytes), and their sum. */
  sizes: number[]
  bytes: number
  /** Last issued event ID (-1: none yet). */
  lastId: number
  newestPruned: number
  touchedAt: number
  holder: Holder | undefined
}

const holderKey = (h: Holder): string => `${h.nodeId}|${h.token}`

export class MemoryQueueStore implements QueueStore {
  private readonly queues = new Map<string, MemoryQueue>()
  private readonly byUser = new Map<number, Set<string>>()
  private readonly publicByRealm = new Map<number, Set<string>>()
  private readonly listeners = new Map<string, (signal: WakeSignal) => void>()
  private maxEvents = DEFAULT_EVENT_QUEUE_MAX_EVENTS
  private maxBytes = DEFAULT_EVENT_QUEUE_MAX_BYTES
  private maxPerUser = DEFAULT_EVENT_QUEUES_PER_USER
  private readonly sweeper: NodeJS.Timeout

  constructor(private readonly now: () => number = Date.now) {
    // Frees memory of abandoned queues; correctness does not depend on it (every access checks expiry).
    this.sweeper = setInterval(() => this.sweep(), 30_000)
    this.sweeper.unref()
  }

  setMaxEvents(max: number): void {
    this.maxEvents = max
  }

  setMaxBytes(max: number): void {
    this.maxBytes = max
  }

  setMaxQueuesPerUser(max: number): void {
    this.maxPerUser = max
  }

  private readonly snapshots = new Map<string, { snapshot: string; expiresAt: number }>()

  async setSnapshot(queueId: string, snapshot: string, ttlSecs: number): Promise<void> {
    this.snapshots.set(queueId, { snapshot, expiresAt: this.now() + ttlSecs * 1000 })
  }

  async snapshotOf(queueId: string): Promise<string | null> {
    const entry = this.snapshots.get(queueId)
    if (!entry) return null
    if (entry.expiresAt <= this.now()) {
      this.snapshots.delete(queueId)
      return null
    }
    return entry.snapshot
  }

  async create(desc: QueueDescriptor): Promise<void> {
    this.queues.set(desc.queueId, { desc, events: [], sizes: [], bytes: 0, lastId: -1, newestPruned: -1, touchedAt: this.now(), holder: undefined })
    indexAdd(this.byUser, desc.userId, desc.queueId)
    if (desc.allPublicStreams) indexAdd(this.publicByRealm, desc.realmId, desc.queueId)
    // Over the per-user cap: the oldest go (a set iterates in insertion order, i.e. creation order).
    const own = this.byUser.get(desc.userId)
    if (own && own.size > this.maxPerUser) {
      for (const queueId of [...own]) {
        const q = this.live(queueId)
        if (q && own.size > this.maxPerUser) this.drop(q, true)
      }
    }
  }

  async describe(queueId: string): Promise<QueueDescriptor | null> {
    return this.descriptorOf(queueId)
  }

  descriptorOf(queueId: string): QueueDescriptor | null {
    return this.live(queueId)?.desc ?? null
  }

  fetch(desc: QueueDescriptor, lastEventId: number): FetchOutcome {
    const q = this.live(desc.queueId)
    if (!q) return { kind: 'gone' }
    if (lastEventId < q.newestPruned) return { kind: 'pruned', newestPruned: q.newestPruned }
    if (lastEventId > q.lastId) return { kind: 'ahead' }
    let drop = 0
    while (drop < q.events.length && (q.events[drop] as QueuedEvent).id <= lastEventId) drop++
    if (drop > 0) {
      q.events.splice(0, drop)
      for (const size of q.sizes.splice(0, drop)) q.bytes -= size
    }
    q.newestPruned = lastEventId
    q.touchedAt = this.now()
    return { kind: 'ok', events: q.events.map((e) => structuredClone(e)) }
  }

  async remove(desc: QueueDescriptor): Promise<boolean> {
    const q = this.live(desc.queueId)
    if (!q) return false
    this.deleted.set(desc.queueId, this.now() + DELETED_QUEUE_MEMORY_SECS * 1000)
    this.drop(q, true)
    return true
  }

  /** Queues remove() took away, until when that is remembered (UNIX ms). */
  private readonly deleted = new Map<string, number>()

  async wasDeleted(queueId: string): Promise<boolean> {
    const until = this.deleted.get(queueId)
    return until !== undefined && until > this.now()
  }

  async queuesOf(userId: number): Promise<QueueDescriptor[]> {
    const live = [...(this.byUser.get(userId) ?? [])].flatMap((id) => this.live(id)?.desc ?? [])
    return live.sort((a, b) => a.createdAt - b.createdAt)
  }

  async append(item: BusItem): Promise<void> {
    this.appendNow(item)
  }

  /** Synchronous fan-out (the memory bus calls it from its listener). */
  appendNow(item: BusItem): void {
    const targets = new Set<string>()
    for (const userId of item.userIds) for (const id of this.byUser.get(userId) ?? []) targets.add(id)
    if (item.publicStreamId !== undefined && item.event.type === 'message') {
      for (const id of this.publicByRealm.get(item.realmId) ?? []) targets.add(id)
    }
    // One private copy per distinct outcome, shared (read-only) by the queues that get it, and its size.
    const eventsFor = eventsFanOut(item, (events) => ({ events: events.map((event) => structuredClone(event)), sizes: events.map(eventBytes) }))
    for (const queueId of targets) {
      const q = this.live(queueId)
      if (!q) continue
      const { events, sizes } = eventsFor(q.desc)
      if (events.length > 0) this.push(q, events, sizes)
    }
  }

  async heartbeat(desc: QueueDescriptor): Promise<void> {
    const q = this.live(desc.queueId)
    const event = heartbeatEvent()
    if (q) this.push(q, [event], [eventBytes(event)])
  }

  async park(desc: QueueDescriptor, holder: Holder): Promise<boolean> {
    const q = this.live(desc.queueId)
    if (!q) return false
    const previous = q.holder
    q.holder = holder
    q.touchedAt = this.now()
    if (previous && holderKey(previous) !== holderKey(holder)) {
      this.signal(previous.nodeId, { kind: 'supersede', queueId: desc.queueId, token: previous.token })
    }
    return true
  }

  async unpark(released: HeldPoll[]): Promise<void> {
    for (const { desc, holder } of released) {
      const q = this.queues.get(desc.queueId)
      if (q?.holder && holderKey(q.holder) === holderKey(holder)) q.holder = undefined
    }
  }

  async listen(nodeId: string, onSignal: (signal: WakeSignal) => void): Promise<() => Promise<void>> {
    this.listeners.set(nodeId, onSignal)
    return async () => {
      if (this.listeners.get(nodeId) === onSignal) this.listeners.delete(nodeId)
    }
  }

  close(): void {
    clearInterval(this.sweeper)
  }

  private push(q: MemoryQueue, events: WireEvent[], sizes: number[]): void {
    for (const event of events) q.events.push({ ...event, id: ++q.lastId })
    for (const size of sizes) q.bytes += size
    q.sizes.push(...sizes)
    if (q.events.length > this.maxEvents || q.bytes > this.maxBytes) {
      this.drop(q, true)
      return
    }
    if (q.holder) this.signal(q.holder.nodeId, { kind: 'wake', queueId: q.desc.queueId })
  }

  private signal(nodeId: string, signal: WakeSignal): void {
    const listener = this.listeners.get(nodeId)
    if (listener) queueMicrotask(() => listener(signal))
  }

  private live(queueId: string): MemoryQueue | undefined {
    const q = this.queues.get(queueId)
    if (!q) return undefined
    if (this.now() - q.touchedAt >= q.desc.lifespanSecs * 1000) {
      this.drop(q, false)
      return undefined
    }
    return q
  }

  private drop(q: MemoryQueue, wakeHolder: boolean): void {
    this.queues.delete(q.desc.queueId)
    this.snapshots.delete(q.desc.queueId)
    indexRemove(this.byUser, q.desc.userId, q.desc.queueId)
    indexRemove(this.publicByRealm, q.desc.realmId, q.desc.queueId)
    // A held poll re-reads: BAD_EVENT_QUEUE_ID, or no events when remove() deleted the queue.
    if (wakeHolder && q.holder) this.signal(q.holder.nodeId, { kind: 'wake', queueId: q.desc.queueId })
  }

  private sweep(): void {
    for (const queueId of [...this.queues.keys()]) this.live(queueId)
    const now = this.now()
    for (const [queueId, until] of this.deleted) if (until <= now) this.deleted.delete(queueId)
  }
}

function indexAdd(index: Map<number, Set<string>>, key: number, queueId: string): void {
  let set = index.get(key)
  if (!set) index.set(key, (set = new Set()))
  set.add(queueId)
}

function indexRemove(index: Map<number, Set<string>>, key: number, queueId: string): void {
  const set = index.get(key)
  if (!set) return
  set.delete(queueId)
  if (set.size === 0) index.delete(key)
}
