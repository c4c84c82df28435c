// The reads of GET /messages (queries/messages.ts, queries/narrow-sql.ts),
// one round trip each, as raw statements instead of Prisma's ORM: every ORM
// read goes through Prisma's WASM query compiler, which was ~30% of the
// node's CPU on GET /messages (profile in bench/README.md, issue 16).
// Fixed texts are named prepared statements (db/fast-read.ts).
import { fastRead } from './fast-read.js'
import { fromJson } from './hot-queries.js'
import type { PrismaClient, Stream, Tx, User } from './index.js'

type Db = PrismaClient | Tx

/** A list of integers as one text parameter, for intArray(…) (the same SQL on every driver). */
const intList = (values: Iterable<number>): string => [...values].join(',')

/**
 * The int[] of a text parameter made by intList, as an expression whose
 * value the planner never sees, for a named statement run on every request.
 * Given `string_to_array($n, ',')::int[]`, PostgreSQL's custom plans know the
 * array's length and cost less than the generic plan, which assumes ten
 * elements, so PostgreSQL keeps planning the statement at each run: for
 * GET /messages' lookups that was ~0.3 ms of PostgreSQL's CPU per request,
 * ten times its execution (pg_stat_statements, bench/README.md). Behind a
 * scalar subquery the array is a run-time value in every plan, the custom
 * plans cost what the generic one does, and PostgreSQL keeps the generic
 * plan after its five custom tries (test/db/message-reads.test.ts). Indexes
 * still serve `col = ANY(…)` with it.
 */
const intArray = (param: string): string => `(SELECT string_to_array(${param}, ',')::int[])::int[]`

/** Named statement narrow_streams_with_subscription: $1 channel IDs (intList), $2 viewer, $3 realm. */
export const STREAMS_WITH_SUBSCRIPTION_SQL = `SELECT to_jsonb(s) AS s,
       EXISTS (SELECT 1 FROM subscription sub WHERE sub.user_id = $2 AND sub.stream_id = s.id AND sub.active) AS subscribed
FROM stream s WHERE s.id = ANY(${intArray('$1')}) AND s.realm_id = $3`

/** Named statement present_message_lookups: $1 message IDs, $2 user IDs, $3 channel IDs (each intList). */
export const MESSAGE_LOOKUPS_SQL = `SELECT
  (SELECT json_agg(json_build_object('messageId', r.message_id, 'emojiName', r.emoji_name, 'emojiCode', r.emoji_code,
            'reactionType', r.reaction_type, 'userId', r.user_id) ORDER BY r.id)
   FROM reaction r
   WHERE r.message_id = ANY(${intArray('$1')})) AS reactions,
  (SELECT json_agg(json_build_object('id', u.id, 'email', u.email, 'deliveryEmail', u.delivery_email, 'fullName', u.full_name,
            'realmId', u.realm_id, 'avatarSource', u.avatar_source, 'avatarVersion', u.avatar_version, 'avatarHash', u.avatar_hash))
   FROM user_profile u WHERE u.id = ANY(${intArray('$2')})) AS users,
  (SELECT json_agg(json_build_object('id', s.id, 'name', s.name))
   FROM stream s WHERE s.id = ANY(${intArray('$3')})) AS streams`

const STREAM_DATES = ['dateCreated']

/** Channels of the realm by ID, each with whether `viewerId` is actively subscribed to it. */
export async function streamsWithSubscription(db: Db, realmId: number, viewerId: number, ids: readonly number[]): Promise<{ stream: Stream; subscribed: boolean }[]> {
  // An ID outside int4 names no channel (and would fail the cast).
  const valid = ids.filter((id) => Number.isInteger(id) && Math.abs(id) <= 2_147_483_647)
  if (valid.length === 0) return []
  const rows = await fastRead<{ s: Record<string, unknown>; subscribed: boolean }>(db, 'narrow_streams_with_subscription', STREAMS_WITH_SUBSCRIPTION_SQL, [
    intList(valid),
    viewerId,
    realmId,
  ])
  return rows.map((row) => ({ stream: fromJson<Stream>(row.s, STREAM_DATES), subscribed: row.subscribed }))
}

/** The user fields a presented message shows (present/message.ts PresentableUser). */
export type MessageUser = Pick<User, 'id' | 'email' | 'deliveryEmail' | 'fullName' | 'realmId' | 'avatarSource' | 'avatarVersion' | 'avatarHash'>

export interface MessageReactionRow {
  messageId: number
  emojiName: string
  emojiCode: string
  reactionType: string
  userId: number
}

export interface MessageLookups {
  /** Every reaction to the messages, by reaction ID (the order they were added). */
  reactions: MessageReactionRow[]
  users: MessageUser[]
  streams: { id: number; name: string }[]
}

/** Reactions of the messages, the users and the channels' names, in one statement. */
export async function messageLookups(db: Db, messageIds: Iterable<number>, userIds: Iterable<number>, streamIds: Iterable<number>): Promise<MessageLookups> {
  const [row] = await fastRead<{ reactions: MessageReactionRow[] | null; users: MessageUser[] | null; streams: { id: number; name: string }[] | null }>(
    db,
    'present_message_lookups',
    MESSAGE_LOOKUPS_SQL,
    [intList(messageIds), intList(userIds), intList(streamIds)],
  )
  return { reactions: row?.reactions ?? [], users: row?.users ?? [], streams: row?.streams ?? [] }
}
