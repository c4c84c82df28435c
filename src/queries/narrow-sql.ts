// A parsed narrow → one parameterised SQL source: the rows (message `m`,
// the viewer's user_message `um`) and a WHERE condition, for GET /messages
// (and anything else that selects messages by narrow).
//
// Two shapes, as upstream (zerver/lib/narrow.py, ok_to_include_history):
// * the viewer's own history: user_message JOIN message;
// * a channel's history, for a channel narrow the viewer may read the whole
//   history of: message LEFT JOIN user_message, messages the viewer never
//   received counting as flags read|historical.
// `search` is a plain case-insensitive substring match of every word against
// the Markdown source and the topic (no stemming, no ranking).
import type { PrismaClient, Stream, Tx, User } from '../db/index.js'
import { Prisma } from '../db/index.js'
import { FLAG_BITS, HISTORICAL_FLAGS, MENTION_MASK } from '../domain/flags.js'
import { badNarrow, type NarrowOperand, type NarrowTerm } from '../domain/narrow.js'
import { isGuest } from '../domain/roles.js'
import { RESOLVED_TOPIC_PREFIX } from '../domain/topics.js'
import { canReadStreamHistory } from '../access/message.js'
import { escapeLike, idMatchingLower, idsMatchingLower } from '../db/exact-match.js'

type Db = PrismaClient | Tx

export interface CompiledNarrow {
  /** Messages the viewer never received are included (channel history). */
  includeHistory: boolean
  /** `FROM …` with aliases m and um. */
  from: Prisma.Sql
  /** The viewer's flag bitmask of a row. */
  flags: Prisma.Sql
  /** The message id column to range over and sort by (um.message_id in the viewer's history, for its primary key). */
  id: Prisma.Sql
  /** Everything the rows must satisfy (realm, viewer, narrow). */
  where: Prisma.Sql
  /** The narrow has a search term (responses add match_content / match_subject). */
  isSearch: boolean
}

const UNREAD_MUTED = 1
const FOLLOWED = 3
const UNMUTED = 2

async function streamFor(db: Db, realmId: number, operand: NarrowOperand): Promise<Stream> {
  const stream =
    typeof operand === 'number'
      ? await db.stream.findFirst({ where: { id: operand, realmId } })
      : await findStreamNamed(db, realmId, String(operand))
  if (!stream) throw badNarrow(`unknown channel ${String(operand)}`)
  return stream
}

async function findStreamNamed(db: Db, realmId: number, name: string): Promise<Stream | null> {
  const id = await idMatchingLower(db, 'stream_name', { realm_id: realmId }, name.trim())
  return id === undefined ? null : db.stream.findUnique({ where: { id } })
}

async function userIdFor(db: Db, realmId: number, operand: string | number, onMissing: () => Error): Promise<number> {
  const [id] = await userIdsFor(db, realmId, [operand], onMissing)
  return id as number
}

/** Users of the realm by ID or (exactly, case-insensitively) by delivery or API email: three queries at most, whatever their number. */
async function userIdsFor(db: Db, realmId: number, operands: readonly (string | number)[], onMissing: () => Error): Promise<number[]> {
  const numbers = operands.filter((o): o is number => typeof o === 'number')
  const emails = operands.filter((o): o is string => typeof o === 'string').map((e) => e.trim())
  const byId = new Set(
    numbers.length === 0 ? [] : (await db.user.findMany({ where: { id: { in: numbers }, realmId }, select: { id: true } })).map((u) => u.id),
  )
  const byEmail = new Map<string, number>()
  for (const target of ['user_email', 'user_delivery_email'] as const) {
    // Delivery emails win over API emails, as the lookup order was.
    for (const row of await idsMatchingLower(db, target, { realm_id: realmId }, emails)) byEmail.set(row.key, row.id)
  }
  return operands.map((o) => {
    const id = typeof o === 'number' ? (byId.has(o) ? o : undefined) : byEmail.get(o.trim().toLowerCase())
    if (id === undefined) throw onMissing()
    return id
  })
}

