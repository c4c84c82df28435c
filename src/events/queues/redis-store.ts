// Redis queue store: any node serves any queue. The publishing node fans an
// item out (filters in JS, one atomic Lua call appends to every target
// queue); the node holding a long-poll is woken by PUBLISH on its own channel.
// Layout: see lua.ts.
import type { Redis } from 'ioredis'
import { DEFAULT_EVENT_QUEUE_MAX_EVENTS } from '../../config.js'
import type { BusItem, ChatEvent } from '../bus.js'
import { eventsForQueue } from './filter.js'
import { APPEND, CREATE, FETCH, PARK, REMOVE, UNPARK } from './lua.js'
import type { FetchOutcome, Holder, QueueDescriptor, QueuedEvent, QueueStore, WakeSignal } from './types.js'

/** Queues per APPEND call: bounds one script's run time. */
const APPEND_CHUNK = 256
const DESCRIPTOR_CACHE_SIZE = 50_000

export class RedisQueueStore implements QueueStore {
  private maxEvents = DEFAULT_EVENT_QUEUE_MAX_EVENTS
  /** Descriptors never change after creation, so any node may cache them. */
  private readonly descriptors = new Map<string, QueueDescriptor>()
  /** Handlers of the subscriber connection, by channel. */
  private readonly channels = new Map<string, (message: string) => void>()
  private subscriber: Redis | undefined

  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
    private readonly onError: (error: unknown) => void = () => {},
  ) {}

  setMaxEvents(max: number): void {
    this.maxEvents = max
  }

  private key(queueId: string, part = ''): string {
    return `${this.prefix}:q:${queueId}${part}`
  }
  private userKey(userId: number): string {
    return `${this.prefix}:u:${userId}`
  }
  private realmPublicKey(realmId: number): string {
    return `${this.prefix}:r:${realmId}:public`
  }
  private get nodeChannelPrefix(): string {
    return `${this.prefix}:node:`
  }
  private queueKeys(desc: QueueDescriptor): string[] {
    const id = desc.queueId
    return [this.key(id), this.key(id, ':m'), this.key(id, ':e'), this.key(id, ':h'), this.userKey(desc.userId), this.realmPublicKey(desc.realmId)]
  }

  async create(desc: QueueDescriptor): Promise<void> {
    await CREATE.run(
      this.redis,
      [this.key(desc.queueId), this.key(desc.queueId, ':m'), this.userKey(desc.userId), this.realmPublicKey(desc.realmId)],
      [JSON.stringify(desc), desc.lifespanSecs * 1000, desc.queueId, desc.allPublicStreams ? 1 : 0],
    )
    this.remember(desc)
  }

  async setSnapshot(queueId: string, snapshot: string, ttlSecs: number): Promise<void> {
    await this.redis.set(this.key(queueId, ':s'), snapshot, 'EX', ttlSecs)
  }

  async snapshotOf(queueId: string): Promise<string | null> {
    return this.redis.get(this.key(queueId, ':s'))
  }

  async describe(queueId: string): Promise<QueueDescriptor | null> {
    const raw = await this.redis.get(this.key(queueId))
    if (raw === null) {
      this.descriptors.delete(queueId)
      return null
    }
    return this.remember(this.descriptors.get(queueId) ?? (JSON.parse(raw) as QueueDescriptor))
  }

  async fetch(desc: QueueDescriptor, lastEventId: number): Promise<FetchOutcome> {
    const reply = (await FETCH.run(this.redis, this.queueKeys(desc), [lastEventId, desc.lifespanSecs * 1000])) as [string, unknown?]
    switch (reply[0]) {
      case 'ok':
        return { kind: 'ok', events: (reply[1] as string[]).map((json) => JSON.parse(json) as QueuedEvent) }
      case 'pruned':
        return { kind: 'pruned', newestPruned: Number(reply[1]) }
      case 'ahead':
        return { kind: 'ahead' }
      default:
        this.descriptors.delete(desc.queueId)
        return { kind: 'gone' }
    }
  }

  async remove(desc: QueueDescriptor): Promise<boolean> {
    this.descriptors.delete(desc.queueId)
    const existed = await REMOVE.run(this.redis, this.queueKeys(desc), [desc.queueId, this.nodeChannelPrefix])
    return existed === 1
  }

  async append(item: BusItem): Promise<void> {
    // 1. Target queues: the recipients' queues, plus all_public_streams queues for public-channel messages.
    const sources = new Map<string, string[]>()
    const indexKeys = item.userIds.map((id) => this.userKey(id))
    if (item.publicStreamId !== undefined && item.event.type === 'message') indexKeys.push(this.realmPublicKey(item.realmId))
    if (indexKeys.length === 0) return
    const pipeline = this.redis.pipeline()
    for (const key of indexKeys) pipeline.smembers(key)
    const members = (await pipeline.exec()) ?? []
    members.forEach(([error, ids], i) => {
      if (error) throw error
      for (const id of ids as string[]) {
        const list = sources.get(id) ?? []
        list.push(indexKeys[i] as string)
        sources.set(id, list)
      }
    })
    if (sources.size === 0) return

    // 2. Descriptors (cached; missing ones are gone and leave the indexes).
    const descs = await this.loadDescriptors([...sources.keys()])
    const stale: [string, string][] = []
    const targets: { desc: QueueDescriptor; events: ChatEvent[] }[] = []
    for (const [queueId, keys] of sources) {
      const desc = descs.get(queueId)
      if (!desc) {
        for (const k of keys) stale.push([k, queueId])
        continue
      }
      const events = eventsForQueue(desc, item)
      if (events.length > 0) targets.push({ desc, events })
    }

    // 3. Append atomically per chunk of queues.
    for (let start = 0; start < targets.length; start += APPEND_CHUNK) {
      const chunk = targets.slice(start, start + APPEND_CHUNK)
      const keys: string[] = []
      const args: (string | number)[] = [this.maxEvents, this.nodeChannelPrefix, chunk.length]
      for (const { desc, events } of chunk) {
        keys.push(this.key(desc.queueId), this.key(desc.queueId, ':m'), this.key(desc.queueId, ':e'), this.key(desc.queueId, ':h'))
        args.push(desc.queueId, events.length, ...events.map(serializeEvent))
      }
      const statuses = (await APPEND.run(this.redis, keys, args)) as number[]
      statuses.forEach((status, i) => {
        if (status === 1) return
        const { desc } = chunk[i] as { desc: QueueDescriptor }
        this.descriptors.delete(desc.queueId)
        stale.push([this.userKey(desc.userId), desc.queueId])
        if (desc.allPublicStreams) stale.push([this.realmPublicKey(desc.realmId), desc.queueId])
      })
    }
    if (stale.length > 0) {
      const cleanup = this.redis.pipeline()
      for (const [key, queueId] of stale) cleanup.srem(key, queueId)
      await cleanup.exec()
    }
  }

  async heartbeat(desc: QueueDescriptor): Promise<void> {
    await APPEND.run(
      this.redis,
      [this.key(desc.queueId), this.key(desc.queueId, ':m'), this.key(desc.queueId, ':e'), this.key(desc.queueId, ':h')],
      [this.maxEvents, this.nodeChannelPrefix, 1, desc.queueId, 1, serializeEvent({ type: 'heartbeat' })],
    )
  }

  async park(desc: QueueDescriptor, holder: Holder): Promise<boolean> {
    const ok = await PARK.run(this.redis, [this.key(desc.queueId), this.key(desc.queueId, ':h')], [
      `${holder.nodeId}|${holder.token}`,
      this.nodeChannelPrefix,
      desc.queueId,
    ])
    return ok === 1
  }

  async unpark(desc: QueueDescriptor, holder: Holder): Promise<void> {
    await UNPARK.run(this.redis, [this.key(desc.queueId, ':h')], [`${holder.nodeId}|${holder.token}`])
  }

  async listen(nodeId: string, onSignal: (signal: WakeSignal) => void): Promise<() => Promise<void>> {
    return this.onChannel(this.nodeChannelPrefix + nodeId, (message) => {
      const [kind, queueId, token] = message.split(' ')
      if (kind === 'w' && queueId) onSignal({ kind: 'wake', queueId })
      else if (kind === 's' && queueId && token) onSignal({ kind: 'supersede', queueId, token })
    })
  }

  /** Subscribes `handler` to a channel on the shared subscriber connection; returns the unsubscribe. */
  async onChannel(channel: string, handler: (message: string) => void): Promise<() => Promise<void>> {
    const subscriber = this.subscriberConnection()
    this.channels.set(channel, handler)
    await subscriber.subscribe(channel)
    return async () => {
      if (this.channels.get(channel) !== handler) return
      this.channels.delete(channel)
      if (subscriber.status === 'ready') await subscriber.unsubscribe(channel).catch(this.onError)
    }
  }

  /** Subscribe-mode connection shared by wake-ups and bus subscriptions. */
  private subscriberConnection(): Redis {
    if (!this.subscriber) {
      this.subscriber = this.redis.duplicate()
      this.subscriber.on('error', this.onError)
      this.subscriber.on('message', (channel: string, message: string) => this.channels.get(channel)?.(message))
    }
    return this.subscriber
  }

  async close(): Promise<void> {
    this.channels.clear()
    if (this.subscriber) {
      this.subscriber.disconnect()
      this.subscriber = undefined
    }
  }

  private async loadDescriptors(queueIds: string[]): Promise<Map<string, QueueDescriptor>> {
    const out = new Map<string, QueueDescriptor>()
    const missing = queueIds.filter((id) => {
      const cached = this.descriptors.get(id)
      if (cached) out.set(id, cached)
      return !cached
    })
    if (missing.length > 0) {
      const raws = await this.redis.mget(missing.map((id) => this.key(id)))
      raws.forEach((raw, i) => {
        if (raw !== null) out.set(missing[i] as string, this.remember(JSON.parse(raw) as QueueDescriptor))
      })
    }
    // A cached descriptor may belong to a collected queue: APPEND reports it as gone.
    return out
  }

  private remember(desc: QueueDescriptor): QueueDescriptor {
    if (this.descriptors.size >= DESCRIPTOR_CACHE_SIZE) {
      const oldest = this.descriptors.keys().next().value
      if (oldest !== undefined) this.descriptors.delete(oldest)
    }
    this.descriptors.set(desc.queueId, desc)
    return desc
  }
}

function serializeEvent(event: ChatEvent): string {
  const { id: _id, ...rest } = event
  return JSON.stringify(rest)
}
