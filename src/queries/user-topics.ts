// The user's topic visibility policies as the API shows them (register's
// `user_topics`, the legacy `muted_topics` list).
import type { PrismaClient, Tx } from '../db/index.js'

type Db = PrismaClient | Tx

export interface UserTopicDict {
  stream_id: number
  topic_name: string
  last_updated: number
  visibility_policy: number
}

const seconds = (d: Date): number => Math.floor(d.getTime() / 1000)

export async function fetchUserTopics(db: Db, userId: number): Promise<UserTopicDict[]> {
  const rows = await db.userTopic.findMany({ where: { userId, visibilityPolicy: { not: 0 } }, orderBy: { id: 'asc' } })
  return rows.map((t) => ({ stream_id: t.streamId, topic_name: t.topicName, last_updated: seconds(t.lastUpdated), visibility_policy: t.visibilityPolicy }))
}

/** Legacy `muted_topics`: [channel name, topic, last_updated] of every muted topic. */
export async function fetchMutedTopics(db: Db, userId: number): Promise<[string, string, number][]> {
  const rows = await db.userTopic.findMany({ where: { userId, visibilityPolicy: 1 }, orderBy: { id: 'asc' }, include: { stream: { select: { name: true } } } })
  return rows.map((t) => [t.stream.name, t.topicName, seconds(t.lastUpdated)])
}
