// POST /messages/flags (upstream-behaviour §4): only read, starred and
// collapsed change; accessible messages the user never received get a
// historical copy when the change would differ from the read|historical
// default; the event lists only the messages whose flag changed.
import type { ActionContext, TxContext } from './context.js'
import { inTransaction } from './context.js'
import type { Tx } from '../db/index.js'
import { Prisma } from '../db/index.js'
import { flagMask } from '../db/flag-sql.js'
import { HISTORICAL_FLAGS, MENTION_MASK, WILDCARD_MASK, parseFlagOperation } from '../domain/flags.js'
import { invalidMessage } from '../errors.js'
import { canReadStreamHistory } from '../access/message.js'
import { updateMessageFlagsEvent, type UnreadMessageDetails } from '../events/schemas/index.js'
import { queuePushRemovals } from '../notifications/enqueue.js'

export interface UpdateMessageFlagsInput {
  messages: number[]
  op: string
  flag: string
}

/** Which of the messages without a copy may the user read (public or shared history)? */
async function readableWithoutCopy(tx: Tx, ctx: TxContext, ids: number[]): Promise<Set<number>> {
  if (ids.length === 0) return new Set()
  const messages = await tx.message.findMany({ where: { id: { in: ids }, realmId: ctx.realm.id, streamId: { not: null } }, select: { id: true, streamId: true } })
  const streamIds = [...new Set(messages.map((m) => m.streamId ?? 0))]
  const [streams, subs] = await Promise.all([
    tx.stream.findMany({ where: { id: { in: streamIds } } }),
    tx.subscription.findMany({ where: { userId: ctx.user.id, streamId: { in: streamIds }, active: true }, select: { streamId: true } }),
  ])
  const subscribed = new Set(subs.map((s) => s.streamId))
  const readable = new Set(streams.filter((s) => canReadStreamHistory(ctx.user, s, subscribed.has(s.id))).map((s) => s.id))
  return new Set(messages.filter((m) => m.streamId !== null && readable.has(m.streamId)).map((m) => m.id))
}

interface DetailRow {
  message_id: number
  flags: number
  stream_id: number | null
  topic: string
  dm_user_ids: number[]
  muted: boolean
}

/** `message_details` of a read-removal event: what clients need to rebuild their unread counts. */
async function unreadDetails(tx: Tx, userId: number, ids: number[]): Promise<Record<string, UnreadMessageDetails>> {
  if (ids.length === 0) return {}
  const rows = await tx.$queryRaw<DetailRow[]>(Prisma.sql`
    SELECT um.message_id, um.flags, m.stream_id, m.topic, m.dm_user_ids,
      (m.stream_id IS NOT NULL AND (
        EXISTS (SELECT 1 FROM user_topic ut WHERE ut.user_id = ${userId} AND ut.stream_id = m.stream_id
                AND lower(ut.topic_name) = lower(m.topic) AND ut.visibility_policy = 1)
        OR (EXISTS (SELECT 1 FROM subscription s WHERE s.user_id = ${userId} AND s.stream_id = m.stream_id AND s.is_muted)
            AND NOT EXISTS (SELECT 1 FROM user_topic ut WHERE ut.user_id = ${userId} AND ut.stream_id = m.stream_id
                AND lower(ut.topic_name) = lower(m.topic) AND ut.visibility_policy IN (2, 3))))) AS muted
    FROM user_message um JOIN message m ON m.id = um.message_id
    WHERE um.user_id = ${userId} AND um.message_id = ANY(${ids}::int[])`)
  const out: Record<string, UnreadMessageDetails> = {}
  for (const r of rows) {
    const direct = (r.flags & (MENTION_MASK & ~WILDCARD_MASK)) !== 0
    const mentioned = direct || ((r.flags & WILDCARD_MASK) !== 0 && !r.muted)
    const details: UnreadMessageDetails =
      r.stream_id !== null
        ? { type: 'stream', stream_id: r.stream_id, topic: r.topic, unmuted_stream_msg: !r.muted }
        : { type: 'private', user_ids: [...new Set(r.dm_user_ids)].filter((u) => u !== userId).sort((a, b) => a - b) }
    if (mentioned) details.mentioned = true
    out[String(r.message_id)] = details
  }
  return out
}

