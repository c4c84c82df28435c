// Builds the shared services of a node from its configuration: the database
// (PGlite or PostgreSQL) and the backends (backends/index.ts: in process or
// Redis, Redis Cluster, Sentinel).
import { randomUUID } from 'node:crypto'
import type { Config } from './config.js'
import type { Services } from './services.js'
import { openDatabase, type Database } from './db/client.js'
import { createAuthCache } from './db/auth-cache.js'
import { PresenceMirror } from './presence/mirror.js'
import { createPresenceDirectory } from './queries/presence-directory.js'
import { createOwnUserCache } from './queries/users.js'
import { applyMigrations } from './db/migrate.js'
import { eventQueuesFor } from './events/queues/index.js'
import { createStorage } from './storage/create-storage.js'
import { openBackends, type BackendLog, type Backends } from './backends/index.js'
import { Metrics, countingBus } from './metrics.js'
import { timeQueries } from './db/query-timing.js'
import { countDue } from './scheduler/delivery.js'
import { countPendingMissedMessageEmails, countPendingPushNotifications } from './notifications/enqueue.js'

export interface NodeServices extends Services {
  database: Database
  close(): Promise<void>
}

export interface OpenServicesOptions {
  /** In-memory PGlite (tests). */
  inMemory?: boolean
  /** Migration progress. */
  log?: (msg: string) => void
  /** The application's logger, for the backends (Redis connection, background errors). */
  backendLog?: BackendLog
}

/** Services of one node over an already open database and backends; closing them leaves both open. */
export function servicesOver(config: Config, database: Database, backends: Backends): Services & { database: Database } {
  const nodeId = randomUUID()
  const now = () => new Date()
  const events = eventQueuesFor(backends.queues, config, nodeId, (error) => backends.reportError(error))
  // Its invalidation listener starts with the first request and closes with the app (app.ts).
  const authCache = createAuthCache(database)
  // Its invalidation listener, too, starts with the first use and closes with the app.
  const userDataCache = createOwnUserCache(database)
  const backlogs = {
    scheduledMessagesDue: () => countDue(database.prisma, now()),
    missedMessageEmailsPending: () => countPendingMissedMessageEmails(database.prisma),
    pushNotificationsPending: () => countPendingPushNotifications(database.prisma),
  }
  const metrics = new Metrics({ config, backlogs, database, backendErrors: () => backends.errorCount(), events, authCache, userDataCache })
  // Latency of every PostgreSQL statement and Redis command (PGlite, in process, has none to report).
  if (database.pool) timeQueries(database.pool, (seconds) => metrics.dbQueryDuration.observe(seconds))
  backends.watchCommands?.((command, seconds) => metrics.redisCommandDuration.observe({ command }, seconds))
  return {
    database,
    prisma: database.prisma,
    // Publishes are counted; the queue store and presence below are the backends' own.
    bus: countingBus(backends.bus, metrics),
    config,
    nodeId,
    now,
    limiter: backends.limiter,
    events,
    storage: createStorage(config),
    presence: backends.presence,
    presenceMirror: new PresenceMirror(backends.presence),
    // Its invalidation listener, too, starts with the first use and closes with the app.
    presenceDirectory: createPresenceDirectory(database),
    authCache,
    userDataCache,
    metrics,
  }
}

export async function openServices(config: Config, options: OpenServicesOptions = {}): Promise<NodeServices> {
  const database = await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, inMemory: options.inMemory })
  try {
    await applyMigrations(database, options.log)
    await createStorage(config).check()
    const backends = await openBackends(config, { log: options.backendLog })
    const services = servicesOver(config, database, backends)
    return {
      ...services,
      async close() {
        await services.authCache.close()
        await services.presenceDirectory.close()
        await services.userDataCache.close()
        await backends.close()
        await database.close()
      },
    }
  } catch (error) {
    await database.close()
    throw error
  }
}
