// The parts of POST /register's state that every logged-in client asks for,
// read in one statement: the user's settings, the newest message ID, the
// subscriptions with their channels, the channels never subscribed to, and
// what the unread summary is built from. One statement sees one snapshot,
// so its own pg_current_snapshot() is the queue's snapshot when nothing else
// of the state is read from the database (routes/events.ts); otherwise it
// runs inside the state's repeatable-read transaction with the other reads.
// Each part is computed only when asked for (CASE skips its subquery).
import type { PrismaClient, Stream, Subscription, Tx, User, UserSettings } from '../db/index.js'
import { Prisma } from '../db/index.js'
import { fastQuery } from '../db/fast-read.js'
import { fromJson } from '../db/hot-queries.js'
import { FLAG_BITS } from '../domain/flags.js'
import { isAdmin, isGuest } from '../domain/roles.js'
import { MAX_UNREAD_MESSAGES, type UnreadRow, type UnreadSources } from './register-unread.js'
import { flagMask } from '../db/flag-sql.js'

export interface RegisterCoreParts {
  maxMessageId: boolean
  subscriptions: boolean
  unread: boolean
  /** The archived_channels capability: archived channels are listed too (levels 315, 362). */
  archivedChannels: boolean
}

export interface RegisterCore {
  /** pg_current_snapshot() of the statement. */
  snapshot: string
  settings: UserSettings | null
  /** -1 when the user has no messages; undefined when not asked for. */
  maxMessageId?: number
  /** The user's subscriptions (active or not), with the channel; to archived channels only with archivedChannels. */
  subscriptions?: (Subscription & { stream: Stream })[]
  /** Channels the user may know of and never subscribed to (none for a guest), and private ones whose groups may grant it; archived ones only with archivedChannels. */
  neverSubscribed?: Stream[]
  unread?: UnreadSources
}

const STREAM_DATES = ['dateCreated']

/** Which never-subscribed channels a user is told of: none (guest), public ones, all (administrator). */
function neverSubscribedScope(user: User): number {
  if (isGuest(user.role)) return 0
  return isAdmin(user.role) ? 2 : 1
}

interface CoreRow {
  snapshot: string
  settings: Record<string, unknown> | null
  max_message_id: number | null
  subscriptions: { s: Record<string, unknown>; t: Record<string, unknown> }[] | null
  never_subscribed: Record<string, unknown>[] | null
  unread: [number, number, number | null, string, number, number[]][] | null
  muted_stream_ids: number[] | null
  topics: [number, string, number][] | null
}

export async function readRegisterCore(db: PrismaClient | Tx, user: User, parts: RegisterCoreParts): Promise<RegisterCore> {
  const scope = neverSubscribedScope(user)
  const [row] = await fastQuery<CoreRow>(
    db,
    Prisma.sql`
    SELECT pg_current_snapshot()::text AS snapshot,
      (SELECT to_jsonb(us) FROM user_settings us WHERE us.user_id = ${user.id}) AS settings,
      CASE WHEN ${parts.maxMessageId} THEN (SELECT max(um.message_id) FROM user_message um WHERE um.user_id = ${user.id}) END AS max_message_id,
      CASE WHEN ${parts.subscriptions} THEN (
        SELECT coalesce(jsonb_agg(jsonb_build_object('s', to_jsonb(s), 't', to_jsonb(st))), '[]'::jsonb)
        FROM subscription s JOIN stream st ON st.id = s.stream_id
        WHERE s.user_id = ${user.id} AND (${parts.archivedChannels}::boolean OR NOT st.deactivated)) END AS subscriptions,
      CASE WHEN ${parts.subscriptions} AND ${scope}::int > 0 THEN (
        SELECT coalesce(jsonb_agg(to_jsonb(st)), '[]'::jsonb)
        FROM stream st
        WHERE st.realm_id = ${user.realmId} AND (${parts.archivedChannels}::boolean OR NOT st.deactivated)
          AND (${scope}::int = 2 OR NOT st.invite_only
            -- private channels whose groups may grant the user access; register-state.ts filters them
            OR st.can_administer_channel_group_id IS NOT NULL OR st.can_add_subscribers_group_id IS NOT NULL OR st.can_subscribe_group_id IS NOT NULL)
          AND NOT EXISTS (SELECT 1 FROM subscription s WHERE s.user_id = ${user.id} AND s.stream_id = st.id)) END AS never_subscribed,
      CASE WHEN ${parts.unread} THEN (
        SELECT coalesce(jsonb_agg(jsonb_build_array(u.message_id, u.flags, u.stream_id, u.topic, u.sender_id, u.dm_user_ids) ORDER BY u.message_id), '[]'::jsonb)
        FROM (
          SELECT um.message_id, um.flags, m.stream_id, m.topic, m.sender_id, m.dm_user_ids
          FROM user_message um JOIN message m ON m.id = um.message_id
          WHERE um.user_id = ${user.id} AND (um.flags & ${flagMask(FLAG_BITS.read)}) = 0
          ORDER BY um.message_id DESC
          LIMIT ${MAX_UNREAD_MESSAGES}) u) END AS unread,
      CASE WHEN ${parts.unread} THEN (
        SELECT coalesce(jsonb_agg(s.stream_id), '[]'::jsonb) FROM subscription s WHERE s.user_id = ${user.id} AND s.is_muted) END AS muted_stream_ids,
      CASE WHEN ${parts.unread} THEN (
        SELECT coalesce(jsonb_agg(jsonb_build_array(t.stream_id, t.topic_name, t.visibility_policy)), '[]'::jsonb)
        FROM user_topic t WHERE t.user_id = ${user.id}) END AS topics`,
    'register_core',
  )
  if (!row) throw new Error('register core: no row')
  const core: RegisterCore = {
    snapshot: row.snapshot,
    settings: row.settings ? fromJson<UserSettings>(row.settings, []) : null,
  }
  if (parts.maxMessageId) core.maxMessageId = row.max_message_id === null ? -1 : Number(row.max_message_id)
  if (parts.subscriptions) {
    core.subscriptions = (row.subscriptions ?? []).map(({ s, t }) => ({ ...fromJson<Subscription>(s, []), stream: fromJson<Stream>(t, STREAM_DATES) }))
    core.neverSubscribed = (row.never_subscribed ?? []).map((t) => fromJson<Stream>(t, STREAM_DATES))
  }
  if (parts.unread) {
    core.unread = {
      rows: (row.unread ?? []).map(([messageId, flags, streamId, topic, senderId, dmUserIds]): UnreadRow => ({
        message_id: messageId,
        flags,
        stream_id: streamId,
        topic,
        sender_id: senderId,
        dm_user_ids: dmUserIds,
      })),
      mutedStreamIds: row.muted_stream_ids ?? [],
      topics: (row.topics ?? []).map(([streamId, topicName, visibilityPolicy]) => ({ streamId, topicName, visibilityPolicy })),
    }
  }
  return core
}