async function dmUserIds(db: Db, realmId: number, viewerId: number, operand: NarrowOperand): Promise<number[]> {
  const missing = () => badNarrow(`unknown user in ${Array.isArray(operand) ? JSON.stringify(operand) : String(operand)}`)
  const parts: (string | number)[] =
    typeof operand === 'string'
      ? operand.split(',').map((e) => e.trim()).filter((e) => e !== '')
      : typeof operand === 'number'
        ? [operand]
        : operand
  if (parts.length > MAX_NARROW_DM_USERS) throw badNarrow(`too many users in ${'dm'} (limit: ${MAX_NARROW_DM_USERS})`)
  const ids = new Set([viewerId, ...(await userIdsFor(db, realmId, parts, missing))])
  return [...ids].sort((a, b) => a - b)
}

/** Direct-message narrows name at most this many users (upstream's group DMs are far smaller). */
export const MAX_NARROW_DM_USERS = 1000

function likePattern(word: string): string {
  return `%${escapeLike(word)}%`
}

/** A topic muted for the viewer: muted topic, or muted channel without the topic unmuted or followed. */
function mutedSql(viewerId: number): Prisma.Sql {
  return Prisma.sql`(m.stream_id IS NOT NULL AND (
    EXISTS (SELECT 1 FROM user_topic ut WHERE ut.user_id = ${viewerId} AND ut.stream_id = m.stream_id
            AND lower(ut.topic_name) = lower(m.topic) AND ut.visibility_policy = ${UNREAD_MUTED})
    OR (EXISTS (SELECT 1 FROM subscription s WHERE s.user_id = ${viewerId} AND s.stream_id = m.stream_id AND s.is_muted)
        AND NOT EXISTS (SELECT 1 FROM user_topic ut WHERE ut.user_id = ${viewerId} AND ut.stream_id = m.stream_id
            AND lower(ut.topic_name) = lower(m.topic) AND ut.visibility_policy IN (${UNMUTED}, ${FOLLOWED})))))`
}

async function termSql(db: Db, viewer: User, t: NarrowTerm, flags: Prisma.Sql, streams: Map<NarrowTerm, Stream>): Promise<Prisma.Sql> {
  const realmId = viewer.realmId
  const operand = t.operand
  switch (t.operator) {
    case 'channel': {
      const stream = streams.get(t) ?? (await streamFor(db, realmId, operand))
      return Prisma.sql`m.stream_id = ${stream.id}`
    }
    case 'channels':
      return operand === 'public'
        ? Prisma.sql`m.stream_id IN (SELECT s.id FROM stream s WHERE s.realm_id = ${realmId} AND NOT s.invite_only)`
        : Prisma.sql`m.stream_id IN (SELECT s.id FROM stream s WHERE s.realm_id = ${realmId} AND s.is_web_public)`
    case 'topic':
      return Prisma.sql`(m.stream_id IS NOT NULL AND lower(m.topic) = lower(${String(operand)}))`
    case 'sender': {
      const id = await userIdFor(db, realmId, operand as string | number, () => badNarrow(`unknown user ${String(operand)}`))
      return Prisma.sql`m.sender_id = ${id}`
    }
    case 'dm': {
      const ids = await dmUserIds(db, realmId, viewer.id, operand)
      return Prisma.sql`(m.stream_id IS NULL AND m.dm_user_ids = ${ids}::int[])`
    }
    case 'dm-including':
    case 'group-pm-with': {
      const id = await userIdFor(db, realmId, operand as string | number, () => badNarrow(`unknown user ${String(operand)}`))
      const group = t.operator === 'group-pm-with' ? Prisma.sql` AND cardinality(m.dm_user_ids) >= 3` : Prisma.empty
      return Prisma.sql`(m.stream_id IS NULL AND ${id}::int = ANY(m.dm_user_ids)${group})`
    }
    case 'is':
      switch (operand) {
        case 'dm':
          return Prisma.sql`m.stream_id IS NULL`
        case 'starred':
          return Prisma.sql`(${flags} & ${FLAG_BITS.starred}) <> 0`
        case 'unread':
          return Prisma.sql`(${flags} & ${FLAG_BITS.read}) = 0`
        case 'mentioned':
          return Prisma.sql`(${flags} & ${MENTION_MASK}) <> 0`
        case 'alerted':
          return Prisma.sql`(${flags} & ${FLAG_BITS.has_alert_word}) <> 0`
        case 'resolved':
          return Prisma.sql`(m.stream_id IS NOT NULL AND starts_with(m.topic, ${RESOLVED_TOPIC_PREFIX}))`
        case 'followed':
          return Prisma.sql`EXISTS (SELECT 1 FROM user_topic ut WHERE ut.user_id = ${viewer.id} AND ut.stream_id = m.stream_id
            AND lower(ut.topic_name) = lower(m.topic) AND ut.visibility_policy = ${FOLLOWED})`
        case 'muted':
          return mutedSql(viewer.id)
        default:
          throw badNarrow(`unknown 'is' operand ${String(operand)}`)
      }
    case 'in':
      return operand === 'all' ? Prisma.sql`TRUE` : Prisma.sql`NOT ${mutedSql(viewer.id)}`
    case 'has':
      switch (operand) {
        case 'link':
          return Prisma.sql`m.has_link`
        case 'image':
          return Prisma.sql`m.has_image`
        case 'attachment':
          return Prisma.sql`m.has_attachment`
        case 'reaction':
          return Prisma.sql`EXISTS (SELECT 1 FROM reaction r WHERE r.message_id = m.id)`
        default:
          throw badNarrow(`unknown 'has' operand ${String(operand)}`)
      }
    case 'id':
      return Prisma.sql`m.id = ${Number(operand)}`
    case 'near':
    case 'with':
      // Anchoring hints for clients; they select nothing by themselves.
      return Prisma.sql`TRUE`
    case 'search': {
      const words = String(operand).split(/\s+/).filter((w) => w !== '')
      if (words.length === 0) return Prisma.sql`TRUE`
      return Prisma.join(
        words.map((w) => Prisma.sql`(m.content ILIKE ${likePattern(w)} OR m.topic ILIKE ${likePattern(w)})`),
        ' AND ',
      )
    }
  }
}

