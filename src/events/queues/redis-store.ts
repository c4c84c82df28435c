// Redis queue store: any node serves any queue. The publishing node fans an
// item out (filters in JS, one atomic Lua call appends to every target
// queue); the nodes holding or watching a queue are woken by a message on
// their own channel (PUBLISH from the script; on a Redis Cluster with sharded
// pub/sub, SPUBLISH by the node that ran the script, right after its reply).
// A node remembers what it last read of a queue (known-states.ts) and
// answers a poll from memory: with nothing to acknowledge it refreshes the
// queue's TTL in batches; an acknowledgement is written to Redis (and told to
// the other nodes watching the queue) before the answer, so no node can return
// an event another has pruned. Layout: see lua.ts; each queue's events are a
// Redis stream.
//
// Redis Cluster: every script and multi-key command names keys of one hash
// slot (a queue's keys share its tag). With slot grouping on (a cluster
// connection, or `groupBySlot` to run the same code on one server), the
// commands that span queues or users are split per slot: the index reads,
// the descriptor reads and the APPEND chunks. On one server everything is one
// group, so a fan-out costs one SUNION and one APPEND per 25 queues.
import type { RedisClient } from '../../redis-connection.js'
import { DEFAULT_EVENT_QUEUE_MAX_BYTES, DEFAULT_EVENT_QUEUE_MAX_EVENTS, DEFAULT_EVENT_QUEUES_PER_USER } from '../../config.js'
import type { BusItem, WireEvent } from '../bus.js'
import { eventsFanOut } from './filter.js'
import { WakeSender } from './wake-sender.js'
import { eventsFromPairs, queuedEventMaker, RedisSignals } from './redis-signals.js'
import { ACK, APPEND, CREATE, FETCH, INDEX_ADD, PARK, PARK_ACK, REMOVE, TOUCH } from './lua.js'
import { groupBySlot } from './slots.js'
import { DELETED_QUEUE_MEMORY_SECS, type FetchOutcome, type HeldPoll, type Holder, type QueueDescriptor, type QueuedEvent, type QueueStore, type WakeSignal } from './types.js'
import { heartbeatEvent } from '../schemas/index.js'
import type { KnownStates } from './known-states.js'

/**
 * Queues per APPEND call: bounds one script's run time (10–30 µs of Redis
 * time per queue), so the first nodes are woken early in a large fan-out.
 */
const APPEND_CHUNK = 25
/** Releases and parks per PARK_ACK call (one turn's may be more). */
const MARKS_CHUNK = 100
/** Entries of each per-node cache (descriptors, register snapshots). */
const CACHE_SIZE = 50_000
/** Polls answered from memory refresh their queues' TTLs in one batch this often. */
const TOUCH_INTERVAL_MS = 1_000
/**
 * How long after a refresh of a queue's life its polls leave it as it is
 * (refreshSlack): at most this, and a tenth of the lifespan. Each refresh sets
 * the lifespan plus this slack (queueLifeMs), so a queue still outlives its
 * last poll by its whole lifespan, as upstream's do (its collector runs once
 * a minute: a queue lives from its lifespan to a minute more). One
 * second was the slack before, and the refreshes (a PARK_ACK's or a touch's
 * eight commands) then came once a second per busy queue: with ten, the load
 * simulation's servers and Redis used a seventh less CPU at 1,000 users
 * (bench/README.md).
 */
const REFRESH_SLACK_MAX_MS = 10_000
/** A remembered state is trusted until this long before the queue could expire. */
const EXPIRY_MARGIN_MS = 2 * TOUCH_INTERVAL_MS + 1_000
/**
 * An index set outlives its queues by this much: a node extends it beside a
 * touch of one of its queues only when its last extension (by this node) has
 * less than half of this margin to spare, so most touches cost no command.
 */
const INDEX_TTL_SLACK_MS = 60_000

export interface RedisQueueStoreOptions {
  onError?: (error: unknown) => void
  /** Split multi-queue and multi-user work per hash slot; default: whether the connection is a cluster. */
  groupBySlot?: boolean
  /**
   * Answer polls from what the node remembers of its queues (known-states.ts);
   * default: unless the connection is a cluster. On a cluster a script's
   * wake-up may reach a node through the cluster bus after the script's reply
   * reached the node that ran it, so a poll right after an acknowledgement or
   * an append made on another node could be answered from the older state:
   * there every poll reads Redis.
   */
  answerFromMemory?: boolean
  /**
   * The node channels are shard channels (a Redis Cluster that knows
   * SPUBLISH: RedisConnection.sharded): the scripts return their wake-ups
   * and this node SPUBLISHes them right after each reply; listening is
   * SSUBSCRIBE. Default false: the scripts PUBLISH them themselves.
   */
  sharded?: boolean
}

