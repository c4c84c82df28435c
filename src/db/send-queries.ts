// The statements of sending a message (actions/send-message.ts), one round
// trip each, sent on the pg pool without Prisma where db/fast-read.ts allows
// (Prisma compiles even a raw query in its WASM query compiler: ~20% of the
// node's CPU on POST /messages before, issue 16): Prisma's ORM path costs 1.5–2 ms of CPU per query here, and a
// 1,000-subscriber channel through findMany (subscribers, then alert words
// with 1,000 parameters) cost ~15 ms of CPU per send. Rows come back in
// Prisma's own shapes (test/db/send-queries.test.ts compares them).
import { SYSTEM_GROUPS } from '../domain/system-groups.js'
import type { Message, PrismaClient, Stream, Tx, User } from './index.js'
import { Prisma } from './index.js'
import { fromJson, toModel, USER_DATES } from './hot-queries.js'
import { fastQuery } from './fast-read.js'
import type { Linkifier } from '../domain/linkifiers.js'

type Db = PrismaClient | Tx

/**
 * A realm's linkifiers, in their order, as a column: of the send's first
 * statement (rendering needs them at every send, and a statement of their
 * own was one round trip in five), or alone (readRealmLinkifiers).
 */
const linkifiersColumn = (realmId: number): Prisma.Sql => Prisma.sql`(SELECT COALESCE(json_agg(json_build_object('pattern', l.pattern, 'urlTemplate', l.url_template) ORDER BY l."order", l.id), '[]'::json)
        FROM realm_linkifier l WHERE l.realm_id = ${realmId}::int) AS linkifiers`

/** A realm's linkifiers in their order, for a render that has no audience statement to carry them (an edit, a scheduled message). */
export async function readRealmLinkifiers(db: Db, realmId: number): Promise<Linkifier[]> {
  const [row] = await fastQuery<{ linkifiers: Linkifier[] }>(db, Prisma.sql`SELECT ${linkifiersColumn(realmId)}`, 'realm_linkifiers_json')
  return row?.linkifiers ?? []
}

/** What both audience statements (channel and direct message) return besides their recipients. */
export interface AudienceExtras {
  /** The realm's alert-word version (queries/alert-word-matcher.ts): the words themselves come from the node's cached matcher. */
  alertWordsVersion: number
  /** Users who muted the sender: the message reaches them already read. */
  muterIds: number[]
  /** The linkifiers of the sender's realm (the query's `realmId`), in their order. */
  linkifiers: Linkifier[]
}

export interface StreamAudience extends AudienceExtras {
  stream: Stream
  /** Active subscribers who are active users, ascending. */
  subscriberIds: number[]
  /** Distinct senders of the topic so far; empty unless asked for. */
  participantIds: number[]
  /** The bot owner asked for (null when none was, or when not found). */
  owner: User | null
}

export interface StreamAudienceQuery {
  realmId: number
  /** The channel by ID (any realm: the caller checks), or else by name within the realm (active channels only). */
  streamId: number | null
  name: string
  topic: string
  senderId: number
  ownerId: number | null
  /** Load participantIds (only topic wildcard mentions need them; a long topic makes them costly). */
  participants: boolean
}

const STREAM_DATES = ['dateCreated']

/** The channel with everything a send to it needs, or null when no channel matches. */
export async function findStreamAudience(db: Db, q: StreamAudienceQuery): Promise<StreamAudience | null> {
  const rows = await fastQuery<Record<string, unknown>>(db, Prisma.sql`
    WITH st AS (
      SELECT * FROM stream
      WHERE (${q.streamId}::int IS NOT NULL AND id = ${q.streamId}::int)
         OR (${q.streamId}::int IS NULL AND realm_id = ${q.realmId}::int AND lower(name) = lower(${q.name}::text))
      ORDER BY id
      LIMIT 1
    ), subs AS (
      SELECT s.user_id FROM subscription s JOIN user_profile u ON u.id = s.user_id
      WHERE s.stream_id = (SELECT id FROM st) AND s.active AND u.is_active
    )
    SELECT
      to_jsonb(st) AS stream,
      ARRAY(SELECT user_id FROM subs ORDER BY user_id) AS subscriber_ids,
      ARRAY(SELECT DISTINCT m.sender_id FROM message m
        WHERE ${q.participants}::boolean AND m.stream_id = st.id AND lower(m.topic) = lower(${q.topic}::text)) AS participant_ids,
      (SELECT version FROM realm_alert_words_version WHERE realm_id = st.realm_id) AS alert_words_version,
      (SELECT to_jsonb(o) FROM user_profile o WHERE o.id = ${q.ownerId}::int) AS owner,
      ARRAY(SELECT mu.user_id FROM muted_user mu WHERE mu.muted_user_id = ${q.senderId}::int) AS muter_ids,
      ${linkifiersColumn(q.realmId)}
    FROM st`, 'send_stream_audience')
  const row = rows[0]
  if (!row) return null
  return {
    stream: fromJson<Stream>(row.stream as Record<string, unknown>, STREAM_DATES),
    subscriberIds: row.subscriber_ids as number[],
    participantIds: row.participant_ids as number[],
    alertWordsVersion: Number(row.alert_words_version ?? 0),
    owner: row.owner ? fromJson<User>(row.owner as Record<string, unknown>, USER_DATES) : null,
    muterIds: row.muter_ids as number[],
    linkifiers: row.linkifiers as Linkifier[],
  }
}

