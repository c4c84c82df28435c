// EXPERIMENTAL per-user Redis queue store (issue 14, item 1): one Redis
// stream per user, each queue a cursor over it (layout: lua-user.ts). Chosen
// only by ROOST_QUEUE_LAYOUT=per-user in backends/index.ts; the default is the
// per-queue store (redis-store.ts), kept after measurement (bench/README.md,
// "Per queue or per user").
//
// It follows redis-store.ts step for step (the same fan-out in JS, the same
// wake-up messages, so the same known-states.ts answers from memory); what
// differs is where events live and how a queue is found from its ID alone:
//   - filtering stays on write: the publisher computes each queue's events
//     (eventsFanOut) and one stream entry per user names the accepting queues
//     with their own variants and IDs, so each queue keeps its own IDs from 0,
//     its own backlog cap (last - pruned) and its own acknowledgements;
//   - each event JSON is stored once per user (not once per queue);
//   - the stream is trimmed to the smallest position of the user's live
//     queues, so one queue that lags (unacknowledged events, or not read)
//     keeps its siblings' acknowledged entries in Redis until it catches up or
//     expires: the user's stream is bounded per queue only by its lifespan,
//     not by EVENT_QUEUE_MAX_EVENTS;
//   - a queue ID does not name its user, so P:d:{<queue_id>} holds the
//     descriptor (its own slot), and describe() costs two reads when not cached.
import type { RedisClient } from '../../backends/redis-connection.js'
import { DEFAULT_EVENT_QUEUE_MAX_EVENTS, DEFAULT_EVENT_QUEUES_PER_USER } from '../../config.js'
import type { BusItem } from '../bus.js'
import { eventsFanOut } from './filter.js'
import { WakeSender } from './wake-sender.js'
import { eventsFromPairs, queuedEventMaker, RedisSignals } from './redis-signals.js'
import { INDEX_ADD, PARK, UNPARK } from './lua.js'
import { ACK_U, APPEND_U, CREATE_U, FETCH_U, REMOVE_U, TOUCH_U } from './lua-user.js'
import { groupBySlot } from './slots.js'
import type { FetchOutcome, HeldPoll, Holder, QueueDescriptor, QueuedEvent, QueueStore, WakeSignal } from './types.js'
import { heartbeatEvent } from '../schemas/index.js'
import type { KnownStates } from './known-states.js'
import { indexMember, serializeEvent, setBounded, type QueuedEventMaker, type RedisQueueStoreOptions } from './redis-store.js'

/** Queues per APPEND call (a user's queues are never split). */
const APPEND_CHUNK = 25
const UNPARK_CHUNK = 250
const TOUCH_INTERVAL_MS = 1_000
const EXPIRY_MARGIN_MS = 2 * TOUCH_INTERVAL_MS + 1_000
const INDEX_TTL_SLACK_MS = 60_000

type Target = { desc: QueueDescriptor; serialized: string[] }

export class RedisUserStreamStore implements QueueStore {
  private maxEvents = DEFAULT_EVENT_QUEUE_MAX_EVENTS
  private maxPerUser = DEFAULT_EVENT_QUEUES_PER_USER
  private readonly descriptors = new Map<string, QueueDescriptor>()
  private readonly snapshots = new Map<string, string>()
  private readonly signals: RedisSignals
  /** Where the scripts' wake-ups go (published by the scripts, or sent after them on a cluster's shard channels). */
  private readonly wakes: WakeSender
  private readonly pendingTouches = new Map<string, { desc: QueueDescriptor; pruneUpTo: number }>()
  private touchTimer: NodeJS.Timeout | undefined
  private readonly indexExtendedUntil = new Map<string, number>()
  private readonly onError: (error: unknown) => void
  private readonly bySlot: boolean

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

  setMaxQueuesPerUser(max: number): void {
    this.maxPerUser = max
  }

