// `unread_msgs`, `starred_messages`, `recent_private_conversations` and
// `max_message_id` of the register response (spec "Unread message summary";
// upstream-behaviour §3.3). Flags are read with one raw, set-based query.
import type { PrismaClient } from '../db/index.js'
import { FLAG_BITS, MENTION_MASK, WILDCARD_MASK } from '../domain/flags.js'
import { flagMask } from '../db/flag-sql.js'

/** Upstream's MAX_UNREAD_MESSAGES. */
export const MAX_UNREAD_MESSAGES = 50_000
/** Upstream's RECENT_CONVERSATIONS_LIMIT. */
export const RECENT_CONVERSATIONS_LIMIT = 1000

export interface UnreadRow {
  message_id: number
  flags: number
  stream_id: number | null
  topic: string
  sender_id: number
  dm_user_ids: number[]
}

export interface UnreadSummary {
  count: number
  pms: { other_user_id: number; sender_id: number; unread_message_ids: number[] }[]
  streams: { stream_id: number; topic: string; unread_message_ids: number[] }[]
  huddles: { user_ids_string: string; unread_message_ids: number[] }[]
  mentions: number[]
  old_unreads_missing: boolean
}

/** Topic visibility policies (UserTopic.visibilityPolicy). */
const MUTED = 1
const UNMUTED = 2
const FOLLOWED = 3

/** What the unread summary is built from (read by register-core.ts). */
export interface UnreadSources {
  /** The user's newest unread messages (at most MAX_UNREAD_MESSAGES), oldest first. */
  rows: UnreadRow[]
  /** Channels the user muted. */
  mutedStreamIds: number[]
  /** The user's topic visibility policies. */
  topics: { streamId: number; topicName: string; visibilityPolicy: number }[]
}

export function summarizeUnread(userId: number, { rows, mutedStreamIds, topics }: UnreadSources): UnreadSummary {
  const mutedStreams = new Set(mutedStreamIds)
  const policy = new Map(topics.map((t) => [`${t.streamId}\u0000${t.topicName.toLowerCase()}`, t.visibilityPolicy]))
  const isMuted = (streamId: number, topic: string): boolean => {
    const p = policy.get(`${streamId}\u0000${topic.toLowerCase()}`)
    if (p === MUTED) return true
    if (p === UNMUTED || p === FOLLOWED) return false
    return mutedStreams.has(streamId)
  }

  const pms = new Map<number, number[]>()
  const streams = new Map<string, { stream_id: number; topic: string; unread_message_ids: number[] }>()
  const huddles = new Map<string, number[]>()
  const mentions: number[] = []
  let count = 0
  for (const row of rows) {
    const id = Number(row.message_id)
    const flags = Number(row.flags)
    let muted = false
    if (row.stream_id !== null) {
      const streamId = Number(row.stream_id)
      muted = isMuted(streamId, row.topic)
      const key = `${streamId}\u0000${row.topic}`
      const entry = streams.get(key) ?? { stream_id: streamId, topic: row.topic, unread_message_ids: [] }
      entry.unread_message_ids.push(id)
      streams.set(key, entry)
    } else {
      const others = [...new Set(row.dm_user_ids.map(Number))].filter((u) => u !== userId)
      if (others.length <= 1) {
        const other = others[0] ?? userId
        pms.set(other, [...(pms.get(other) ?? []), id])
      } else {
        const key = [...new Set([...others, userId])].sort((a, b) => a - b).join(',')
        huddles.set(key, [...(huddles.get(key) ?? []), id])
      }
    }
    if (!muted) count++
    const direct = (flags & (MENTION_MASK & ~WILDCARD_MASK)) !== 0
    const wildcard = (flags & WILDCARD_MASK) !== 0
    if (direct || (wildcard && !muted)) mentions.push(id)
  }
  return {
    count,
    pms: [...pms].map(([other, ids]) => ({ other_user_id: other, sender_id: other, unread_message_ids: ids })),
    streams: [...streams.values()],
    huddles: [...huddles].map(([key, ids]) => ({ user_ids_string: key, unread_message_ids: ids })),
    mentions,
    old_unreads_missing: rows.length === MAX_UNREAD_MESSAGES,
  }
}

export async function getStarredMessageIds(prisma: PrismaClient, userId: number): Promise<number[]> {
  const rows = await prisma.$queryRaw<{ message_id: number }[]>`
    SELECT message_id FROM user_message WHERE user_id = ${userId} AND (flags & ${flagMask(FLAG_BITS.starred)}) <> 0 ORDER BY message_id`
  return rows.map((r) => Number(r.message_id))
}

/** Read through the is_private flag's partial index, as upstream reads them: the user's direct-message copies only, not every copy. */
export async function getRecentPrivateConversations(prisma: PrismaClient, userId: number): Promise<{ max_message_id: number; user_ids: number[] }[]> {
  const rows = await prisma.$queryRaw<{ dm_user_ids: number[]; max_id: number }[]>`
    SELECT m.dm_user_ids, max(m.id) AS max_id
    FROM user_message um JOIN message m ON m.id = um.message_id
    WHERE um.user_id = ${userId} AND (um.flags & ${flagMask(FLAG_BITS.is_private)}) <> 0 AND m.stream_id IS NULL
    GROUP BY m.dm_user_ids
    ORDER BY max_id DESC
    LIMIT ${RECENT_CONVERSATIONS_LIMIT}`
  return rows.map((r) => ({
    max_message_id: Number(r.max_id),
    user_ids: [...new Set(r.dm_user_ids.map(Number))].filter((u) => u !== userId).sort((a, b) => a - b),
  }))
}
