// Cluster bus over Redis (REDIS_URL). publish() runs the fan-out on the
// publishing node: the item is filtered per target queue and appended to the
// queues in Redis atomically, and the nodes holding those queues' polls are
// woken by PUBLISH. Items are also PUBLISHed on `<prefix>:items` so
// subscribe() sees every item of the cluster. Layout: events/queues/lua.ts.
import { Redis } from 'ioredis'
import type { BusItem, EventBus } from './bus.js'
import { RedisQueueStore } from './queues/redis-store.js'
import { REDIS_OPTIONS } from '../redis-options.js'

export interface RedisEventBusOptions {
  prefix: string
  onError?: (error: unknown) => void
}

export class RedisEventBus implements EventBus {
  readonly queues: RedisQueueStore
  /** Errors seen on the connections (readiness reports them). */
  errors = 0
  private readonly listeners = new Set<(item: BusItem) => void>()
  private unsubscribeItems: Promise<() => Promise<void>> | undefined

  private constructor(
    readonly redis: Redis,
    readonly prefix: string,
    private readonly reportError: (error: unknown) => void,
  ) {
    this.queues = new RedisQueueStore(redis, prefix, (error) => this.onError(error))
    redis.on('error', (error: unknown) => this.onError(error))
  }

  static async connect(url: string, options: RedisEventBusOptions): Promise<RedisEventBus> {
    // Auto-pipelining sends the commands issued in one tick (e.g. the fetches of
    // every poll a broadcast woke) in one write.
    const redis = new Redis(url, { ...REDIS_OPTIONS, enableAutoPipelining: true })
    await redis.connect()
    return new RedisEventBus(redis, options.prefix, options.onError ?? ((error) => process.stderr.write(`roost: redis bus: ${String(error)}\n`)))
  }

  /** Counts and reports an error of the event system's Redis work (also used by the queue layer). */
  onError(error: unknown): void {
    this.errors++
    this.reportError(error)
  }

  async check(): Promise<void> {
    if (this.redis.status !== 'ready') throw new Error(`redis connection is ${this.redis.status}`)
    await this.redis.ping()
  }

  async publish(item: BusItem): Promise<void> {
    await this.queues.append(item)
    await this.redis.publish(`${this.prefix}:items`, JSON.stringify(item))
  }

  subscribe(onItem: (item: BusItem) => void): () => void {
    this.listeners.add(onItem)
    this.unsubscribeItems ??= this.queues.onChannel(`${this.prefix}:items`, (message) => {
      const item = JSON.parse(message) as BusItem
      for (const listener of [...this.listeners]) listener(item)
    })
    this.unsubscribeItems.catch((error: unknown) => this.onError(error))
    return () => {
      this.listeners.delete(onItem)
    }
  }

  /** Resolves when the items subscription (if any) is active. */
  async ready(): Promise<void> {
    await this.unsubscribeItems
  }

  async close(): Promise<void> {
    this.listeners.clear()
    await this.queues.close()
    if (this.redis.status === 'ready') await this.redis.quit().catch(() => undefined)
    else this.redis.disconnect()
  }
}