  /** "P:u:{<user_id>}:": the user's keys (stream, meta, cursors) share its slot. */
  private base(userId: number): string {
    return `${this.prefix}:u:{${userId}}:`
  }
  private descKey(queueId: string, part = ''): string {
    return `${this.prefix}:d:{${queueId}}${part}`
  }
  private userKey(userId: number): string {
    return `${this.prefix}:uq:{${userId}}`
  }
  private realmPublicKey(realmId: number): string {
    return `${this.prefix}:r:{${realmId}}:public`
  }
  private get nodeChannelPrefix(): string {
    return `${this.prefix}:node:`
  }
  /** cursor, meta, stream, holder, watchers: one queue's keys in its user's slot. */
  private queueKeys(desc: QueueDescriptor): string[] {
    const b = this.base(desc.userId)
    return [`${b}c:${desc.queueId}`, `${b}m`, `${b}e`, `${b}h:${desc.queueId}`, `${b}w:${desc.queueId}`]
  }
  /** Keys outliving the queue by the slack, extended beside its touches: the index sets and the descriptor. */
  private indexKeys(desc: QueueDescriptor): string[] {
    const keys = [this.userKey(desc.userId), this.descKey(desc.queueId)]
    if (desc.allPublicStreams) keys.push(this.realmPublicKey(desc.realmId))
    return keys
  }

  async create(desc: QueueDescriptor): Promise<void> {
    const ttl = desc.lifespanSecs * 1000
    const [cursor, meta, stream] = this.queueKeys(desc) as [string, string, string]
    await CREATE_U.run(this.redis, [cursor, meta, stream], [desc.queueId, ttl])
    await this.redis.set(this.descKey(desc.queueId), JSON.stringify(desc), 'PX', ttl + INDEX_TTL_SLACK_MS)
    this.remember(desc)
    const member = indexMember(desc.userId, desc.queueId)
    const sets = desc.allPublicStreams ? [this.userKey(desc.userId), this.realmPublicKey(desc.realmId)] : [this.userKey(desc.userId)]
    const [indexed] = await Promise.all(sets.map((key) => INDEX_ADD.run(this.redis, [key], [member, ttl + INDEX_TTL_SLACK_MS])))
    if (Number(indexed) > this.maxPerUser) await this.enforceUserCap(desc)
  }

