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
import { groupGrantsOf } from '../access/stream-grants.js'
import { escapeLike, idsMatchingLower } from '../db/exact-match.js'
import { streamsWithSubscription } from '../db/message-reads.js'
import { flagMask } from '../db/flag-sql.js'
import { canSeeDeliveryEmail } from '../present/user.js'

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
  /** Everything the rows must satisfy (realm, viewer, narrow): a conjunction for a WHERE clause only (a term may be NULL for a row it excludes). */
  where: Prisma.Sql
  /** The narrow has a search term (responses add match_content / match_subject). */
  isSearch: boolean
}

const UNREAD_MUTED = 1
const FOLLOWED = 3
const UNMUTED = 2

/**
 * Everything a narrow's terms name, read in a few queries whatever the number
 * of terms: the channels of `channel` terms (by ID or exact name) and the users
 * of `sender`, `dm`, `dm-including` and `group-pm-with` terms (by ID or
 * email). Terms are then compiled in order from these, each failing as it did
 * when it looked its operand up itself.
 */
interface NarrowRefs {
  streamOf(operand: NarrowOperand): Stream | undefined
  userOf(operand: string | number): number | undefined
  /** Channels (by ID) the viewer is actively subscribed to, among the narrow's. */
  subscribed: Set<number>
  /** Private channels whose content the viewer's groups grant (level 354), among the narrow's. */
  granted: Set<number>
}

const USER_OPERATORS = new Set<string>(['sender', 'dm-including', 'group-pm-with'])

/** The users a dm operand names, as given. */
function dmParts(operand: NarrowOperand): (string | number)[] {
  return typeof operand === 'string'
    ? operand.split(',').map((e) => e.trim()).filter((e) => e !== '')
    : typeof operand === 'number'
      ? [operand]
      : operand
}

async function narrowRefs(db: Db, viewer: User, terms: readonly NarrowTerm[]): Promise<NarrowRefs> {
  const realmId = viewer.realmId
  const channelOperands = terms.filter((t) => t.operator === 'channel').map((t) => t.operand)
  const streamIds = channelOperands.filter((o): o is number => typeof o === 'number')
  const streamNames = channelOperands.filter((o): o is string => typeof o === 'string').map((name) => name.trim())
  const namedIds = (await idsMatchingLower(db, 'stream_name', { realm_id: realmId }, streamNames)).map((row) => row.id)
  const wanted = [...new Set([...streamIds, ...namedIds])]
  // The channels and the viewer's subscriptions to them: one statement.
  const found = await streamsWithSubscription(db, realmId, viewer.id, wanted)
  const streams = new Map(found.map(({ stream }) => [stream.id, stream]))
  const named = namedIds.map((id) => streams.get(id)).filter((s): s is Stream => s !== undefined)
  /** Among the channels the database matched by name, the one `name` names (the lowest ID when several do, as a lookup of one name picks). */
  const byName = (name: string): Stream | undefined => {
    const lower = name.trim().toLowerCase()
    return named.filter((s) => s.name.toLowerCase() === lower).sort((a, b) => a.id - b.id)[0]
  }
  const subscribed = new Set(found.filter((f) => f.subscribed).map((f) => f.stream.id))
  const grantable = found.filter((f) => !f.subscribed && f.stream.inviteOnly && (f.stream.canAddSubscribersGroupId !== null || f.stream.canSubscribeGroupId !== null))
  const grants = grantable.length > 0 ? await groupGrantsOf(db, viewer) : undefined
  const granted = new Set(grantable.filter((f) => grants?.(f.stream).content).map((f) => f.stream.id))
  const userOperands = terms.flatMap((t) => {
    if (USER_OPERATORS.has(t.operator)) return [t.operand as string | number]
    if (t.operator !== 'dm') return []
    const parts = dmParts(t.operand)
    return parts.length > MAX_NARROW_DM_USERS ? [] : parts
  })
  const userOf = await usersByOperand(db, viewer, userOperands)
  return {
    streamOf: (operand) => (typeof operand === 'number' ? streams.get(operand) : byName(String(operand))),
    userOf,
    subscribed,
    granted,
  }
}

