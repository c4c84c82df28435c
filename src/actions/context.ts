// What every action receives, and the one way actions change state:
// a transaction whose events are published only after it commits.
// The context types are defined in services.ts (access/, queries/ and the
// workers use them too); they are re-exported here for the actions.
import type { FastifyBaseLogger } from 'fastify'
import type { Realm, Tx } from '../db/index.js'
import { notifyUserDataChanged } from '../db/send-queries.js'
import type { BusItem } from '../events/bus.js'
import type { BuiltEvent } from '../events/schemas/index.js'
import type { Services } from '../services.js'

export type { ActionContext, RequestContext, Services, TxContext } from '../services.js'

/** An event to publish, made by its builder in events/schemas (an object literal does not type-check here). */
export interface Emission {
  event: BuiltEvent
  userIds: number[]
  perUser?: Record<number, Record<string, unknown>>
  publicStreamId?: number
}

export type Emit = (event: BuiltEvent, userIds: number[], extra?: Omit<Emission, 'event' | 'userIds'>) => void

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
