// GET /users/me/{stream_id}/topics (upstream get_topics_backend and
// get_topic_history_for_stream): the channel's topics, newest first, each
// with the ID of its latest message. Topics differing only in case are one
// topic, named as its latest message spells it. Where the channel's history
// is shared with subscribers (every public channel, private ones with
// history_public_to_subscribers) that is every message of the channel;
// otherwise only the messages the user received.
import type { ActionContext } from '../services.js'
import { Prisma } from '../db/index.js'
import { accessStreamById } from '../access/stream.js'
import { topicForClient } from '../domain/topics.js'

export interface TopicDict {
  name: string
  max_id: number
}

/** `allowEmptyTopicName` (level 334): the empty topic is named "" rather than by its display name. */
export async function getStreamTopics(ctx: ActionContext, streamId: number, allowEmptyTopicName: boolean): Promise<TopicDict[]> {
  const { stream } = await accessStreamById(ctx, streamId)
  const own = stream.historyPublicToSubscribers
    ? Prisma.empty
    : Prisma.sql`AND EXISTS (SELECT 1 FROM user_message um WHERE um.message_id = m.id AND um.user_id = ${ctx.user.id})`
  const rows = await ctx.prisma.$queryRaw<{ name: string; max_id: number }[]>(Prisma.sql`
    SELECT name, max_id FROM (
      SELECT DISTINCT ON (lower(m.topic)) m.topic AS name, m.id AS max_id
      FROM message m
      WHERE m.stream_id = ${stream.id} ${own}
      ORDER BY lower(m.topic), m.id DESC
    ) t
    ORDER BY max_id DESC`)
  return rows.map((r) => ({ name: topicForClient(r.name, allowEmptyTopicName), max_id: r.max_id }))
}
