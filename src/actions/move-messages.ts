// Topic edits and channel moves (upstream update_messages_for_topic_edit and
// the channel part of do_update_message): which messages move, who keeps or
// loses their copies, and topic visibility policies that follow the topic.
import type { Emit } from './context.js'
import type { Message, Stream, Tx, User } from '../db/index.js'
import { idsMatchingLower } from '../db/exact-match.js'
import type { PrismaClient } from '../db/index.js'
import { Prisma } from '../db/index.js'
import { FLAG_BITS } from '../domain/flags.js'
import { visibilityPolicyAfterMerge, type PropagateMode } from '../domain/message-edit.js'
import { sameTopic } from '../domain/topics.js'
import { canReadStreamHistory } from '../access/message.js'
import { userTopicEvent } from './set-topic-visibility.js'

type Db = PrismaClient | Tx

export interface TopicMessage {
  id: number
  dateSent: Date
  senderId: number
}

/** May the actor see the channel's whole history, or only their own copies? */
export async function hasFullHistory(db: Db, actor: User, stream: Stream): Promise<boolean> {
  const subscribed = (await db.subscription.count({ where: { userId: actor.id, streamId: stream.id, active: true } })) > 0
  return canReadStreamHistory(actor, stream, subscribed)
}

/** Messages of a topic the actor can access, oldest first (upstream bulk_access_stream_messages_query). */
export async function accessibleTopicMessages(db: Db, actor: User, stream: Stream, topic: string, fullHistory: boolean): Promise<TopicMessage[]> {
  const own = fullHistory
    ? Prisma.empty
    : Prisma.sql`AND EXISTS (SELECT 1 FROM user_message um WHERE um.message_id = m.id AND um.user_id = ${actor.id})`
  const rows = await db.$queryRaw<{ id: number; date_sent: Date; sender_id: number }[]>(Prisma.sql`
    SELECT m.id, m.date_sent, m.sender_id FROM message m
    WHERE m.stream_id = ${stream.id} AND lower(m.topic) = lower(${topic}) ${own}
    ORDER BY m.id`)
  return rows.map((r) => ({ id: r.id, dateSent: new Date(r.date_sent), senderId: r.sender_id }))
}

/** The edited message and, by propagate_mode, the rest of its topic that the actor can access. */
export function selectByPropagateMode(topicMessages: readonly TopicMessage[], target: Message, mode: PropagateMode): number[] {
  const others = topicMessages.filter((m) => m.id !== target.id && (mode === 'change_all' || (mode === 'change_later' && m.id > target.id)))
  return [target.id, ...others.map((m) => m.id)].sort((a, b) => a - b)
}

export interface MoveApplied {
  /** Subscribers of the old channel who are not subscribed to the new one: their copies of the moved messages are gone. */
  losingCopies: Set<number>
  /** Of those, the ones who can no longer read the messages at all (guests, or a private destination): they get delete_message. */
  losingAccess: Set<number>
  /** The channels whose first_message_id the move changed, with the new value. */
  firstMessageIds: { stream: Stream; value: number | null }[]
}

async function subscriberUsers(tx: Tx, streamId: number): Promise<{ id: number; role: number }[]> {
  const subs = await tx.subscription.findMany({ where: { streamId, active: true }, select: { user: { select: { id: true, role: true } } } })
  return subs.map((s) => s.user)
}

