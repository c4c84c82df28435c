// The one mechanism of durable background work, safe on any number of nodes:
// missed-message emails (notifications/delivery.ts), push notifications
// (notifications/push-delivery.ts) and scheduled messages
// (scheduler/delivery.ts) are rows of a table, and every node runs the same
// steps on them; so is the daily recheck of channels' is_recently_active
// (scheduler/stream-activity.ts), one row per realm.
//
// - Probe (`anyDue`): one prepared statement outside any transaction says
//   whether a row is due; only then does a node open a claim transaction, so
//   an idle tick costs one statement (the loops tick every 100 ms to 1 s).
//   The probe ignores row locks: a row another node is claiming reads as due
//   and the claim then finds nothing.
// - Lock (`lockDue`): `SELECT … FOR UPDATE SKIP LOCKED` of due rows inside a
//   transaction; other nodes skip them. Scheduled delivery sends inside that
//   transaction (a committed `delivered` excludes the row from every later
//   claim), so it needs no lease.
// - Lease (`claimLeased`): for work that talks to the outside (SMTP, push
//   providers) and must not hold a transaction open, the lock is turned into a
//   lease (claimed_by = this node, claim_expires_at = now + lease) and
//   committed. Rows under a live lease are not due; a node that dies leaves
//   rows whose lease expires, and another node claims them.
//   `renewLeases` extends a lease before a slow step and drops the rows whose
//   lease lapsed (they belong to whoever claimed them since).
// - Settle (`settleLeased`): deletes the rows, only while leased to this node.
// - Retry (`retryLeased`): a failure keeps the rows: attempts + 1, last_error,
//   due again after a capped exponential backoff (`backoffMs`), the lease
//   released; past `maxAttempts` (when given) they are deleted instead.
//   Failures are counted by the caller's counter (the metrics below).
// - Loop (jobs/loop.ts): each node's timer runs the probe and the step.
// - Metrics: the backlog gauges (`countRows`, and scheduler/delivery.ts's
//   countDue) and the failure counters of metrics.ts.
//
// Measured alternative: a maintained PostgreSQL job queue (pg-boss) keeps its
// jobs in its own tables and needs a pg Pool or an adapter; see
// docs/architecture.md ("Background jobs") for why Roost keeps this module.
import { Prisma, type PrismaClient, type Tx } from '../db/index.js'
import { fastRead } from '../db/fast-read.js'

/** A due condition with `now` (a timestamptz expression) in it. */
type DueCondition = (now: Prisma.Sql) => Prisma.Sql

const dueAndNotLeased: DueCondition = (now) => Prisma.sql`due_at <= ${now} AND (claim_expires_at IS NULL OR claim_expires_at <= ${now})`

/** What "due" means for each table of jobs (the probe and the claims use it alike). */
const DUE = {
  scheduled_message: ((now) => Prisma.sql`NOT delivered AND NOT failed AND scheduled_timestamp <= ${now}`) as DueCondition,
  missed_message_email: dueAndNotLeased,
  missed_push_notification: dueAndNotLeased,
  // One row per realm, locked while its channels are rechecked (scheduler/stream-activity.ts).
  stream_activity_check: ((now) => Prisma.sql`due_at <= ${now}`) as DueCondition,
} as const

export type JobTable = keyof typeof DUE
/** The tables whose rows are leased (claimed_by, claim_expires_at, attempts, last_error, due_at). */
export type LeasedTable = Exclude<JobTable, 'scheduled_message' | 'stream_activity_check'>

const PROBE_NOW = Prisma.raw('$1::timestamptz')

/** Whether `table` holds a row due at `now`; with `realmIds`, only rows of those realms (tests sharing a database). */
export async function anyDue(prisma: PrismaClient, table: JobTable, now: Date, realmIds?: readonly number[]): Promise<boolean> {
  const [row] = await fastRead<{ due: boolean }>(
    prisma,
    `due_${table}`,
    `SELECT EXISTS (SELECT 1 FROM ${table} WHERE ${DUE[table](PROBE_NOW).text}
       AND ($2 = '' OR realm_id = ANY(string_to_array($2, ',')::int[]))) AS due`,
    [now.toISOString(), realmIds === undefined ? '' : realmIds.join(',')],
  )
  return row?.due === true
}

export interface LockOptions {
  now: Date
  limit: number
  /** Only rows of these realms (tests sharing a database). */
  realmIds?: readonly number[]
  /** A further condition (`AND …`). */
  where?: Prisma.Sql
  /** Instead of the due condition: this row alone, if still unsettled (scheduled delivery's failure path). */
  onlyId?: number
  orderBy?: Prisma.Sql
}

const nowSql = (now: Date) => Prisma.sql`${now}::timestamptz`

/** Locks up to `limit` due rows that no other transaction holds (`FOR UPDATE SKIP LOCKED`); returns their IDs in order. */
export async function lockDue(tx: Tx, table: JobTable, options: LockOptions): Promise<number[]> {
  const realmFilter = options.realmIds ? Prisma.sql`AND realm_id = ANY(${options.realmIds}::int[])` : Prisma.empty
  const due =
    options.onlyId === undefined
      ? DUE[table](nowSql(options.now))
      : table === 'scheduled_message'
        ? Prisma.sql`NOT delivered AND NOT failed AND id = ${options.onlyId}`
        : Prisma.sql`id = ${options.onlyId}`
  const rows = await tx.$queryRaw<{ id: number }[]>`
    SELECT id FROM ${Prisma.raw(table)}
    WHERE ${due} ${options.where ?? Prisma.empty} ${realmFilter}
    ORDER BY ${options.orderBy ?? (table === 'scheduled_message' ? Prisma.sql`scheduled_timestamp, id` : Prisma.sql`due_at, id`)}
    LIMIT ${options.limit}
    FOR UPDATE SKIP LOCKED`
  return rows.map((r) => r.id)
}