  private extendIndexes(desc: QueueDescriptor, touchedAt: number): void {
    const ttl = desc.lifespanSecs * 1000 + INDEX_TTL_SLACK_MS
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

  private async enforceUserCap(created: QueueDescriptor): Promise<void> {
    const live = await this.queuesOf(created.userId)
    const others = live.filter((d) => d.queueId !== created.queueId).sort((a, b) => a.createdAt - b.createdAt)
    await Promise.all(others.slice(0, Math.max(0, live.length - this.maxPerUser)).map((old) => this.remove(old)))
  }

  async setSnapshot(queueId: string, snapshot: string, ttlSecs: number): Promise<void> {
    await this.redis.set(this.descKey(queueId, ':s'), snapshot, 'EX', ttlSecs)
  }

  async snapshotOf(queueId: string): Promise<string | null> {
    const cached = this.snapshots.get(queueId)
    if (cached !== undefined) return cached
    const snapshot = await this.redis.get(this.descKey(queueId, ':s'))
    if (snapshot !== null) setBounded(this.snapshots, queueId, snapshot)
    return snapshot
  }

  /** The descriptor key, then the cursor (the queue's life, in its user's slot). */
  async describe(queueId: string): Promise<QueueDescriptor | null> {
    let desc = this.descriptors.get(queueId) ?? null
    if (desc === null) {
      const raw = await this.redis.get(this.descKey(queueId))
      desc = raw === null ? null : (JSON.parse(raw) as QueueDescriptor)
    }
    if (desc === null || (await this.redis.exists(this.queueKeys(desc)[0] as string)) === 0) {
      this.forgetQueue(queueId)
      return null
    }
    return this.remember(desc)
  }

  async descriptorOf(queueId: string): Promise<QueueDescriptor | null> {
    return this.descriptors.get(queueId) ?? this.describe(queueId)
  }

  async fetch(desc: QueueDescriptor, lastEventId: number, nodeId?: string): Promise<FetchOutcome> {
    const known = this.signals.knownBy(nodeId)
    const state = known?.lookup(desc.queueId, Date.now())
    if (known && state && lastEventId >= state.pruned && lastEventId <= state.issued) {
      if (lastEventId === state.pruned) {
        this.touchSoon(desc)
        return { kind: 'ok', events: [...state.events] }
      }
      if (await this.acknowledge(desc, lastEventId, known, nodeId ?? '')) {
        const now = known.lookup(desc.queueId, Date.now())
        if (now && lastEventId >= now.pruned && lastEventId <= now.issued) return { kind: 'ok', events: now.events.filter((e) => e.id > lastEventId) }
      }
    }
    const ticket = known?.listening ? known.ticket(desc.queueId) : undefined
    const started = Date.now()
    const reply = (await FETCH_U.run(this.redis, this.queueKeys(desc), [
      lastEventId,
      desc.lifespanSecs * 1000,
      ticket ? (nodeId ?? '') : '',
      this.nodeChannelPrefix,
      desc.queueId,
      nodeId ?? '',
      this.base(desc.userId),
    ], this.wakes)) as [string, unknown?, string?]
    switch (reply[0]) {
      case 'ok': {
        this.extendIndexes(desc, started)
        const events = eventsFromPairs(reply[1] as string[])
        if (ticket && known) {
          known.settle(ticket, { issued: Number(reply[2]), pruned: lastEventId, events: [...events], aliveUntil: started + desc.lifespanSecs * 1000 - EXPIRY_MARGIN_MS })
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

  private appendedHere(queueId: string, firstId: number, serialized: string[], queued: QueuedEventMaker): void {
    for (const known of this.signals.allKnown()) {
      known.appended(queueId, firstId, serialized.length, () => serialized.map((json, i) => queued(json, firstId + i)))
    }
  }

  private forgetQueue(queueId: string): void {
    this.descriptors.delete(queueId)
    this.snapshots.delete(queueId)
    this.pendingTouches.delete(queueId)
    for (const known of this.signals.allKnown()) known.forget(queueId)
  }

  private async acknowledge(desc: QueueDescriptor, upTo: number, known: KnownStates, nodeId: string): Promise<boolean> {
    const started = Date.now()
    const result = await ACK_U.run(this.redis, this.queueKeys(desc), [desc.lifespanSecs * 1000, upTo, this.nodeChannelPrefix, desc.queueId, nodeId, this.base(desc.userId)], this.wakes)
    if (result !== 1) {
      known.woken(desc.queueId)
      return false
    }
    known.acknowledge(desc.queueId, upTo)
    known.extend(desc.queueId, started + desc.lifespanSecs * 1000 - EXPIRY_MARGIN_MS)
    this.extendIndexes(desc, started)
    return true
  }

  private touchSoon(desc: QueueDescriptor, pruneUpTo = -1): void {
    const pending = this.pendingTouches.get(desc.queueId)
    this.pendingTouches.set(desc.queueId, { desc, pruneUpTo: Math.max(pruneUpTo, pending?.pruneUpTo ?? -1) })
    this.touchTimer ??= setTimeout(() => {
      this.touchTimer = undefined
      this.flushTouches().catch(this.onError)
    }, TOUCH_INTERVAL_MS)
  }

  async flushTouches(): Promise<void> {
    if (this.pendingTouches.size === 0) return
    const touches = [...this.pendingTouches.values()]
    this.pendingTouches.clear()
    const started = Date.now()
    const alive = await Promise.all(
      touches.map(({ desc, pruneUpTo }) =>
        TOUCH_U.run(this.redis, this.queueKeys(desc), [desc.lifespanSecs * 1000, pruneUpTo >= 0 ? pruneUpTo : '', this.base(desc.userId), desc.queueId]),
      ),
    )
    alive.forEach((isAlive, i) => {
      const { desc } = touches[i] as { desc: QueueDescriptor }
      if (isAlive === 1) {
        for (const known of this.signals.allKnown()) known.extend(desc.queueId, started + desc.lifespanSecs * 1000 - EXPIRY_MARGIN_MS)
        this.extendIndexes(desc, started)
      } else {
        this.forgetQueue(desc.queueId)
      }
    })
  }

  async remove(desc: QueueDescriptor): Promise<boolean> {
    this.forgetQueue(desc.queueId)
    const existed = await REMOVE_U.run(this.redis, this.queueKeys(desc), [this.nodeChannelPrefix, desc.queueId, this.base(desc.userId)], this.wakes)
    this.forgetQueue(desc.queueId)
    const member = indexMember(desc.userId, desc.queueId)
    await Promise.all([
      this.redis.del(this.descKey(desc.queueId)),
      this.redis.del(this.descKey(desc.queueId, ':s')),
      this.redis.srem(this.userKey(desc.userId), member),
      ...(desc.allPublicStreams ? [this.redis.srem(this.realmPublicKey(desc.realmId), member)] : []),
    ])
    return existed === 1
  }

  /** Read afresh: the descriptors, then which cursors still live. */
  async queuesOf(userId: number): Promise<QueueDescriptor[]> {
    const members = await this.redis.smembers(this.userKey(userId))
    if (members.length === 0) return []
    const raws = await this.getMany(members.map((m) => this.descKey(m.slice(m.indexOf(':') + 1))))
    const descs = raws.flatMap((raw) => (raw === null ? [] : [JSON.parse(raw) as QueueDescriptor]))
    const alive = await Promise.all(descs.map((desc) => this.redis.exists(this.queueKeys(desc)[0] as string)))
    return descs.filter((_, i) => alive[i] === 1).sort((a, b) => a.createdAt - b.createdAt)
  }

  async append(item: BusItem): Promise<void> {
    const indexKeys = item.userIds.map((id) => this.userKey(id))
    if (item.publicStreamId !== undefined && item.event.type === 'message') indexKeys.push(this.realmPublicKey(item.realmId))
    if (indexKeys.length === 0) return
    const members = await this.unionOf(indexKeys)
    if (members.length === 0) return
    const userOf = new Map<string, number>()
    for (const member of members) {
      const colon = member.indexOf(':')
      userOf.set(member.slice(colon + 1), Number(member.slice(0, colon)))
    }

    const descs = await this.loadDescriptors([...userOf.keys()])
    const stale: [number, string][] = []
    const byUser = new Map<number, Target[]>()
    const serializedFor = eventsFanOut(item, (events) => events.map(serializeEvent))
    for (const [queueId, userId] of userOf) {
      const desc = descs.get(queueId)
      if (!desc) {
        stale.push([userId, queueId])
        continue
      }
      const serialized = serializedFor(desc)
      if (serialized.length === 0) continue
      const list = byUser.get(desc.userId)
      if (list) list.push({ desc, serialized })
      else byUser.set(desc.userId, [{ desc, serialized }])
    }

    // Chunks of whole users (one stream entry per user), one slot per chunk on a cluster.
    const chunks: Target[][][] = []
    for (const slotGroup of groupBySlot([...byUser.entries()], ([userId]) => this.base(userId), this.bySlot)) {
      let chunk: Target[][] = []
      let size = 0
      for (const [, targets] of slotGroup) {
        if (size > 0 && size + targets.length > APPEND_CHUNK) {
          chunks.push(chunk)
          chunk = []
          size = 0
        }
        chunk.push(targets)
        size += targets.length
      }
      if (chunk.length > 0) chunks.push(chunk)
    }
    const queued = queuedEventMaker()
    const size = (chunk: Target[][]) => chunk.reduce((n, users) => n + users.length, 0)
    let sent = 0
    for (let start = 0; start < chunks.length; ) {
      let end = start
      let queues = 0
      while (end < chunks.length && (end === start || queues < Math.max(APPEND_CHUNK, sent))) queues += size(chunks[end++] as Target[][])
      const group = chunks.slice(start, end)
      start = end
      sent += queues
      const results = await Promise.all(group.map((chunk) => this.runAppend(chunk)))
      group.forEach((chunk, c) => {
        const firstIds = results[c] as number[]
        chunk.flat().forEach(({ desc, serialized }, i) => {
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
      await Promise.all(
        stale.flatMap(([userId, queueId]) => [
          this.redis.srem(this.userKey(userId), indexMember(userId, queueId)),
          this.redis.srem(this.realmPublicKey(item.realmId), indexMember(userId, queueId)),
        ]),
      )
    }
  }

  private async unionOf(keys: string[]): Promise<string[]> {
    const groups = groupBySlot(keys, (key) => key, this.bySlot)
    if (groups.length === 1) return this.redis.sunion(...(groups[0] as string[]))
    const parts = await Promise.all(groups.map((group) => (group.length === 1 ? this.redis.smembers(group[0] as string) : this.redis.sunion(...group))))
    return parts.flat()
  }

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

  /** One APPEND_U call for whole users of one slot; returns each queue's first ID (or -1, -2), in order. */
  private async runAppend(users: Target[][]): Promise<number[]> {
    const variants = new Map<string, number>()
    const perUser: (string | number)[] = []
    for (const targets of users) {
      perUser.push(this.base((targets[0] as Target).desc.userId), targets.length)
      for (const { desc, serialized } of targets) {
        let numbers = ''
        for (const json of serialized) {
          let v = variants.get(json)
          if (v === undefined) variants.set(json, (v = variants.size + 1))
          numbers += numbers === '' ? String(v) : `,${v}`
        }
        perUser.push(desc.queueId, numbers)
      }
    }
    return (await APPEND_U.run(
      this.redis,
      users.map((targets) => `${this.base((targets[0] as Target).desc.userId)}m`),
      [this.maxEvents, this.nodeChannelPrefix, variants.size, ...variants.keys(), ...perUser], this.wakes
    )) as number[]
  }

  async heartbeat(desc: QueueDescriptor): Promise<void> {
    const serialized = [serializeEvent(heartbeatEvent())]
    const [firstId] = await this.runAppend([[{ desc, serialized }]])
    if (firstId !== undefined && firstId >= 0) this.appendedHere(desc.queueId, firstId, serialized, queuedEventMaker())
    else this.forgetQueue(desc.queueId)
  }

  async park(desc: QueueDescriptor, holder: Holder): Promise<boolean> {
    const [cursor, , , holderKey] = this.queueKeys(desc) as [string, string, string, string]
    const ok = await PARK.run(this.redis, [cursor, holderKey], [`${holder.nodeId}|${holder.token}`, this.nodeChannelPrefix, desc.queueId], this.wakes)
    return ok === 1
  }

  async unpark(released: HeldPoll[]): Promise<void> {
    const calls: Promise<unknown>[] = []
    for (const slotGroup of groupBySlot(released, ({ desc }) => this.base(desc.userId), this.bySlot)) {
      for (let start = 0; start < slotGroup.length; start += UNPARK_CHUNK) {
        const chunk = slotGroup.slice(start, start + UNPARK_CHUNK)
        calls.push(UNPARK.run(this.redis, chunk.map(({ desc }) => this.queueKeys(desc)[3] as string), chunk.map(({ holder }) => `${holder.nodeId}|${holder.token}`)))
      }
    }
    await Promise.all(calls)
  }

  listen(nodeId: string, onSignal: (signal: WakeSignal) => void): Promise<() => Promise<void>> {
    return this.signals.listen(nodeId, this.nodeChannelPrefix + nodeId, onSignal)
  }

  onChannel(channel: string, handler: (message: string) => void): Promise<() => Promise<void>> {
    return this.signals.onChannel(channel, handler)
  }

  async close(): Promise<void> {
    if (this.touchTimer) clearTimeout(this.touchTimer)
    this.touchTimer = undefined
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
      const raws = await this.getMany(missing.map((id) => this.descKey(id)))
      raws.forEach((raw, i) => {
        if (raw !== null) out.set(missing[i] as string, this.remember(JSON.parse(raw) as QueueDescriptor))
      })
    }
    return out
  }

  private remember(desc: QueueDescriptor): QueueDescriptor {
    setBounded(this.descriptors, desc.queueId, desc)
    return desc
  }
}
