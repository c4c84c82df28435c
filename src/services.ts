// Builds the shared services of a node from its configuration: database
// (PGlite or PostgreSQL) and event bus (in-process or Redis).
import { randomUUID } from 'node:crypto'
import type { Config } from './config.js'
import type { Services } from './actions/context.js'
import { openDatabase, type Database } from './db/client.js'
import { createAuthCache } from './db/auth-cache.js'
import { applyMigrations } from './db/migrate.js'
import type { EventBus } from './events/bus.js'
import { MemoryEventBus } from './events/memory-bus.js'
import { eventQueuesFor } from './events/queues/index.js'
import { createStorage } from './storage/file-storage.js'
import { presenceStoreFor } from './presence/index.js'
import { MemoryRateLimiter, NoRateLimiter, type RateLimiter } from './ratelimit/limiter.js'
import { Metrics, countingBus } from './metrics.js'

export interface NodeServices extends Services {
  database: Database
  close(): Promise<void>
}

export interface OpenServicesOptions {
  /** In-memory PGlite (tests). */
  inMemory?: boolean
  /** Overrides the bus chosen from the configuration. */
  bus?: EventBus
  log?: (msg: string) => void
}

export async function createBus(config: Config, options: { redisPrefix?: string } = {}): Promise<EventBus> {
  if (!config.redisUrl) return new MemoryEventBus()
  const { RedisEventBus } = await import('./events/redis-bus.js')
  return RedisEventBus.connect(config.redisUrl, { prefix: options.redisPrefix ?? config.redisPrefix })
}

/** Services of one node over an already open database; closing them leaves the database open. */
export function servicesOver(
  config: Config,
  database: Database,
  bus: EventBus,
  limiter: RateLimiter = config.rateLimiting ? new MemoryRateLimiter() : new NoRateLimiter(),
): Services & { database: Database } {
  const nodeId = randomUUID()
  const now = () => new Date()
  const events = eventQueuesFor(bus, config, nodeId)
  // Its invalidation listener starts with the first request and closes with the app (app.ts).
  const authCache = createAuthCache(database)
  const metrics = new Metrics({ config, prisma: database.prisma, database, bus, events, authCache, now })
  return {
    database,
    prisma: database.prisma,
    // Publishes are counted; queue stores and presence below get the node's bus itself.
    bus: countingBus(bus, metrics),
    config,
    nodeId,
    now,
    limiter,
    events,
    storage: createStorage(config),
    presence: presenceStoreFor(bus),
    authCache,
    metrics,
  }
}

export async function createLimiter(config: Config, options: { redisPrefix?: string } = {}): Promise<RateLimiter> {
  if (!config.rateLimiting) return new NoRateLimiter()
  if (!config.redisUrl) return new MemoryRateLimiter()
  const { RedisRateLimiter } = await import('./ratelimit/redis-limiter.js')
  return RedisRateLimiter.connect(config.redisUrl, options.redisPrefix ?? config.redisPrefix)
}

export async function openServices(config: Config, options: OpenServicesOptions = {}): Promise<NodeServices> {
  const database = await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, inMemory: options.inMemory })
  try {
    await applyMigrations(database, options.log)
    await createStorage(config).check()
    const bus = options.bus ?? (await createBus(config))
    const limiter = await createLimiter(config)
    const services = servicesOver(config, database, bus, limiter)
    return {
      ...services,
      async close() {
        await services.authCache.close()
        await limiter.close()
        await bus.close()
        await database.close()
      },
    }
  } catch (error) {
    await database.close()
    throw error
  }
}
