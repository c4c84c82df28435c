// What a node's code receives: the shared services of a node (built by
// node-services.ts) and the context of one request or action. Types only, so
// that every layer may name them.
import type { FastifyBaseLogger } from 'fastify'
import type { Config } from './config.js'
import type { PrismaClient, Realm, User } from './db/index.js'
import type { EventBus } from './events/bus.js'
import type { RateLimiter } from './ratelimit/limiter.js'
import type { EventQueues } from './events/queues/index.js'
import type { FileStorage } from './storage/file-storage.js'
import type { PresenceStore } from './presence/store.js'
import type { PresenceMirror } from './presence/mirror.js'
import type { PresenceDirectory } from './queries/presence-directory.js'
import type { AuthCache } from './db/auth-cache.js'
import type { UserDataCache } from './db/user-data-cache.js'
import type { OwnUserRows } from './queries/users.js'
import type { Metrics } from './metrics.js'

export interface Services {
  prisma: PrismaClient
  bus: EventBus
  config: Config
  nodeId: string
  now: () => Date
  limiter: RateLimiter
  /** Event queues of this node: register, long-poll, delete, drain (HTTP layer only; actions publish through bus). */
  events: EventQueues
  /** Uploaded files (local disk or S3). */
  storage: FileStorage
  /** Users' presence (in-process or Redis, like the bus). */
  presence: PresenceStore
  /** This node's copy of the realms' presence rows, refreshed from `presence` on every read. */
  presenceMirror: PresenceMirror
  /** This node's cache of the users realm-wide presence lists (email, join date, listed). */
  presenceDirectory: PresenceDirectory
  /** This node's cache of the authentication lookups (HTTP layer only). */
  authCache: AuthCache
  /** This node's cache of GET /users/me's rows besides the user's own (HTTP layer only). */
  userDataCache: UserDataCache<OwnUserRows>
  /** This node's Prometheus metrics (served at /metrics when METRICS_TOKEN is set). */
  metrics: Metrics
}

export interface RequestContext extends Services {
  realm: Realm
  log: FastifyBaseLogger
  /** Sending client name (the `client` parameter or the User-Agent's first word). */
  clientName: string
}

export interface ActionContext extends RequestContext {
  user: User
}

/**
 * What code inside a transaction may use besides its `tx`: the context
 * without the database client. Helpers called from an `inTransaction`
 * callback take this (and `tx`), never the full context, so none of their
 * queries can run outside the transaction: on PGlite's single connection
 * such a query would wait for the transaction, which waits for it.
 * (test/actions/transaction-scope.test.ts also checks the callbacks.)
 */
export type TxContext = Omit<ActionContext, 'prisma'>
