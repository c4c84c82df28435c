// The one place that chooses the backends of a node from the configuration:
// the event bus, the queue store, the presence store and the rate limiter,
//   no Redis configured                 in process (one node only)
//   REDIS_URL / _CLUSTER_NODES / _SENTINELS   Redis, one connection shared by the four
// Nothing else inspects which backend it got: the rest of the code sees the
// interfaces only (EventBus, QueueStore, PresenceStore, RateLimiter).
import type { Config } from '../config.js'
import type { BusItem, EventBus } from '../events/bus.js'
import { MemoryEventBus } from '../events/memory-bus.js'
import { RedisEventBus } from '../events/redis-bus.js'
import { MemoryQueueStore } from '../events/queues/memory-store.js'
import { RedisQueueStore } from '../events/queues/redis-store.js'
import type { QueueStore } from '../events/queues/types.js'
import { MemoryPresenceStore, type PresenceStore } from '../presence/store.js'
import { RedisPresenceStore } from '../presence/redis-store.js'
import { MemoryRateLimiter, NoRateLimiter, type RateLimiter } from '../ratelimit/limiter.js'
import { RedisRateLimiter } from '../ratelimit/redis-limiter.js'
import { RedisConnection, redisTargetOf, timeCommands, type RedisTarget } from '../redis-connection.js'

export { RedisStartupError } from '../redis-connection.js'

export interface Backends {
  /** Publishing appends to the target queues first, then tells every node's subscribers. */
  bus: EventBus
  queues: QueueStore
  presence: PresenceStore
  limiter: RateLimiter
  /** Reports an error of background work (a subscription, a poll's clean-up): logged and counted. */
  reportError(error: unknown): void
  /** Errors reported so far (the roost_bus_errors_total metric). */
  errorCount(): number
  /** Times every Redis command of the shared connection (absent without Redis). */
  watchCommands?(observe: (command: string, seconds: number) => void): void
  close(): Promise<void>
}

/** Where the backends log (the application's logger; pino's signature). */
export interface BackendLog {
  info(msg: string): void
  warn(obj: object, msg: string): void
}

export interface BackendOptions {
  /** Overrides REDIS_PREFIX (tests sharing one Redis use their own). */
  redisPrefix?: string
  log?: BackendLog
}

/** Without the application's logger (tests, the admin CLI, benchmarks): problems only, on stderr. */
const STDERR_LOG: BackendLog = {
  info: () => undefined,
  warn: (obj, msg) => process.stderr.write(`roost: ${msg}: ${String((obj as { err?: unknown }).err ?? JSON.stringify(obj))}\n`),
}

/** The backends the configuration asks for; with Redis, connects and checks it (RedisStartupError names the variable). */
export async function openBackends(config: Config, options: BackendOptions = {}): Promise<Backends> {
  const target = redisTargetOf(config)
  if (!target) return memoryBackends(config, { log: options.log })
  return redisBackends(config, target, options)
}

/**
 * In-process backends. Nodes (apps) built on one bus share its queue store,
 * as they would share Redis: the store appends every item the bus delivers.
 */
export function memoryBackends(config: Pick<Config, 'rateLimiting'>, options: { bus?: EventBus; log?: BackendLog } = {}): Backends {
  const bus = options.bus ?? new MemoryEventBus()
  const log = options.log ?? STDERR_LOG
  let errors = 0
  return {
    bus,
    queues: memoryQueueStoreOf(bus),
    presence: new MemoryPresenceStore(),
    limiter: config.rateLimiting ? new MemoryRateLimiter() : new NoRateLimiter(),
    reportError(error) {
      errors++
      log.warn({ err: error }, 'event queues')
    },
    errorCount: () => errors,
    close: () => bus.close(),
  }
}

const memoryStores = new WeakMap<EventBus, MemoryQueueStore>()

/** The in-process queue store fed by `bus` (one per bus). */
export function memoryQueueStoreOf(bus: EventBus): MemoryQueueStore {
  let store = memoryStores.get(bus)
  if (!store) {
    const created = new MemoryQueueStore()
    memoryStores.set(bus, created)
    bus.subscribe((item) => created.appendNow(item))
    store = created
  }
  return store
}

async function redisBackends(config: Config, target: RedisTarget, options: BackendOptions): Promise<Backends> {
  const log = options.log ?? STDERR_LOG
  const prefix = options.redisPrefix ?? config.redisPrefix
  const connection = await RedisConnection.open(target, log)
  let errors = 0
  const reportError = (error: unknown) => {
    errors++
    log.warn({ err: error }, 'redis')
  }
  connection.client.on('error', reportError)
  // On a cluster that knows SPUBLISH, queue wake-ups use shard channels, as the bus does.
  const storeOptions = { onError: reportError, sharded: connection.sharded }
  const queues = new RedisQueueStore(connection.client, prefix, storeOptions)
  const items = new RedisEventBus(connection, prefix, reportError)
  return {
    bus: appendingBus(queues, items),
    queues,
    presence: new RedisPresenceStore(connection.client, prefix),
    limiter: config.rateLimiting ? new RedisRateLimiter(connection.client, prefix) : new NoRateLimiter(),
    reportError,
    errorCount: () => errors,
    watchCommands: (observe) => timeCommands(connection.client, observe),
    async close() {
      await items.close()
      await queues.close()
      await connection.close()
    },
  }
}

/**
 * The Redis fan-out runs on the publishing node: the item is appended to
 * every queue that accepts it (waking the nodes holding their polls), then
 * published to the subscribers of every node.
 */
function appendingBus(queues: QueueStore, bus: EventBus): EventBus {
  return {
    async publish(item: BusItem) {
      await queues.append(item)
      await bus.publish(item)
    },
    async publishMany(items: BusItem[]) {
      if (queues.appendMany) await queues.appendMany(items)
      else for (const item of items) await queues.append(item)
      for (const item of items) await bus.publish(item)
    },
    subscribe: (onItem) => bus.subscribe(onItem),
    check: () => bus.check(),
    close: () => bus.close(),
  }
}