/** A leased row: what every leased table has. */
export interface LeasedRow {
  id: number
  user_id: number
  attempts: number
}

export interface LeaseOptions extends LockOptions {
  /** Who takes the lease (Services.nodeId). */
  nodeId: string
  leaseMs: number
  /** The columns returned for each claimed row. */
  columns: Prisma.Sql
  /** Also lease every other unleased row of the locked rows' users (a per-user batch, as missed-message emails go out). */
  wholeUser?: boolean
}

/** Locks due rows and leases them to this node in one short transaction; returns the leased rows. */
export async function claimLeased<Row extends LeasedRow>(prisma: PrismaClient, table: LeasedTable, options: LeaseOptions): Promise<Row[]> {
  const leaseEnd = new Date(options.now.getTime() + options.leaseMs)
  return prisma.$transaction(async (tx) => {
    const ids = await lockDue(tx, table, options)
    if (ids.length === 0) return []
    const which = options.wholeUser
      ? Prisma.sql`user_id IN (SELECT user_id FROM ${Prisma.raw(table)} WHERE id = ANY(${ids}::int[]))
          AND (claim_expires_at IS NULL OR claim_expires_at <= ${options.now}::timestamptz)`
      : Prisma.sql`id = ANY(${ids}::int[])`
    return tx.$queryRaw<Row[]>`
      UPDATE ${Prisma.raw(table)} SET claimed_by = ${options.nodeId}, claim_expires_at = ${leaseEnd}::timestamptz
      WHERE ${which}
      RETURNING ${options.columns}`
  })
}

/** Extends the lease of `rows` still leased to this node; returns those (the others' lease lapsed and another node may hold them). */
export async function renewLeases<Row extends LeasedRow>(prisma: PrismaClient, table: LeasedTable, rows: Row[], options: { nodeId: string; now: Date; leaseMs: number }): Promise<Row[]> {
  const leaseEnd = new Date(options.now.getTime() + options.leaseMs)
  const held = await prisma.$queryRaw<{ id: number }[]>`
    UPDATE ${Prisma.raw(table)} SET claim_expires_at = ${leaseEnd}::timestamptz
    WHERE id = ANY(${rows.map((r) => r.id)}::int[]) AND claimed_by = ${options.nodeId} AND claim_expires_at > ${options.now}::timestamptz
    RETURNING id`
  const ids = new Set(held.map((r) => r.id))
  return rows.filter((r) => ids.has(r.id))
}

/** Deletes done rows, only those still leased to this node. */
export async function settleLeased(prisma: PrismaClient, table: LeasedTable, ids: number[], nodeId: string): Promise<void> {
  if (ids.length === 0) return
  await prisma.$executeRaw`DELETE FROM ${Prisma.raw(table)} WHERE id = ANY(${ids}::int[]) AND claimed_by = ${nodeId}`
}

export interface RetryPolicy {
  retryBaseMs: number
  retryMaxMs: number
  /** Failed attempts after which a row is deleted instead of retried (none: retried for ever). */
  maxAttempts?: number
}

/** The capped exponential backoff after the `failures`-th consecutive failure (1-based). */
export const backoffMs = (policy: RetryPolicy, failures: number): number => Math.min(policy.retryBaseMs * 2 ** (failures - 1), policy.retryMaxMs)

const errorText = (error: unknown): string => (error instanceof Error ? error.message : String(error)).slice(0, 1000)

/**
 * The rows (one job: they failed together) are due again after the backoff of
 * their attempt (the highest of theirs + 1), the lease released and the error
 * kept; `set` adds assignments (`, column = …`). Returns 'dropped' when the
 * attempt was the last one allowed: the rows are deleted instead.
 */
export async function retryLeased(
  prisma: PrismaClient,
  table: LeasedTable,
  rows: LeasedRow[],
  error: unknown,
  options: RetryPolicy & { nodeId: string; now: Date; set?: Prisma.Sql },
): Promise<'retried' | 'dropped'> {
  const attempts = Math.max(...rows.map((r) => r.attempts)) + 1
  const ids = rows.map((r) => r.id)
  if (options.maxAttempts !== undefined && attempts >= options.maxAttempts) {
    await settleLeased(prisma, table, ids, options.nodeId)
    return 'dropped'
  }
  const due = new Date(options.now.getTime() + backoffMs(options, attempts))
  await prisma.$executeRaw`
    UPDATE ${Prisma.raw(table)} SET attempts = attempts + 1, last_error = ${errorText(error)}, due_at = ${due}::timestamptz,
      claimed_by = NULL, claim_expires_at = NULL ${options.set ?? Prisma.empty}
    WHERE id = ANY(${ids}::int[]) AND claimed_by = ${options.nodeId}`
  return 'retried'
}

/** Rows of a leased table not yet settled, whether due, leased or waiting for a retry (the backlog gauges of /metrics). */
export async function countRows(prisma: PrismaClient, table: LeasedTable): Promise<number> {
  const [row] = await prisma.$queryRaw<{ n: number }[]>`SELECT count(*)::int AS n FROM ${Prisma.raw(table)}`
  return row?.n ?? 0
}