export class RedisQueueStore implements QueueStore {
  private maxEvents = DEFAULT_EVENT_QUEUE_MAX_EVENTS
  private maxBytes = DEFAULT_EVENT_QUEUE_MAX_BYTES
  private maxPerUser = DEFAULT_EVENT_QUEUES_PER_USER
  /** Descriptors never change after creation, so any node may cache them. */
  private readonly descriptors = new Map<string, QueueDescriptor>()
  private readonly snapshots = new Map<string, string>()
  private readonly signals: RedisSignals
  /** Where the scripts' wake-ups go (published by the scripts, or sent after them on a cluster's shard channels). */
  private readonly wakes: WakeSender
  /** Queues answered from memory since the last touch batch. */
  private readonly pendingTouches = new Map<string, { desc: QueueDescriptor; pruneUpTo: number }>()
  private touchTimer: NodeJS.Timeout | undefined
  /** Per index set: until when (UNIX ms) this node last extended its TTL. */
  private readonly indexExtendedUntil = new Map<string, number>()
  private readonly onError: (error: unknown) => void
  private readonly bySlot: boolean
  /** Releases and parks waiting for the end of this turn of the event loop (unpark, ackAndPark), in order. */
  private pendingMarks: PendingMark[] = []
  /** The unpark calls waiting for that batch. */
  private releasesSettled: { resolve: () => void; reject: (error: unknown) => void }[] = []
  private marksScheduled = false

