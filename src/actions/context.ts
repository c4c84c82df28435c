// What every action receives, and the one way actions change state:
// a transaction whose events are published only after it commits.
import type { FastifyBaseLogger } from 'fastify'
import type { Config } from '../config.js'
import type { PrismaClient, Tx } from '../db/index.js'
import { notifyUserDataChanged } from '../db/send-queries.js'
import type { BusItem, ChatEvent, EventBus } from '../events/bus.js'
import type { Realm, User } from '../db/index.js'
import type { RateLimiter } from '../ratelimit/limiter.js'
import type { EventQueues } from '../events/queues/index.js'
import type { FileStorage } from '../storage/file-storage.js'
import type { PresenceStore } from '../presence/store.js'
import type { PresenceMirror } from '../presence/mirror.js'
import type { PresenceDirectory } from '../queries/presence-directory.js'
import type { AuthCache } from '../db/auth-cache.js'
import type { UserDataCache } from '../db/user-data-cache.js'
import type { OwnUserRows } from '../queries/users.js'
import type { Metrics } from '../metrics.js'

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

export interface Emission {
  event: ChatEvent
  userIds: number[]
  perUser?: Record<number, Record<string, unknown>>
  publicStreamId?: number
}

export type Emit = (event: ChatEvent, userIds: number[], extra?: Omit<Emission, 'event' | 'userIds'>) => void

/**
 * What code inside a transaction may use besides its `tx`: the context
 * without the database client. Helpers called from an `inTransaction`
 * callback take this (and `tx`), never the full context, so none of their
 * queries can run outside the transaction: on PGlite's single connection
 * such a query would wait for the transaction, which waits for it.
 * (test/actions/transaction-scope.test.ts also checks the callbacks.)
 */
export type TxContext = Omit<ActionContext, 'prisma'>

/** The current transaction's ID; its events carry it so register can tell what its snapshot already contains. */
export async function transactionId(tx: Tx): Promise<string> {
  const [row] = await tx.$queryRaw<{ xid: string }[]>`SELECT pg_current_xact_id()::text AS xid`
  return row?.xid ?? '0'
}

export async function inTransaction<T>(ctx: Services & { realm: Realm }, fn: (tx: Tx, emit: Emit) => Promise<T>): Promise<T> {
  const emitted: Emission[] = []
  let xid: string | undefined
  const result = await ctx.prisma.$transaction(
    async (tx) => {
      const out = await fn(tx, (event, userIds, extra) => emitted.push({ event, userIds, ...extra }))
      if (emitted.length > 0) xid = await transactionId(tx)
      return out
    },
    { maxWait: 10_000, timeout: 30_000 },
  )
  await publishAll(ctx, emitted, xid)
  return result
}

/**
 * After a send's commit: tells the nodes' user-data caches which users
 * received it (db/send-queries.ts, notifyUserDataChanged). The message is
 * stored whatever happens here: a failure is logged, and the caches' entries
 * of those users expire by their TTL.
 */
export async function announceRecipients(ctx: Services & { log: FastifyBaseLogger }, userIds: readonly number[]): Promise<void> {
  await notifyUserDataChanged(ctx.prisma, userIds).catch((error: unknown) =>
    ctx.log.warn({ err: error }, 'announcing a send to the user-data caches failed; their entries of its recipients expire by TTL'),
  )
}

export async function publishAll(ctx: Services & { realm: Realm }, emissions: Emission[], xid?: string): Promise<void> {
  const items = emissions
    .filter(({ userIds, publicStreamId }) => userIds.length > 0 || publicStreamId !== undefined)
    .map(({ event, userIds, perUser, publicStreamId }): BusItem => ({ realmId: ctx.realm.id, userIds, event, perUser, publicStreamId, origin: ctx.nodeId, ...(xid ? { xid } : {}) }))
  // Together when the bus can: each queue then gets an action's events in one append and one wake-up.
  if (items.length > 1 && ctx.bus.publishMany) return ctx.bus.publishMany(items)
  for (const item of items) await ctx.bus.publish(item)
}