export type DirectCandidate = Pick<User, 'id' | 'email' | 'deliveryEmail' | 'fullName' | 'isActive' | 'isBot'> & { emailAddressVisibility: number }

export interface DirectAudience extends AudienceExtras {
  /** Users of the realm matching any of the IDs or (case-insensitively) emails. */
  users: DirectCandidate[]
  /** The realm's "everyone" system group, for the direct-message permission settings' common case (0 if missing). */
  everyoneGroupId: number
}

/** Candidates for the `to` of a direct message, with the realm's alert-word version. */
export async function findDirectAudience(
  db: Db,
  q: { realmId: number; senderId: number; ids: readonly number[]; emails: readonly string[] },
): Promise<DirectAudience> {
  const lower = q.emails.map((e) => e.toLowerCase())
  const rows = await fastQuery<{ users: DirectCandidate[] | null; alert_words_version: number | null; muter_ids: number[]; linkifiers: Linkifier[]; everyone_group_id: number | null }>(db, Prisma.sql`
    WITH found AS (
      SELECT id, email, delivery_email, full_name, is_active, is_bot,
        coalesce((SELECT s.email_address_visibility FROM user_settings s WHERE s.user_id = user_profile.id), 1) AS email_address_visibility
      FROM user_profile
      WHERE realm_id = ${q.realmId}::int
        AND (id = ANY(${[...q.ids]}::int[]) OR lower(email) = ANY(${lower}::text[]) OR lower(delivery_email) = ANY(${lower}::text[]))
    )
    SELECT
      (SELECT json_agg(json_build_object('id', id, 'email', email, 'deliveryEmail', delivery_email, 'fullName', full_name, 'isActive', is_active,
        'isBot', is_bot, 'emailAddressVisibility', email_address_visibility) ORDER BY id)
        FROM found) AS users,
      (SELECT version FROM realm_alert_words_version WHERE realm_id = ${q.realmId}::int) AS alert_words_version,
      ARRAY(SELECT mu.user_id FROM muted_user mu WHERE mu.muted_user_id = ${q.senderId}::int AND mu.user_id IN (SELECT id FROM found)) AS muter_ids,
      (SELECT g.id FROM user_group g WHERE g.realm_id = ${q.realmId}::int AND g.is_system_group AND g.name = ${SYSTEM_GROUPS.everyone}::text) AS everyone_group_id,
      ${linkifiersColumn(q.realmId)}`, 'send_direct_audience')
  const row = rows[0]
  return {
    users: row?.users ?? [],
    alertWordsVersion: Number(row?.alert_words_version ?? 0),
    muterIds: row?.muter_ids ?? [],
    linkifiers: row?.linkifiers ?? [],
    everyoneGroupId: row?.everyone_group_id ?? 0,
  }
}

export interface NewMessage {
  realmId: number
  senderId: number
  streamId: number | null
  topic: string
  dmUserIds: number[]
  content: string
  renderedContent: string
  dateSent: Date
  client: string
  hasLink: boolean
  hasImage: boolean
  hasAttachment: boolean
}

export interface MessageRecipientRows {
  userIds: readonly number[]
  flags: readonly number[]
  /** Upload path IDs linked from the content: those the sender owns are attached to the message. */
  uploadPaths: readonly string[]
}

/**
 * A list of integers as one text parameter ("1,2,3"), for string_to_array(…)::int[]:
 * the drivers encode a JS array element by element (quoting and escaping each),
 * which for a 1,000-recipient message cost more CPU than the join.
 */
function intList(values: readonly number[]): string {
  return values.join(',')
}

/**
 * Part of a send's statement: marks its transaction so that the
 * user_message trigger of migration *_user_data_invalidation stays silent;
 * the sender then calls notifyUserDataChanged after the commit. Read by the
 * recipients' insert, so it runs before the statement's triggers fire.
 */
const SENDER_NOTIFIES = Prisma.raw(`sender_notifies AS (SELECT set_config('roost.user_data_notify', 'sender', true) AS mark)`)