export interface UpdateMessageFlagsResult {
  /** How many messages actually changed. */
  changed: number
  /**
   * Marking as unread: the channels (ascending IDs) whose messages were left
   * read because the user is not subscribed to them (level 355); undefined
   * for every other change.
   */
  ignoredBecauseNotSubscribedChannels?: number[]
}

/** Applies the change. */
export async function updateMessageFlags(ctx: ActionContext, input: UpdateMessageFlagsInput): Promise<UpdateMessageFlagsResult> {
  const operation = parseFlagOperation(input.flag, input.op)
  const adding = operation.op === 'add'
  const target = adding ? operation.bit : 0
  const userId = ctx.user.id
  return inTransaction(ctx, async (tx, emit) => {
    let ids = [...new Set(input.messages)]
    // Every ID must name a message the user can access, whatever the change
    // (upstream checks only those that would get a historical row, so marking
    // an inaccessible message as read "succeeded"): otherwise nothing changes.
    const rows = ids.length > 0 ? await tx.userMessage.findMany({ where: { userId, messageId: { in: ids } }, select: { messageId: true, flags: true } }) : []
    const current = new Map(rows.map((r) => [r.messageId, r.flags]))
    const withoutRow = ids.filter((id) => !current.has(id))
    if ((await readableWithoutCopy(tx, ctx, withoutRow)).size !== withoutRow.length) throw invalidMessage()
    let ignoredBecauseNotSubscribedChannels: number[] | undefined
    if (operation.flag === 'read' && !adding) {
      ignoredBecauseNotSubscribedChannels = []
      if (ids.length > 0) {
        // Unread channel messages only ever sit in channels the user is subscribed to.
        const unsubscribed = await tx.$queryRaw<{ id: number; stream_id: number }[]>(Prisma.sql`
          SELECT m.id, m.stream_id FROM message m WHERE m.id = ANY(${ids}::int[]) AND m.stream_id IS NOT NULL
            AND NOT EXISTS (SELECT 1 FROM subscription s WHERE s.user_id = ${userId} AND s.stream_id = m.stream_id AND s.active)`)
        const skip = new Set(unsubscribed.map((r) => r.id))
        ids = ids.filter((id) => !skip.has(id))
        ignoredBecauseNotSubscribedChannels = [...new Set(unsubscribed.map((r) => r.stream_id))].sort((a, b) => a - b)
      }
    }
    const changing = ids.filter((id) => ((current.get(id) ?? HISTORICAL_FLAGS) & operation.bit) !== target)
    if ((HISTORICAL_FLAGS & operation.bit) !== target) {
      const missing = changing.filter((id) => !current.has(id))
      if (missing.length > 0) {
        const flags = adding ? HISTORICAL_FLAGS | operation.bit : HISTORICAL_FLAGS & ~operation.bit
        await tx.$executeRaw(Prisma.sql`
          INSERT INTO user_message (user_id, message_id, flags)
          SELECT ${userId}, m, ${flags} FROM unnest(${missing}::int[]) AS m`)
      }
    }
    const existing = changing.filter((id) => current.has(id))
    if (existing.length > 0) {
      await tx.$executeRaw(
        adding
          ? Prisma.sql`UPDATE user_message SET flags = flags | ${flagMask(operation.bit)} WHERE user_id = ${userId} AND message_id = ANY(${existing}::int[])`
          : Prisma.sql`UPDATE user_message SET flags = flags & ~${flagMask(operation.bit)} WHERE user_id = ${userId} AND message_id = ANY(${existing}::int[])`,
      )
    }
    if (operation.flag === 'read' && adding) await queuePushRemovals(tx, userId, existing, ctx.now())
    const messages = [...changing].sort((a, b) => a - b)
    const messageDetails = operation.flag === 'read' && !adding ? await unreadDetails(tx, userId, messages) : undefined
    emit(updateMessageFlagsEvent(operation.op, operation.flag, messages, { messageDetails }), [userId])
    return { changed: changing.length, ignoredBecauseNotSubscribedChannels }
  })
}
