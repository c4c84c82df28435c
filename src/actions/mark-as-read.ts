// POST /mark_all_as_read, /mark_stream_as_read and /mark_topic_as_read
// (upstream zerver/views/message_flags.py, actions/message_flags.py), and the
// marking that muting a user does. Unread copies are marked read in batches
// of MARK_READ_BATCH_SIZE, newest first, each batch one statement in its own
// transaction, so a user with a huge backlog neither holds one long
// transaction nor monopolises the embedded database.
//
// Events, as upstream: mark_all_as_read sends one
//   { type: 'update_message_flags', op: 'add', operation: 'add', flag: 'read', messages: [], all: true }
// once everything is read (the client reloads); it stops after
// MARK_ALL_TIMEOUT_MS and answers complete: false without an event (the
// client repeats the request). The other forms send the IDs they changed,
// one event per batch, `all: false`.
import { updateMessageFlagsEvent, type Built, type UpdateMessageFlagsEvent } from '../events/schemas/index.js'
import type { ActionContext } from './context.js'
import { inTransaction } from './context.js'
import { Prisma, type Tx } from '../db/index.js'
import { FLAG_BITS } from '../domain/flags.js'
import { accessStreamById } from '../access/stream.js'
import { noSuchTopic } from '../errors.js'
import { topicFromClient } from '../domain/topics.js'
import { queuePushRemovals } from '../notifications/enqueue.js'
import { flagMask } from '../db/flag-sql.js'

/** Upstream's batch size for mark_all_as_read. */
export const MARK_READ_BATCH_SIZE = 2000
/** Upstream's timeout for mark_all_as_read (seconds: 50). */
export const MARK_ALL_TIMEOUT_MS = 50_000

const READ = FLAG_BITS.read

export function readEvent(messages: number[], all: boolean): Built<UpdateMessageFlagsEvent> {
  return updateMessageFlagsEvent('add', 'read', messages, { all })
}

export interface MarkReadOptions {
  /** Extra condition on the message `m` (channel, topic, sender); none marks everything. */
  messageCondition?: Prisma.Sql
  /** One update_message_flags event per batch with its IDs (else none: mark_all_as_read sends its own). */
  emitBatches: boolean
  batchSize?: number
  /** Stop (returning complete: false) once this much time has passed. */
  timeoutMs?: number
}

export interface MarkReadResult {
  count: number
  complete: boolean
}

/**
 * Marks up to `limit` (null: all) of the user's unread copies matching the
 * condition as read, newest first, in one statement; returns their IDs, ascending.
 */
export async function markCopiesRead(tx: Tx, userId: number, condition: Prisma.Sql | undefined, limit: number | null): Promise<number[]> {
  const join = condition ? Prisma.sql`JOIN message m ON m.id = um.message_id AND ${condition}` : Prisma.empty
  const cap = limit === null ? Prisma.empty : Prisma.sql`LIMIT ${limit}`
  const rows = await tx.$queryRaw<{ message_id: number }[]>(Prisma.sql`
    WITH picked AS (
      SELECT um.message_id FROM user_message um ${join}
      WHERE um.user_id = ${userId} AND (um.flags & ${flagMask(READ)}) = 0
      ORDER BY um.message_id DESC ${cap}
      FOR UPDATE OF um
    )
    UPDATE user_message SET flags = flags | ${flagMask(READ)}
    WHERE user_id = ${userId} AND message_id IN (SELECT message_id FROM picked)
    RETURNING message_id`)
  const ids = rows.map((r) => r.message_id).sort((a, b) => a - b)
  await queuePushRemovals(tx, userId, ids, new Date())
  return ids
}

/** Marks the user's unread copies matching the condition as read, in batches. */
export async function markUnreadAsRead(ctx: ActionContext, options: MarkReadOptions): Promise<MarkReadResult> {
  const userId = ctx.user.id
  const batchSize = options.batchSize ?? MARK_READ_BATCH_SIZE
  const started = Date.now()
  let count = 0
  for (;;) {
    if (options.timeoutMs !== undefined && Date.now() - started >= options.timeoutMs) return { count, complete: false }
    const changed = await inTransaction(ctx, async (tx, emit) => {
      const ids = await markCopiesRead(tx, userId, options.messageCondition, batchSize)
      if (ids.length > 0 && options.emitBatches) emit(readEvent(ids, false), [userId])
      return ids.length
    })
    count += changed
    if (changed < batchSize) return { count, complete: true }
    // Let other requests run between batches (PGlite shares this thread).
    await new Promise((resolve) => setImmediate(resolve))
  }
}

export async function markAllAsRead(ctx: ActionContext, options: { timeoutMs?: number; batchSize?: number } = {}): Promise<MarkReadResult> {
  const result = await markUnreadAsRead(ctx, { emitBatches: false, timeoutMs: options.timeoutMs ?? MARK_ALL_TIMEOUT_MS, batchSize: options.batchSize })
  if (result.complete) {
    await inTransaction(ctx, async (_tx, emit) => emit(readEvent([], true), [ctx.user.id]))
  }
  return result
}

export async function markStreamAsRead(ctx: ActionContext, streamId: number): Promise<number> {
  const { stream } = await accessStreamById(ctx, streamId)
  return (await markUnreadAsRead(ctx, { messageCondition: Prisma.sql`m.stream_id = ${stream.id}`, emitBatches: true })).count
}

/** An empty topic name marks the whole channel, as upstream. */
export async function markTopicAsRead(ctx: ActionContext, streamId: number, topicName: string): Promise<number> {
  const { stream } = await accessStreamById(ctx, streamId)
  if (topicName === '') return markStreamAsRead(ctx, stream.id)
  topicName = topicFromClient(topicName)
  const exists = await ctx.prisma.$queryRaw<{ found: boolean }[]>(Prisma.sql`
    SELECT EXISTS (
      SELECT 1 FROM message m JOIN user_message um ON um.message_id = m.id AND um.user_id = ${ctx.user.id}
      WHERE m.stream_id = ${stream.id} AND lower(m.topic) = lower(${topicName})
    ) AS found`)
  if (!exists[0]?.found) throw noSuchTopic(topicName)
  const condition = Prisma.sql`m.stream_id = ${stream.id} AND lower(m.topic) = lower(${topicName})`
  return (await markUnreadAsRead(ctx, { messageCondition: condition, emitBatches: true })).count
}