/** IDs per NOTIFY payload: PostgreSQL takes payloads under 8,000 bytes. */
const IDS_PER_NOTIFICATION = 700

/**
 * Tells every node's user-data cache (db/user-data-cache.ts) that these
 * users' data changed: after a send's commit, in a transaction of its own,
 * so that the send's commit does not wait for the lock NOTIFY takes (see the
 * migration). A node that stops between the two leaves other nodes' entries
 * of these users to their TTL.
 */
export async function notifyUserDataChanged(db: Db, userIds: readonly number[]): Promise<void> {
  if (userIds.length === 0) return
  const sorted = [...new Set(userIds)].sort((a, b) => a - b)
  const payloads: string[] = []
  for (let i = 0; i < sorted.length; i += IDS_PER_NOTIFICATION) payloads.push(sorted.slice(i, i + IDS_PER_NOTIFICATION).join(','))
  await fastQuery(db, Prisma.sql`SELECT count(pg_notify('roost_user_data', p))::int AS sent FROM unnest(${payloads}::text[]) AS p`, 'notify_user_data')
}

/**
 * The message, one user_message row per recipient (one set-based insert), the
 * sender's linked uploads (as claimAttachments does) and the channel's
 * first_message_id when it has none yet, in one statement — hence one
 * transaction even outside an explicit one. Returns the message, the ID of
 * the transaction that wrote it and whether it became its channel's first
 * message (first_message_id set by this statement). The channel becomes
 * recently active (upstream level 323); `revivedStream` says whether it was not.
 */
export async function insertMessage(
  db: Db,
  m: NewMessage,
  r: MessageRecipientRows,
): Promise<{ message: Message; xid: string; firstInStream: boolean; revivedStream: boolean }> {
  const rows = await fastQuery<Record<string, unknown>>(db, Prisma.sql`
    WITH m AS (
      INSERT INTO message (realm_id, sender_id, stream_id, topic, dm_user_ids, content, rendered_content, date_sent, client, has_link, has_image, has_attachment)
      VALUES (${m.realmId}::int, ${m.senderId}::int, ${m.streamId}::int, ${m.topic}, ${m.dmUserIds}::int[], ${m.content}, ${m.renderedContent},
              ${m.dateSent}::timestamptz, ${m.client}, ${m.hasLink}, ${m.hasImage}, ${m.hasAttachment})
      RETURNING *
    ), ${SENDER_NOTIFIES}, um AS (
      INSERT INTO user_message (user_id, message_id, flags)
      SELECT r.user_id, m.id, r.flags
      FROM m, sender_notifies, unnest(string_to_array(${intList(r.userIds)}, ',')::int[], string_to_array(${intList(r.flags)}, ',')::int[]) AS r(user_id, flags)
    ), att AS (
      INSERT INTO attachment_message (attachment_id, message_id)
      SELECT a.id, m.id FROM m JOIN attachment a ON a.realm_id = m.realm_id AND a.owner_id = m.sender_id
      WHERE a.path_id = ANY(${[...r.uploadPaths]}::text[])
      ON CONFLICT DO NOTHING
    ), before AS (
      SELECT s.id, NOT s.is_recently_active AS inactive FROM stream s JOIN m ON s.id = m.stream_id
    ), first AS (
      UPDATE stream SET first_message_id = COALESCE(stream.first_message_id, m.id), is_recently_active = true
      FROM m, before WHERE stream.id = m.stream_id AND before.id = stream.id AND (stream.first_message_id IS NULL OR before.inactive)
      RETURNING stream.id, stream.first_message_id = m.id AS became_first, before.inactive AS revived
    )
    SELECT m.*, pg_current_xact_id()::text AS "$xid", EXISTS (SELECT 1 FROM first WHERE became_first) AS "$first",
      EXISTS (SELECT 1 FROM first WHERE revived) AS "$revived" FROM m`, 'send_insert_message')
  const row = rows[0]
  if (!row) throw new Error('INSERT … RETURNING returned no row')
  const { $xid, $first, $revived, ...columns } = row
  return { message: toModel<Message>(columns), xid: String($xid), firstInStream: $first === true, revivedStream: $revived === true }
}

/**
 * Several messages with their recipients' rows, linked uploads and channels'
 * first_message_id, as insertMessage writes one: two statements whatever
 * their number (their IDs, taken in the given order, then one insert), the
 * second one transaction. Returns the messages in the given order, the ID
 * of the transaction that wrote them, the channels whose first_message_id
 * they set and those they made recently active again.
 */