  constructor(
    private readonly redis: RedisClient,
    private readonly prefix: string,
    options: RedisQueueStoreOptions = {},
  ) {
    this.onError = options.onError ?? (() => {})
    this.bySlot = options.groupBySlot ?? redis.isCluster
    const sharded = options.sharded ?? false
    this.wakes = new WakeSender(redis, sharded, this.onError)
    this.signals = new RedisSignals(redis, { connectionName: `${prefix}:subscriber`, onError: this.onError, rememberStates: options.answerFromMemory ?? !redis.isCluster, sharded })
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

  /** A queue's key: `part` after its hash tag, so all of the queue's keys share one cluster slot. */
  private key(queueId: string, part = ''): string {
    return `${this.prefix}:q:{${queueId}}${part}`
  }
  /**
   * The index sets, one slot each. Their names (with braces) differ from the
   * sorted-set release's, so during a rolling upgrade nodes of the two
   * releases never read or clean each other's indexes.
   */
  private userKey(userId: number): string {
    return `${this.prefix}:uq:{${userId}}`
  }
  private realmPublicKey(realmId: number): string {
    return `${this.prefix}:r:{${realmId}}:public`
  }
  private get nodeChannelPrefix(): string {
    return `${this.prefix}:node:`
  }
  /** desc, meta, events (stream), holder, watchers: one queue's keys, one slot (FETCH, TOUCH, ACK). */
  private queueKeys(queueId: string): string[] {
    return [this.key(queueId), this.key(queueId, ':m'), this.key(queueId, ':e'), this.key(queueId, ':h'), this.key(queueId, ':w')]
  }

  /** The index sets a queue is a member of (each its own slot). */
  private indexKeys(desc: QueueDescriptor): string[] {
    return desc.allPublicStreams ? [this.userKey(desc.userId), this.realmPublicKey(desc.realmId)] : [this.userKey(desc.userId)]
  }

  /**
   * The queue first, then its index entries (other slots, so not in the same
   * script): a publisher that reads the index in between misses the queue,
   * but its change committed before this register reads its snapshot. The
   * reverse order would let a publisher find the member before the queue and
   * drop it as stale.
   */
  async create(desc: QueueDescriptor): Promise<void> {
    const ttl = queueLifeMs(desc)
    await CREATE.run(this.redis, [this.key(desc.queueId), this.key(desc.queueId, ':m')], [JSON.stringify(desc), ttl])
    this.remember(desc)
    const member = indexMember(desc.userId, desc.queueId)
    const [indexed] = await Promise.all(this.indexKeys(desc).map((key) => INDEX_ADD.run(this.redis, [key], [member, ttl + INDEX_TTL_SLACK_MS])))
    if (Number(indexed) > this.maxPerUser) await this.enforceUserCap(desc)
  }

  /**
   * Keeps a queue's index sets alive at least INDEX_TTL_SLACK_MS longer than
   * the queue after a touch at `touchedAt`: PEXPIRE … GT (never shortens),
   * sent only when this node's last extension would not cover it by half the
   * slack. Not awaited by the touch: it is one command per set, auto-pipelined.
   */
  private extendIndexes(desc: QueueDescriptor, touchedAt: number): void {
    const ttl = queueLifeMs(desc) + INDEX_TTL_SLACK_MS
    for (const key of this.indexKeys(desc)) {
      const until = this.indexExtendedUntil.get(key) ?? 0
      if (touchedAt + ttl - INDEX_TTL_SLACK_MS / 2 <= until) continue
      setBounded(this.indexExtendedUntil, key, touchedAt + ttl)
      this.redis.pexpire(key, ttl, 'GT').catch((error: unknown) => {
        this.indexExtendedUntil.delete(key)
        this.onError(error)
      })
    }
  }

  /**
   * Drops the user's oldest queues past the per-user cap (their readers are
   * woken and see them gone) and the index members of collected queues. Runs
   * only when the index holds more members than the cap, so a register
   * normally costs nothing more; two concurrent registers may both drop, which
   * errs on the side of fewer queues.
   */
  private async enforceUserCap(created: QueueDescriptor): Promise<void> {
    const userId = created.userId
    const members = await this.redis.smembers(this.userKey(userId))
    const queueIds = members.map((m) => m.slice(m.indexOf(':') + 1))
    const raws = await this.getMany(queueIds.map((id) => this.key(id)))
    const live: QueueDescriptor[] = []
    const stale: string[] = []
    raws.forEach((raw, i) => {
      if (raw === null) stale.push(members[i] as string)
      else live.push(JSON.parse(raw) as QueueDescriptor)
    })
    if (stale.length > 0) await this.redis.srem(this.userKey(userId), ...stale)
    // The queue just created is never the one dropped (another may share its millisecond).
    const others = live.filter((d) => d.queueId !== created.queueId).sort((a, b) => a.createdAt - b.createdAt)
    // Dropped, not deleted: a poll held on one answers BAD_EVENT_QUEUE_ID.
    await Promise.all(others.slice(0, Math.max(0, live.length - this.maxPerUser)).map((old) => this.removeQueue(old, false)))
  }

  async setSnapshot(queueId: string, snapshot: string, ttlSecs: number): Promise<void> {
    await this.redis.set(this.key(queueId, ':s'), snapshot, 'EX', ttlSecs)
  }

  /** A recorded snapshot never changes, so it is cached once seen (an absent one may still be recorded). */
  async snapshotOf(queueId: string): Promise<string | null> {
    const cached = this.snapshots.get(queueId)
    if (cached !== undefined) return cached
    const snapshot = await this.redis.get(this.key(queueId, ':s'))
    if (snapshot !== null) setBounded(this.snapshots, queueId, snapshot)
    return snapshot
  }

  async describe(queueId: string): Promise<QueueDescriptor | null> {
    const raw = await this.redis.get(this.key(queueId))
    if (raw === null) {
      this.forgetQueue(queueId)
      return null
    }
    return this.remember(this.descriptors.get(queueId) ?? (JSON.parse(raw) as QueueDescriptor))
  }

  /** Descriptors never change, so a cached one is returned as it is (at once); if its queue is gone, fetch and remove report it. */
  descriptorOf(queueId: string): QueueDescriptor | Promise<QueueDescriptor | null> {
    return this.descriptors.get(queueId) ?? this.describe(queueId)
  }

  /** Answered at once when this node's memory of the queue suffices, else by Redis. */
  fetch(desc: QueueDescriptor, lastEventId: number, nodeId?: string, deferAck = false): FetchOutcome | Promise<FetchOutcome> {
    const known = this.signals.knownBy(nodeId)
    const now = Date.now()
    const state = known?.lookup(desc.queueId, now)
    if (known && state && lastEventId >= state.pruned && lastEventId <= state.issued) {
      if (lastEventId === state.pruned) {
        // Answered from memory, nothing to acknowledge; the TTL refresh follows
        // in the next batch, unless the queue's life was refreshed within the
        // slack (a poll parked or acknowledged just now, or a few seconds ago).
        if (state.aliveUntil < aliveUntil(desc, now - refreshSlack(desc))) this.touchSoon(desc)
        return { kind: 'ok', events: [...state.events] }
      }
      // Nothing new, and the poll will park: ackAndPark acknowledges with the same call.
      if (deferAck && lastEventId === state.issued) return { kind: 'ok', events: [], ackOwed: lastEventId }
      return this.acknowledgeThenFetch(desc, lastEventId, known, nodeId)
    }
    return this.fetchFromRedis(desc, lastEventId, known, nodeId)
  }

  /**
   * The events come from memory, but the acknowledgement is made durable (and
   * told to the other nodes watching the queue) before the answer.
   */
  private async acknowledgeThenFetch(desc: QueueDescriptor, lastEventId: number, known: KnownStates, nodeId: string | undefined): Promise<FetchOutcome> {
    if (await this.acknowledge(desc, lastEventId, known, nodeId ?? '')) {
      const now = known.lookup(desc.queueId, Date.now())
      if (now && lastEventId >= now.pruned && lastEventId <= now.issued) return { kind: 'ok', events: now.events.filter((e) => e.id > lastEventId) }
    }
    return this.fetchFromRedis(desc, lastEventId, known, nodeId)
  }

  private async fetchFromRedis(desc: QueueDescriptor, lastEventId: number, known: KnownStates | undefined, nodeId: string | undefined): Promise<FetchOutcome> {
    const ticket = known?.listening ? known.ticket(desc.queueId) : undefined
    const started = Date.now()
    const reply = (await FETCH.run(this.redis, this.queueKeys(desc.queueId), [
      lastEventId,
      queueLifeMs(desc),
      ticket ? (nodeId ?? '') : '',
      this.nodeChannelPrefix,
      desc.queueId,
      nodeId ?? '',
    ], this.wakes)) as [
      string,
      unknown?,
      string?,
    ]
    switch (reply[0]) {
      case 'ok': {
        this.extendIndexes(desc, started)
        const pairs = reply[1] as string[]
        const events = eventsFromPairs(pairs)
        if (ticket && known) {
          const sizes = events.map((_e, i) => (pairs[2 * i + 1] as string).length)
          known.settle(ticket, { issued: Number(reply[2]), pruned: lastEventId, events: [...events], aliveUntil: aliveUntil(desc, started) }, sizes)
        }
        return { kind: 'ok', events }
      }
      case 'pruned':
        return { kind: 'pruned', newestPruned: Number(reply[1]) }
      case 'ahead':
        return { kind: 'ahead' }
      default:
        this.forgetQueue(desc.queueId)
        return { kind: 'gone' }
    }
  }

  /** This node's own readers learn of its appends at once; other nodes by their message. */
  private appendedHere(queueId: string, firstId: number, serialized: string[], queued: QueuedEventMaker): void {
    const sizes = serialized.map((json) => json.length)
    for (const known of this.signals.allKnown()) {
      known.appended(queueId, firstId, sizes, () => serialized.map((json, i) => queued(json, firstId + i)))
    }
  }

  private forgetQueue(queueId: string): void {
    this.descriptors.delete(queueId)
    this.snapshots.delete(queueId)
    this.pendingTouches.delete(queueId)
    for (const known of this.signals.allKnown()) known.forget(queueId)
  }

  /**
   * Prunes the queue in Redis up to `upTo` (refreshing its TTL) and, once
   * that is done, in this node's memory: true when it stands; false when the
   * queue is gone or already pruned further (the caller reads the queue).
   */
  private async acknowledge(desc: QueueDescriptor, upTo: number, known: KnownStates, nodeId: string): Promise<boolean> {
    const started = Date.now()
    const result = await ACK.run(this.redis, this.queueKeys(desc.queueId), [queueLifeMs(desc), upTo, this.nodeChannelPrefix, desc.queueId, nodeId], this.wakes)
    if (result !== 1) {
      known.woken(desc.queueId)
      return false
    }
    this.acknowledgedInRedis(desc, upTo, started, known)
    return true
  }

  /**
   * A script pruned the queue up to `upTo`, and left it `lifeLeftMs` to live
   * (by default its whole lifespan, refreshed) as of `started`: this node's memory follows.
   */
  private acknowledgedInRedis(desc: QueueDescriptor, upTo: number, started: number, known: KnownStates | undefined, lifeLeftMs = queueLifeMs(desc)): void {
    known?.acknowledge(desc.queueId, upTo)
    known?.extend(desc.queueId, trustedUntil(started, lifeLeftMs))
    this.extendIndexes(desc, started)
  }

  private touchSoon(desc: QueueDescriptor, pruneUpTo = -1): void {
    const pending = this.pendingTouches.get(desc.queueId)
    this.pendingTouches.set(desc.queueId, { desc, pruneUpTo: Math.max(pruneUpTo, pending?.pruneUpTo ?? -1) })
    this.touchTimer ??= setTimeout(() => {
      this.touchTimer = undefined
      this.flushTouches().catch(this.onError)
    }, TOUCH_INTERVAL_MS)
  }

  /**
   * Refreshes the TTLs of the queues answered from memory and prunes what
   * those polls acknowledged: one script call each, sent in one write by the
   * connection's auto-pipelining.
   */
  async flushTouches(): Promise<void> {
    if (this.pendingTouches.size === 0) return
    const touches = [...this.pendingTouches.values()]
    this.pendingTouches.clear()
    const started = Date.now()
    const alive = await Promise.all(
      touches.map(({ desc, pruneUpTo }) => TOUCH.run(this.redis, this.queueKeys(desc.queueId), [queueLifeMs(desc), pruneUpTo >= 0 ? pruneUpTo : ''])),
    )
    alive.forEach((isAlive, i) => {
      const { desc } = touches[i] as { desc: QueueDescriptor }
      if (isAlive === 1) {
        for (const known of this.signals.allKnown()) known.extend(desc.queueId, aliveUntil(desc, started))
        this.extendIndexes(desc, started)
      } else {
        this.forgetQueue(desc.queueId)
      }
    })
  }

  async remove(desc: QueueDescriptor): Promise<boolean> {
    return this.removeQueue(desc, true)
  }

  /** Removes the queue; `deleted`: remembered as deleted (wasDeleted), as DELETE /events is, not as a cap's drop. */
  private async removeQueue(desc: QueueDescriptor, deleted: boolean): Promise<boolean> {
    this.forgetQueue(desc.queueId)
    const existed = await REMOVE.run(
      this.redis,
      [...this.queueKeys(desc.queueId), this.key(desc.queueId, ':s'), this.key(desc.queueId, ':x')],
      [this.nodeChannelPrefix, desc.queueId, deleted ? DELETED_QUEUE_MEMORY_SECS * 1000 : 0],
      this.wakes,
    )
    this.forgetQueue(desc.queueId)
    const member = indexMember(desc.userId, desc.queueId)
    await Promise.all(this.indexKeys(desc).map((key) => this.redis.srem(key, member)))
    return existed === 1
  }

  async wasDeleted(queueId: string): Promise<boolean> {
    return (await this.redis.exists(this.key(queueId, ':x'))) === 1
  }

  /** Read afresh (no cache): the index may name queues that expired since. */
  async queuesOf(userId: number): Promise<QueueDescriptor[]> {
    const members = await this.redis.smembers(this.userKey(userId))
    if (members.length === 0) return []
    const raws = await this.getMany(members.map((m) => this.key(m.slice(m.indexOf(':') + 1))))
    const live = raws.flatMap((raw) => (raw === null ? [] : [JSON.parse(raw) as QueueDescriptor]))
    return live.sort((a, b) => a.createdAt - b.createdAt)
  }

  async append(item: BusItem): Promise<void> {
    return this.appendMany([item])
  }

  /**
   * Fans several items of one realm out together, in order: each queue gets
   * the events of all of them in one append (consecutive IDs) and one
   * wake-up, so a held poll is answered once per action, not once per event.
   */
  async appendMany(items: BusItem[]): Promise<void> {
    const first = items[0]
    if (!first) return
    // 1. Target queues: the recipients' queues, plus all_public_streams queues for public-channel messages.
    const indexKeys = [...new Set(items.flatMap((item) => item.userIds))].map((id) => this.userKey(id))
    if (items.some((item) => item.publicStreamId !== undefined && item.event.type === 'message')) indexKeys.push(this.realmPublicKey(first.realmId))
    if (indexKeys.length === 0) return
    const members = await this.unionOf(indexKeys)
    if (members.length === 0) return
    const userOf = new Map<string, number>()
    for (const member of members) {
      const colon = member.indexOf(':')
      userOf.set(member.slice(colon + 1), Number(member.slice(0, colon)))
    }

    // 2. Descriptors (cached; missing ones are gone and leave the indexes).
    const descs = await this.loadDescriptors([...userOf.keys()])
    const stale: [number, string][] = []
    const targets: { desc: QueueDescriptor; serialized: string[] }[] = []
    const serializers = items.map((item) => eventsFanOut(item, (events) => events.map(serializeEvent)))
    for (const [queueId, userId] of userOf) {
      const desc = descs.get(queueId)
      if (!desc) {
        stale.push([userId, queueId])
        continue
      }
      const serialized = serializers.length === 1 ? (serializers[0] as (d: QueueDescriptor) => string[])(desc) : serializers.flatMap((serializedFor) => serializedFor(desc))
      if (serialized.length > 0) targets.push({ desc, serialized })
    }

    // 3. Append atomically per chunk of queues, in groups: Redis sends the
    // pub/sub messages of the scripts it read in one go only after running them
    // all, so one pipeline of every chunk would wake no node before the last
    // queue is appended. The first group is one chunk's worth of queues; each
    // next group is sent when the previous one is done, with as many queues as
    // all before it together. A chunk's queues share a slot on a cluster
    // (mostly one queue each there: each queue is its own slot), where
    // auto-pipelining sends each node its scripts of a group in one write.
    const chunks: { desc: QueueDescriptor; serialized: string[] }[][] = []
    for (const slotGroup of groupBySlot(targets, ({ desc }) => this.key(desc.queueId), this.bySlot)) {
      for (let start = 0; start < slotGroup.length; start += APPEND_CHUNK) chunks.push(slotGroup.slice(start, start + APPEND_CHUNK))
    }
    const queued = queuedEventMaker()
    let sent = 0
    for (let start = 0; start < chunks.length; ) {
      let end = start
      let queues = 0
      while (end < chunks.length && (end === start || queues < Math.max(APPEND_CHUNK, sent))) queues += (chunks[end++] as unknown[]).length
      const group = chunks.slice(start, end)
      start = end
      sent += queues
      const results = await Promise.all(group.map((chunk) => this.runAppend(chunk.map(({ desc, serialized }) => [desc.queueId, serialized]))))
      group.forEach((chunk, c) => {
        const firstIds = results[c] as number[]
        chunk.forEach(({ desc, serialized }, i) => {
          const firstId = firstIds[i] as number
          if (firstId >= 0) {
            this.appendedHere(desc.queueId, firstId, serialized, queued)
          } else {
            this.forgetQueue(desc.queueId)
            stale.push([desc.userId, desc.queueId])
          }
        })
      })
    }
    if (stale.length > 0) {
      // Single-key commands (each set its own slot), sent together by auto-pipelining.
      await Promise.all(
        stale.flatMap(([userId, queueId]) => [
          this.redis.srem(this.userKey(userId), indexMember(userId, queueId)),
          this.redis.srem(this.realmPublicKey(first.realmId), indexMember(userId, queueId)),
        ]),
      )
    }
  }

  /**
   * The members of several index sets. On a cluster one SUNION per slot
   * (mostly one set each, as users' sets are spread over the slots), sent
   * together; on one server a single SUNION.
   */
  private async unionOf(keys: string[]): Promise<string[]> {
    const groups = groupBySlot(keys, (key) => key, this.bySlot)
    if (groups.length === 1) return this.redis.sunion(...(groups[0] as string[]))
    const parts = await Promise.all(groups.map((group) => (group.length === 1 ? this.redis.smembers(group[0] as string) : this.redis.sunion(...group))))
    return parts.flat()
  }

  /** GET of several keys, in key order: one MGET per slot (a single MGET on one server). */
  private async getMany(keys: string[]): Promise<(string | null)[]> {
    if (keys.length === 0) return []
    if (!this.bySlot) return this.redis.mget(keys)
    const values = new Map<string, string | null>()
    await Promise.all(
      groupBySlot(keys, (key) => key, true).map(async (group) => {
        const raws = group.length === 1 ? [await this.redis.get(group[0] as string)] : await this.redis.mget(group)
        group.forEach((key, i) => values.set(key, raws[i] ?? null))
      }),
    )
    return keys.map((key) => values.get(key) ?? null)
  }

  /** One APPEND call for queues of one slot; returns each queue's first event ID (or -1, -2: see APPEND). */
  private async runAppend(queues: [queueId: string, serialized: string[]][]): Promise<number[]> {
    return (await APPEND.run(
      this.redis,
      queues.map(([queueId]) => this.key(queueId)),
      this.appendArgs(queues), this.wakes
    )) as number[]
  }

  /** APPEND's arguments: each distinct event JSON once, then per queue its ID and its events' variant numbers. */
  private appendArgs(queues: [queueId: string, serialized: string[]][]): (string | number)[] {
    const variants = new Map<string, number>()
    const perQueue: string[] = []
    for (const [queueId, serialized] of queues) {
      let numbers = ''
      for (const json of serialized) {
        let v = variants.get(json)
        if (v === undefined) variants.set(json, (v = variants.size + 1))
        numbers += numbers === '' ? String(v) : `,${v}`
      }
      perQueue.push(queueId, numbers)
    }
    return [this.maxEvents, this.maxBytes, this.nodeChannelPrefix, variants.size, ...variants.keys(), ...perQueue]
  }

  async heartbeat(desc: QueueDescriptor): Promise<void> {
    const serialized = [serializeEvent(heartbeatEvent())]
    const [firstId] = await this.runAppend([[desc.queueId, serialized]])
    if (firstId !== undefined && firstId >= 0) this.appendedHere(desc.queueId, firstId, serialized, queuedEventMaker())
    else this.forgetQueue(desc.queueId)
  }

  async park(desc: QueueDescriptor, holder: Holder): Promise<boolean> {
    const ok = await PARK.run(this.redis, [this.key(desc.queueId), this.key(desc.queueId, ':h')], [
      holderValue(holder),
      this.nodeChannelPrefix,
      desc.queueId,
    ], this.wakes)
    return ok === 1
  }

  /**
   * Collects the parks of this turn of the event loop and sends them, with
   * the turn's releases, in one PARK_ACK call per slot group and chunk
   * (flushMarks): a send answers a team's polls together, and their re-polls
   * arrive together.
   */
  ackAndPark(desc: QueueDescriptor, holder: Holder, upTo: number, nodeId: string): Promise<'parked' | 'gone' | 'stale'> {
    return new Promise((resolve, reject) => {
      this.pendingMarks.push({ desc, holder, park: { upTo, nodeId, resolve, reject } })
      this.flushMarksSoon()
    })
  }

  /** Released marks go with the next batch of parks (PARK_ACK clears them first). */
  unpark(released: HeldPoll[]): Promise<void> {
    if (released.length === 0) return Promise.resolve()
    return new Promise((resolve, reject) => {
      for (const { desc, holder } of released) this.pendingMarks.push({ desc, holder })
      this.releasesSettled.push({ resolve, reject })
      this.flushMarksSoon()
    })
  }

  private flushMarksSoon(): void {
    if (this.marksScheduled) return
    this.marksScheduled = true
    setImmediate(() => this.flushMarks())
  }

  private flushMarks(): void {
    this.marksScheduled = false
    const marks = this.pendingMarks
    const settled = this.releasesSettled
    this.pendingMarks = []
    this.releasesSettled = []
    const started = Date.now()
    const calls: Promise<unknown>[] = []
    for (const slotGroup of groupBySlot(marks, ({ desc }) => this.key(desc.queueId), this.bySlot)) {
      for (let start = 0; start < slotGroup.length; start += MARKS_CHUNK) {
        const chunk = slotGroup.slice(start, start + MARKS_CHUNK)
        const releases = chunk.filter((mark) => mark.park === undefined)
        const parks = chunk.filter((mark): mark is ParkMark => mark.park !== undefined)
        const keys = [...releases, ...parks].map(({ desc }) => this.key(desc.queueId))
        const args: (string | number)[] = [this.nodeChannelPrefix, releases.length, ...releases.map(({ holder }) => holderValue(holder))]
        for (const { desc, holder, park } of parks) {
          args.push(queueLifeMs(desc), refreshSlack(desc), park.upTo, desc.queueId, park.nodeId, holderValue(holder))
        }
        const call = PARK_ACK.run(this.redis, keys, args, this.wakes)
        calls.push(call)
        call.then(
          (reply) => {
            const results = reply as number[]
            parks.forEach((mark, i) => mark.park.resolve(this.parked(mark, results[2 * i] as number, results[2 * i + 1] as number, started)))
          },
          (error: unknown) => {
            for (const { park } of parks) park.reject(error)
          },
        )
      }
    }
    if (settled.length > 0) {
      Promise.all(calls).then(
        () => settled.forEach(({ resolve }) => resolve()),
        (error: unknown) => settled.forEach(({ reject }) => reject(error)),
      )
    }
  }

  /** One queue's outcome of PARK_ACK: `left`, the queue's life in ms as the script left it. */
  private parked(mark: ParkMark, code: number, left: number, started: number): 'parked' | 'gone' | 'stale' {
    const { desc } = mark
    const { upTo, nodeId } = mark.park
    const known = this.signals.knownBy(nodeId)
    if (code === 0) {
      this.forgetQueue(desc.queueId)
      return 'gone'
    }
    if (code !== 1) {
      known?.woken(desc.queueId)
      return 'stale'
    }
    this.acknowledgedInRedis(desc, upTo, started, known, left)
    return 'parked'
  }

  listen(nodeId: string, onSignal: (signal: WakeSignal) => void): Promise<() => Promise<void>> {
    return this.signals.listen(nodeId, this.nodeChannelPrefix + nodeId, onSignal)
  }

  /** Subscribes `handler` to a channel (the bus's items channel); returns the unsubscribe. */
  onChannel(channel: string, handler: (message: string) => void): Promise<() => Promise<void>> {
    return this.signals.onChannel(channel, handler)
  }

  async close(): Promise<void> {
    if (this.touchTimer) clearTimeout(this.touchTimer)
    this.touchTimer = undefined
    // Polls answered from memory still owe their queues a touch.
    if (this.redis.status === 'ready') await this.flushTouches().catch(this.onError)
    this.wakes.close()
    this.signals.close()
  }

  private async loadDescriptors(queueIds: string[]): Promise<Map<string, QueueDescriptor>> {
    const out = new Map<string, QueueDescriptor>()
    const missing = queueIds.filter((id) => {
      const cached = this.descriptors.get(id)
      if (cached) out.set(id, cached)
      return !cached
    })
    if (missing.length > 0) {
      const raws = await this.getMany(missing.map((id) => this.key(id)))
      raws.forEach((raw, i) => {
        if (raw !== null) out.set(missing[i] as string, this.remember(JSON.parse(raw) as QueueDescriptor))
      })
    }
    // A cached descriptor may belong to a collected queue: APPEND reports it as gone.
    return out
  }

  private remember(desc: QueueDescriptor): QueueDescriptor {
    setBounded(this.descriptors, desc.queueId, desc)
    return desc
  }
}

/** Sets a cache entry, dropping the oldest one when the cache is full. */
export function setBounded<V>(cache: Map<string, V>, key: string, value: V): void {
  if (cache.size >= CACHE_SIZE && !cache.has(key)) {
    const oldest = cache.keys().next().value
    if (oldest !== undefined) cache.delete(oldest)
  }
  cache.set(key, value)
}

/** A park waiting for its batch's PARK_ACK call. */
interface PendingPark {
  upTo: number
  nodeId: string
  resolve: (outcome: 'parked' | 'gone' | 'stale') => void
  reject: (error: unknown) => void
}

/** A release (no `park`) or a park waiting for its batch. */
interface PendingMark {
  desc: QueueDescriptor
  holder: Holder
  park?: PendingPark
}

type ParkMark = PendingMark & { park: PendingPark }

/**
 * How recently a queue's life may have been refreshed for a poll to leave it
 * as it is, parked (PARK_ACK) or answered from memory (fetch): the queue then
 * has at least its lifespan left.
 */
function refreshSlack(desc: QueueDescriptor): number {
  return Math.min(REFRESH_SLACK_MAX_MS, desc.lifespanSecs * 100)
}

/** The TTL a refresh gives a queue's keys: its lifespan and the slack, so it outlives every poll by its lifespan. */
function queueLifeMs(desc: QueueDescriptor): number {
  return desc.lifespanSecs * 1000 + refreshSlack(desc)
}

/** Until when a node trusts a queue that Redis said, at `at`, had `lifeLeftMs` to live. */
function trustedUntil(at: number, lifeLeftMs: number): number {
  return at + lifeLeftMs - EXPIRY_MARGIN_MS
}

/** Until when a queue whose life Redis refreshed at `refreshedAt` is certainly alive, as a node trusts it. */
function aliveUntil(desc: QueueDescriptor, refreshedAt: number): number {
  return trustedUntil(refreshedAt, queueLifeMs(desc))
}

/** The value of a queue's holder key for a held poll. */
function holderValue(holder: Holder): string {
  return `${holder.nodeId}|${holder.token}`
}

/** A member of the user and realm-public index sets. */
export function indexMember(userId: number, queueId: string): string {
  return `${userId}:${queueId}`
}

export type QueuedEventMaker = ReturnType<typeof queuedEventMaker>

export function serializeEvent(event: WireEvent): string {
  const { id: _id, ...rest } = event
  return JSON.stringify(rest)
}