/**
 * Users of the realm by ID or (exactly, case-insensitively) by API email or,
 * where the viewer may see it, real address: four queries at most, whatever
 * their number.
 */
async function usersByOperand(db: Db, viewer: User, operands: readonly (string | number)[]): Promise<(operand: string | number) => number | undefined> {
  const realmId = viewer.realmId
  const numbers = [...new Set(operands.filter((o): o is number => typeof o === 'number'))]
  const emails = [...new Set(operands.filter((o): o is string => typeof o === 'string').map((e) => e.trim()))]
  const byId = new Set(
    numbers.length === 0 ? [] : (await db.user.findMany({ where: { id: { in: numbers }, realmId }, select: { id: true } })).map((u) => u.id),
  )
  const byEmail = new Map<string, number>()
  if (emails.length > 0) {
    for (const row of await idsMatchingLower(db, 'user_email', { realm_id: realmId }, emails)) byEmail.set(row.key, row.id)
    // Real addresses win over API emails, as the lookup order was; a hidden one names no one.
    const byDelivery = await idsMatchingLower(db, 'user_delivery_email', { realm_id: realmId }, emails)
    const owners = byDelivery.length === 0 ? [] : await db.user.findMany({
      where: { id: { in: byDelivery.map((r) => r.id) } },
      select: { id: true, isBot: true, settings: { select: { emailAddressVisibility: true } } },
    })
    const visible = new Set(owners.filter((u) => canSeeDeliveryEmail(viewer, { ...u, emailAddressVisibility: u.settings?.emailAddressVisibility })).map((u) => u.id))
    for (const row of byDelivery) if (visible.has(row.id)) byEmail.set(row.key, row.id)
  }
  return (o) => (typeof o === 'number' ? (byId.has(o) ? o : undefined) : byEmail.get(o.trim().toLowerCase()))
}

function streamFor(refs: NarrowRefs, operand: NarrowOperand): Stream {
  const stream = refs.streamOf(operand)
  if (!stream) throw badNarrow(`unknown channel ${String(operand)}`)
  return stream
}

function userIdFor(refs: NarrowRefs, operand: string | number): number {
  const id = refs.userOf(operand)
  if (id === undefined) throw badNarrow(`unknown user ${String(operand)}`)
  return id
}