export async function insertMessages(
  db: Db,
  items: readonly { message: NewMessage; recipients: MessageRecipientRows }[],
): Promise<{ messages: Message[]; xid: string; firstInStreams: number[]; revivedStreams: number[] }> {
  if (items.length === 0) return { messages: [], xid: '', firstInStreams: [], revivedStreams: [] }
  const [allocated] = await db.$queryRaw<{ ids: number[] }[]>(Prisma.sql`
    SELECT ARRAY(SELECT nextval(pg_get_serial_sequence('message', 'id'))::int FROM generate_series(1, ${items.length}::int)) AS ids`)
  const ids = [...(allocated?.ids ?? [])].sort((a, b) => a - b)
  if (ids.length !== items.length) throw new Error('insertMessages: could not take message IDs')
  const column = <T>(pick: (m: NewMessage) => T) => items.map((item) => pick(item.message))
  const recipientMessageIds = items.flatMap((item, i) => item.recipients.userIds.map(() => ids[i] as number))
  const uploads = items.flatMap((item, i) => item.recipients.uploadPaths.map((path) => ({ id: ids[i] as number, path })))
  const rows = await db.$queryRaw<Record<string, unknown>[]>(Prisma.sql`
    WITH m AS (
      INSERT INTO message (id, realm_id, sender_id, stream_id, topic, dm_user_ids, content, rendered_content, date_sent, client, has_link, has_image, has_attachment)
      SELECT v.id, v.realm_id, v.sender_id, v.stream_id, v.topic, string_to_array(v.dm_user_ids, ',')::int[], v.content, v.rendered_content,
             v.date_sent::timestamptz, v.client, v.has_link, v.has_image, v.has_attachment
      FROM unnest(${ids}::int[], ${column((m) => m.realmId)}::int[], ${column((m) => m.senderId)}::int[], ${column((m) => m.streamId)}::int[],
                  ${column((m) => m.topic)}::text[], ${column((m) => intList(m.dmUserIds))}::text[], ${column((m) => m.content)}::text[],
                  ${column((m) => m.renderedContent)}::text[], ${column((m) => m.dateSent.toISOString())}::text[], ${column((m) => m.client)}::text[],
                  ${column((m) => m.hasLink)}::boolean[], ${column((m) => m.hasImage)}::boolean[], ${column((m) => m.hasAttachment)}::boolean[])
        AS v(id, realm_id, sender_id, stream_id, topic, dm_user_ids, content, rendered_content, date_sent, client, has_link, has_image, has_attachment)
      RETURNING *
    ), ${SENDER_NOTIFIES}, um AS (
      INSERT INTO user_message (user_id, message_id, flags)
      SELECT r.user_id, m.id, r.flags
      FROM unnest(string_to_array(${intList(items.flatMap((item) => item.recipients.userIds))}, ',')::int[],
                  string_to_array(${intList(recipientMessageIds)}, ',')::int[],
                  string_to_array(${intList(items.flatMap((item) => item.recipients.flags))}, ',')::int[]) AS r(user_id, message_id, flags)
      JOIN m ON m.id = r.message_id
      CROSS JOIN sender_notifies
    ), att AS (
      INSERT INTO attachment_message (attachment_id, message_id)
      SELECT a.id, m.id
      FROM unnest(${uploads.map((u) => u.id)}::int[], ${uploads.map((u) => u.path)}::text[]) AS p(message_id, path_id)
      JOIN m ON m.id = p.message_id
      JOIN attachment a ON a.realm_id = m.realm_id AND a.owner_id = m.sender_id AND a.path_id = p.path_id
      ON CONFLICT DO NOTHING
    ), f AS (
      SELECT stream_id, min(id) AS id FROM m WHERE stream_id IS NOT NULL GROUP BY stream_id
    ), before AS (
      SELECT s.id, NOT s.is_recently_active AS inactive FROM stream s JOIN f ON s.id = f.stream_id
    ), first AS (
      UPDATE stream SET first_message_id = COALESCE(stream.first_message_id, f.id), is_recently_active = true
      FROM f JOIN before ON before.id = f.stream_id
      WHERE stream.id = f.stream_id AND (stream.first_message_id IS NULL OR before.inactive)
      RETURNING stream.id, stream.first_message_id = f.id AS became_first, before.inactive AS revived
    )
    SELECT m.*, pg_current_xact_id()::text AS "$xid", ARRAY(SELECT id FROM first WHERE became_first) AS "$first",
      ARRAY(SELECT id FROM first WHERE revived) AS "$revived" FROM m ORDER BY m.id`)
  let xid = ''
  let firstInStreams: number[] = []
  let revivedStreams: number[] = []
  const messages = rows.map((row) => {
    const { $xid, $first, $revived, ...columns } = row
    xid = String($xid)
    firstInStreams = (($first as number[] | null) ?? []).map(Number)
    revivedStreams = (($revived as number[] | null) ?? []).map(Number)
    return toModel<Message>(columns)
  })
  return { messages, xid, firstInStreams, revivedStreams }
}