/** Moves the copies along with a channel change (upstream: subs losing usermessages, users gaining them in protected history). */
export async function moveCopies(tx: Tx, o: { ids: number[]; oldStream: Stream; newStream: Stream }): Promise<MoveApplied> {
  const oldSubs = await subscriberUsers(tx, o.oldStream.id)
  const newSubs = await subscriberUsers(tx, o.newStream.id)
  const newIds = new Set(newSubs.map((u) => u.id))
  const oldIds = new Set(oldSubs.map((u) => u.id))
  const losing = oldSubs.filter((u) => !newIds.has(u.id))
  const losingCopies = new Set(losing.map((u) => u.id))
  const losingAccess = new Set(losing.filter((u) => u.role === 600 || o.newStream.inviteOnly).map((u) => u.id))
  if (losingCopies.size > 0) {
    await tx.userMessage.deleteMany({ where: { userId: { in: [...losingCopies] }, messageId: { in: o.ids } } })
  }
  if (!o.newStream.historyPublicToSubscribers) {
    const gaining = [...newIds].filter((id) => !oldIds.has(id))
    if (gaining.length > 0) {
      const users = o.ids.flatMap(() => gaining)
      const messages = o.ids.flatMap((id) => gaining.map(() => id))
      await tx.$executeRaw(Prisma.sql`
        INSERT INTO user_message (user_id, message_id, flags)
        SELECT u, m, ${FLAG_BITS.read} FROM unnest(${users}::int[], ${messages}::int[]) AS v(u, m)
        ON CONFLICT DO NOTHING`)
    }
  }
  const firstBefore = await firstMessageIds(tx, [o.oldStream.id, o.newStream.id])
  await tx.$executeRaw(Prisma.sql`
    UPDATE stream SET first_message_id = LEAST(COALESCE(first_message_id, ${o.ids[0] ?? 0}), ${o.ids[0] ?? 0}) WHERE id = ${o.newStream.id}`)
  await tx.$executeRaw(Prisma.sql`
    UPDATE stream SET first_message_id = (SELECT min(id) FROM message WHERE stream_id = ${o.oldStream.id}) WHERE id = ${o.oldStream.id}`)
  const firstAfter = await firstMessageIds(tx, [o.oldStream.id, o.newStream.id])
  const changed = [o.oldStream, o.newStream].filter((s) => firstBefore.get(s.id) !== firstAfter.get(s.id))
  return { losingCopies, losingAccess, firstMessageIds: changed.map((stream) => ({ stream, value: firstAfter.get(stream.id) ?? null })) }
}

async function firstMessageIds(tx: Tx, streamIds: number[]): Promise<Map<number, number | null>> {
  const rows = await tx.stream.findMany({ where: { id: { in: streamIds } }, select: { id: true, firstMessageId: true } })
  return new Map(rows.map((r) => [r.id, r.firstMessageId]))
}

/** Sets the moved messages' channel and topic and prepends `entry` to their edit history. */
export async function relocateMessages(tx: Tx, o: { ids: number[]; streamId: number; topic: string }): Promise<void> {
  if (o.ids.length === 0) return
  await tx.$executeRaw(Prisma.sql`UPDATE message SET stream_id = ${o.streamId}, topic = ${o.topic} WHERE id = ANY(${o.ids}::int[])`)
}

/** Topic visibility policies follow a whole topic to its new name, merged with any the users had there. */
export async function moveUserTopics(
  tx: Tx,
  emit: Emit,
  o: { oldStream: Stream; oldTopic: string; newStream: Stream; newTopic: string; now: Date; skipUsers: ReadonlySet<number> },
): Promise<void> {
  if (o.oldStream.id === o.newStream.id && sameTopic(o.oldTopic, o.newTopic)) return
  const oldIds = (await idsMatchingLower(tx, 'user_topic_name', { stream_id: o.oldStream.id }, [o.oldTopic])).map((r) => r.id)
  const rows = await tx.userTopic.findMany({ where: { id: { in: oldIds } } })
  const newIds = (await idsMatchingLower(tx, 'user_topic_name', { stream_id: o.newStream.id }, [o.newTopic])).map((r) => r.id)
  for (const row of rows) {
    await tx.userTopic.delete({ where: { id: row.id } })
    if (row.visibilityPolicy !== 0) emit(userTopicEvent(o.oldStream.id, o.oldTopic, 0, o.now), [row.userId])
    if (o.skipUsers.has(row.userId)) continue
    const target = await tx.userTopic.findFirst({
      where: { userId: row.userId, id: { in: newIds } },
    })
    // Without a policy at the destination the user's policy simply moves; otherwise the two merge.
    const merged = target ? visibilityPolicyAfterMerge(row.visibilityPolicy, target.visibilityPolicy) : row.visibilityPolicy
    if (target) {
      if (merged === target.visibilityPolicy) continue
      if (merged === 0) await tx.userTopic.delete({ where: { id: target.id } })
      else await tx.userTopic.update({ where: { id: target.id }, data: { visibilityPolicy: merged, lastUpdated: o.now } })
    } else {
      if (merged === 0) continue
      await tx.userTopic.create({
        data: { userId: row.userId, streamId: o.newStream.id, topicName: o.newTopic, visibilityPolicy: merged, lastUpdated: o.now },
      })
    }
    emit(userTopicEvent(o.newStream.id, o.newTopic, merged, o.now), [row.userId])
  }
}