function dmUserIds(refs: NarrowRefs, viewerId: number, operand: NarrowOperand): number[] {
  const missing = () => badNarrow(`unknown user in ${Array.isArray(operand) ? JSON.stringify(operand) : String(operand)}`)
  const parts = dmParts(operand)
  if (parts.length > MAX_NARROW_DM_USERS) throw badNarrow(`too many users in ${'dm'} (limit: ${MAX_NARROW_DM_USERS})`)
  const ids = new Set([viewerId])
  for (const part of parts) {
    const id = refs.userOf(part)
    if (id === undefined) throw missing()
    ids.add(id)
  }
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

function termSql(refs: NarrowRefs, viewer: User, t: NarrowTerm, flags: Prisma.Sql, streams: Map<NarrowTerm, Stream>): Prisma.Sql {
  const realmId = viewer.realmId
  const operand = t.operand
  switch (t.operator) {
    case 'channel': {
      const stream = streams.get(t) ?? streamFor(refs, operand)
      return Prisma.sql`m.stream_id = ${stream.id}`
    }
    case 'channels':
      return operand === 'public'
        ? Prisma.sql`m.stream_id IN (SELECT s.id FROM stream s WHERE s.realm_id = ${realmId} AND NOT s.invite_only)`
        : Prisma.sql`m.stream_id IN (SELECT s.id FROM stream s WHERE s.realm_id = ${realmId} AND s.is_web_public)`
    case 'topic':
      return Prisma.sql`(m.stream_id IS NOT NULL AND lower(m.topic) = lower(${String(operand)}))`
    case 'sender': {
      const id = userIdFor(refs, operand as string | number)
      return Prisma.sql`m.sender_id = ${id}`
    }
    case 'dm': {
      const ids = dmUserIds(refs, viewer.id, operand)
      return Prisma.sql`(m.stream_id IS NULL AND m.dm_user_ids = ${ids}::int[])`
    }
    case 'dm-including':
    case 'group-pm-with': {
      const id = userIdFor(refs, operand as string | number)
      const group = t.operator === 'group-pm-with' ? Prisma.sql` AND cardinality(m.dm_user_ids) >= 3` : Prisma.empty
      return Prisma.sql`(m.stream_id IS NULL AND ${id}::int = ANY(m.dm_user_ids)${group})`
    }
    case 'is':
      switch (operand) {
        case 'dm':
          return Prisma.sql`m.stream_id IS NULL`
        case 'starred':
          return Prisma.sql`(${flags} & ${flagMask(FLAG_BITS.starred)}) <> 0`
        case 'unread':
          return Prisma.sql`(${flags} & ${flagMask(FLAG_BITS.read)}) = 0`
        case 'mentioned':
          return Prisma.sql`(${flags} & ${flagMask(MENTION_MASK)}) <> 0`
        case 'alerted':
          return Prisma.sql`(${flags} & ${flagMask(FLAG_BITS.has_alert_word)}) <> 0`
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
function includesHistory(refs: NarrowRefs, viewer: User, terms: readonly NarrowTerm[], streams: Map<NarrowTerm, Stream>): boolean {
  let include = false
  for (const t of terms) {
    if (t.negated) continue
    if (t.operator === 'channel') {
      const stream = streams.get(t)
      if (!stream) continue
      const subscribed = refs.subscribed.has(stream.id)
      // An archived channel's history stays readable (level 360).
      include = canReadStreamHistory(viewer, stream, subscribed || refs.granted.has(stream.id))
    } else if (t.operator === 'channels' && t.operand === 'public' && !isGuest(viewer.role)) {
      include = true
    }
  }
  if (terms.some((t) => t.operator === 'is' && t.operand !== 'resolved' && t.operand !== 'followed')) include = false
  return include
}

export async function compileNarrow(db: Db, viewer: User, terms: readonly NarrowTerm[]): Promise<CompiledNarrow> {
  const refs = await narrowRefs(db, viewer, terms)
  const streams = new Map<NarrowTerm, Stream>()
  for (const t of terms) if (t.operator === 'channel') streams.set(t, streamFor(refs, t.operand))
  const includeHistory = includesHistory(refs, viewer, terms, streams)

  const from = includeHistory
    ? Prisma.sql`FROM message m LEFT JOIN user_message um ON um.message_id = m.id AND um.user_id = ${viewer.id}`
    : Prisma.sql`FROM user_message um JOIN message m ON m.id = um.message_id`
  const flags = includeHistory ? Prisma.sql`COALESCE(um.flags, ${HISTORICAL_FLAGS})` : Prisma.sql`um.flags`
  const id = includeHistory ? Prisma.sql`m.id` : Prisma.sql`um.message_id`
  const base = includeHistory ? Prisma.sql`m.realm_id = ${viewer.realmId}` : Prisma.sql`um.user_id = ${viewer.id}`

  const conditions: Prisma.Sql[] = [base]
  for (const t of terms) {
    const sql = termSql(refs, viewer, t, flags, streams)
    // NULL (e.g. a direct message against a channel condition) is "no match" on either side of a negation.
    // A term not negated stands as it is: in the WHERE's conjunction NULL excludes a row as FALSE does, and
    // PostgreSQL sees its column conditions (m.stream_id = …), so it can read them from an index.
    conditions.push(t.negated ? Prisma.sql`NOT COALESCE((${sql}), FALSE)` : Prisma.sql`(${sql})`)
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