/** Upstream ok_to_include_history: a readable channel's whole history, unless a flag (`is:`) term needs the viewer's own rows. */
async function includesHistory(db: Db, viewer: User, terms: readonly NarrowTerm[], streams: Map<NarrowTerm, Stream>): Promise<boolean> {
  let include = false
  for (const t of terms) {
    if (t.negated) continue
    if (t.operator === 'channel') {
      const stream = streams.get(t)
      if (!stream) continue
      const subscribed = (await db.subscription.count({ where: { userId: viewer.id, streamId: stream.id, active: true } })) > 0
      include = !stream.deactivated && canReadStreamHistory(viewer, stream, subscribed)
    } else if (t.operator === 'channels' && t.operand === 'public' && !isGuest(viewer.role)) {
      include = true
    }
  }
  if (terms.some((t) => t.operator === 'is' && t.operand !== 'resolved' && t.operand !== 'followed')) include = false
  return include
}

export async function compileNarrow(db: Db, viewer: User, terms: readonly NarrowTerm[]): Promise<CompiledNarrow> {
  const streams = new Map<NarrowTerm, Stream>()
  for (const t of terms) if (t.operator === 'channel') streams.set(t, await streamFor(db, viewer.realmId, t.operand))
  const includeHistory = await includesHistory(db, viewer, terms, streams)

  const from = includeHistory
    ? Prisma.sql`FROM message m LEFT JOIN user_message um ON um.message_id = m.id AND um.user_id = ${viewer.id}`
    : Prisma.sql`FROM user_message um JOIN message m ON m.id = um.message_id`
  const flags = includeHistory ? Prisma.sql`COALESCE(um.flags, ${HISTORICAL_FLAGS})` : Prisma.sql`um.flags`
  const id = includeHistory ? Prisma.sql`m.id` : Prisma.sql`um.message_id`
  const base = includeHistory ? Prisma.sql`m.realm_id = ${viewer.realmId}` : Prisma.sql`um.user_id = ${viewer.id}`

  const conditions: Prisma.Sql[] = [base]
  for (const t of terms) {
    const sql = await termSql(db, viewer, t, flags, streams)
    // NULL (e.g. a direct message against a channel condition) is "no match" on either side of a negation.
    conditions.push(t.negated ? Prisma.sql`NOT COALESCE((${sql}), FALSE)` : Prisma.sql`COALESCE((${sql}), FALSE)`)
  }
  return {
    includeHistory,
    from,
    flags,
    id,
    where: Prisma.join(conditions, ' AND '),
    isSearch: terms.some((t) => t.operator === 'search' && !t.negated),
  }
}
