// GET /messages and GET /messages/{id}: message windows around an anchor in a
// narrow, and single messages, as API dicts with the viewer's flags.
import type { PrismaClient, Realm, User } from '../db/index.js'
import { Prisma } from '../db/index.js'
import { escapeHtml } from '../domain/html-escape.js'
import { FLAG_BITS, HISTORICAL_FLAGS } from '../domain/flags.js'
import { flagMask } from '../db/flag-sql.js'
import { parseNarrow } from '../domain/narrow.js'
import { badRequest, incompatibleParameters, invalidAnchor, tooManyMessagesRequested } from '../errors.js'
import { avatarUrlOf, presentMessage, withInaccessibleSender, type MessageRow } from '../present/message.js'
import { fakeEmailDomain } from '../present/realm.js'
import type { Config } from '../config.js'
import { accessMessageById } from '../access/message.js'
import { accessibleAmong } from '../access/user.js'
import { INACCESSIBLE_USER_NAME } from '../present/user.js'
import { compileNarrow, type CompiledNarrow } from './narrow-sql.js'
import { fastQuery, statementName } from '../db/fast-read.js'
import { messageLookups, type MessageReactionRow, type MessageUser } from '../db/message-reads.js'
import type { AuthCache } from '../db/auth-cache.js'
import { rawArray, type RawJson } from '../present/raw-json.js'
import { MAX_MESSAGES_RESPONSE_BYTES } from '../domain/limits.js'

/** Upstream's MAX_MESSAGES_PER_FETCH. */
export const MAX_MESSAGES_PER_FETCH = 5000
/** Upstream's LARGER_THAN_MAX_MESSAGE_ID: the anchor `newest` resolves to it. */
export const LARGER_THAN_MAX_MESSAGE_ID = 10_000_000_000_000_000
const MAX_INT32 = 2_147_483_647

export interface ViewerContext {
  prisma: PrismaClient
  realm: Realm
  user: User
  /** EXTERNAL_URL, for the domain of the "Unknown user" stand-in's address. */
  config: Pick<Config, 'externalUrl'>
  /** The node's authentication cache: the senders and participants it holds are not read again (presentMessages). */
  authCache?: Pick<AuthCache, 'cachedUserById'>
}

export interface GetMessagesInput {
  anchor?: string
  useFirstUnreadAnchor?: boolean
  numBefore: number
  numAfter: number
  includeAnchor: boolean
  narrow?: unknown
  applyMarkdown: boolean
  clientExtavatar: boolean
  /** Level 334: "" may be a topic in the answer; otherwise the empty topic is shown by its display name. */
  allowEmptyTopicName: boolean
  /** Upstream level 300: these messages (those that match the narrow), instead of a window around an anchor. */
  messageIds?: number[]
}

/** GET /messages with message_ids: no anchor, and found_* are always false (upstream). */
export interface GetMessagesByIdResult {
  messages: RawJson
  found_anchor: false
  found_oldest: false
  found_newest: false
  history_limited: boolean
}

export interface GetMessagesResult {
  /** A JSON array of at most MAX_MESSAGES_RESPONSE_BYTES (plus one message when the nearest alone is larger). */
  messages: RawJson
  found_anchor: boolean
  found_oldest: boolean
  found_newest: boolean
  history_limited: boolean
  anchor: number
}

type WindowRow = MessageRow & { realmId: number; flags: number; candidates?: number }

/** Loads what presentMessage needs for the rows (one statement) and presents them in the given order. */
export async function presentMessages(
  ctx: ViewerContext,
  rows: { message: MessageRow & { realmId: number }; flags: number }[],
  options: { applyMarkdown: boolean; clientExtavatar: boolean; allowEmptyTopicName: boolean },
): Promise<Record<string, unknown>[]> {
  if (rows.length === 0) return []
  const userIds = new Set<number>()
  const streamIds = new Set<number>()
  for (const { message } of rows) {
    userIds.add(message.senderId)
    for (const id of message.dmUserIds) userIds.add(id)
    if (message.streamId !== null) streamIds.add(message.streamId)
  }
  // Users who authenticated on this node lately are in its authentication
  // cache, evicted by any change to their row: only the others are read.
  // (In a busy channel the senders are its active members: 0.14 ms of
  // PostgreSQL's 0.3 ms for the lookups, bench/README.md.)
  const userById = new Map<number, MessageUser>()
  const usersToRead: number[] = []
  for (const id of userIds) {
    const cached = ctx.authCache?.cachedUserById(id)
    if (cached !== undefined) userById.set(id, cached)
    else usersToRead.push(id)
  }
  const lookups = await messageLookups(ctx.prisma, rows.map((r) => r.message.id), usersToRead, streamIds)
  for (const user of lookups.users) userById.set(user.id, user)
  // A restricted guest sees "Unknown user" for users it may not access, as in
  // its user list; a sender it may not access also gets the stand-in's address
  // and picture (withInaccessibleSender).
  const known = await accessibleAmong(ctx.prisma, ctx.realm, ctx.user, [...userIds])
  const hiddenDomain = known.size < userIds.size ? fakeEmailDomain(ctx.realm, ctx.config.externalUrl) : ''
  const shown = <U extends { id: number; fullName: string }>(u: U): U => (known.has(u.id) ? u : { ...u, fullName: INACCESSIBLE_USER_NAME })
  for (const [id, user] of userById) userById.set(id, shown(user))
  const streamById = new Map(lookups.streams.map((s) => [s.id, s]))
  const reactionsOf = new Map<number, MessageReactionRow[]>()
  // Reactions name their users by ID only (upstream level 328).
  for (const r of lookups.reactions) {
    const list = reactionsOf.get(r.messageId)
    if (list) list.push(r)
    else reactionsOf.set(r.messageId, [r])
  }
  // Per request, not per message: a window has few senders.
  const avatarOf = new Map<number, string | null>()
  return rows.map(({ message, flags }) => {
    const sender = userById.get(message.senderId)
    if (!sender) throw new Error(`sender ${message.senderId} of message ${message.id} not found`)
    let avatarUrl = avatarOf.get(sender.id)
    if (avatarUrl === undefined) avatarOf.set(sender.id, (avatarUrl = avatarUrlOf(sender, options.clientExtavatar)))
    const presented = presentMessage(message, {
      applyMarkdown: options.applyMarkdown,
      clientExtavatar: options.clientExtavatar,
      realm: ctx.realm,
      sender,
      avatarUrl,
      stream: message.streamId === null ? null : streamById.get(message.streamId),
      recipients: message.dmUserIds.flatMap((id) => userById.get(id) ?? []),
      reactions: reactionsOf.get(message.id) ?? [],
      flags,
      editHistoryVisibility: ctx.realm.messageEditHistoryVisibilityPolicy,
      allowEmptyTopicName: options.allowEmptyTopicName,
    })
    return known.has(sender.id) ? presented : withInaccessibleSender(presented, hiddenDomain)
  })
}

function parseAnchor(input: GetMessagesInput): number | 'newest' | 'oldest' | 'first_unread' {
  // The legacy flag wins over any anchor sent with it, as upstream's parse_anchor_value has it
  // (the terminal client sends anchor=0 alongside use_first_unread_anchor=true).
  if (input.useFirstUnreadAnchor) return 'first_unread'
  const raw = input.anchor
  if (raw === undefined) throw badRequest("Missing 'anchor' argument.")
  if (raw === 'newest' || raw === 'oldest' || raw === 'first_unread') return raw
  if (!/^-?\d+$/.test(raw.trim())) throw invalidAnchor()
  const n = Number(raw.trim())
  if (n < 0) return 0
  return Math.min(n, LARGER_THAN_MAX_MESSAGE_ID)
}

async function resolveAnchor(ctx: ViewerContext, narrow: CompiledNarrow, anchor: ReturnType<typeof parseAnchor>): Promise<number> {
  if (anchor === 'newest') return LARGER_THAN_MAX_MESSAGE_ID
  if (anchor === 'oldest') return 0
  if (anchor !== 'first_unread') return anchor
  const rows = await ctx.prisma.$queryRaw<{ id: number | null }[]>(Prisma.sql`
    SELECT min(${narrow.id}) AS id ${narrow.from} WHERE ${narrow.where} AND (um.flags & ${flagMask(FLAG_BITS.read)}) = 0`)
  return rows[0]?.id ?? LARGER_THAN_MAX_MESSAGE_ID
}

/** The columns presentMessages needs, as the model's field names. */
const WINDOW_COLUMNS = Prisma.sql`m.id, m.realm_id AS "realmId", m.sender_id AS "senderId", m.stream_id AS "streamId", m.topic,
  m.dm_user_ids AS "dmUserIds", m.content, m.rendered_content AS "renderedContent", m.date_sent AS "dateSent",
  m.last_edit_time AS "lastEditTime", m.edit_history AS "editHistory", m.client`

/** Bytes counted for a message besides its content and edit history, when the window is weighed in SQL. */
const MESSAGE_OVERHEAD_BYTES = 512

interface WindowSide {
  side: 'before' | 'after'
  /** The id to start from (included). */
  bound: number
  limit: number
}

/** What the rows of a window are read for: whole (with a byte budget per side), or their ids and flags only. */
type WindowRead = { kind: 'whole'; budget: number; applyMarkdown: boolean; isSearch: boolean } | { kind: 'ids' }

function sideSql(narrow: CompiledNarrow, s: WindowSide): { cmp: Prisma.Sql; order: Prisma.Sql; dir: Prisma.Sql } {
  // Message ids are 32-bit; the `newest` anchor is not (and Prisma refuses to send it).
  const clamped = Math.max(-1, Math.min(s.bound, MAX_INT32))
  const before = s.side === 'before'
  return {
    cmp: before ? Prisma.sql`${narrow.id} <= ${clamped}` : Prisma.sql`${narrow.id} >= ${clamped}`,
    order: before ? Prisma.sql`ORDER BY ${narrow.id} DESC` : Prisma.sql`ORDER BY ${narrow.id} ASC`,
    dir: before ? Prisma.sql`DESC` : Prisma.sql`ASC`,
  }
}

/**
 * One side of the window, nearest the anchor first, in one statement
 * (prepared per narrow shape: statementName). Whole rows: the side's rows are
 * weighed in SQL (the bytes of the content shown, of the edit history, of a
 * search's match_content, plus MESSAGE_OVERHEAD_BYTES) and only those that
 * start within `budget` are read, so a window of large messages never loads
 * more than about the budget into this process.
 */
function windowRows(ctx: ViewerContext, narrow: CompiledNarrow, s: WindowSide, read: { kind: 'ids' }): Promise<IdRow[]>
function windowRows(ctx: ViewerContext, narrow: CompiledNarrow, s: WindowSide, read: WindowRead & { kind: 'whole' }): Promise<WindowRow[]>
function windowRows(ctx: ViewerContext, narrow: CompiledNarrow, s: WindowSide, read: WindowRead): Promise<IdRow[] | WindowRow[]> {
  if (s.limit <= 0) return Promise.resolve([])
  const { cmp, order, dir } = sideSql(narrow, s)
  if (read.kind === 'ids') {
    const sql = Prisma.sql`SELECT ${narrow.id} AS id, ${narrow.flags} AS flags ${narrow.from} WHERE ${narrow.where} AND ${cmp} ${order} LIMIT ${s.limit}`
    return fastQuery<IdRow>(ctx.prisma, sql, statementName('messages-window-ids', sql.text))
  }
  const shown = read.applyMarkdown ? Prisma.sql`m.rendered_content` : Prisma.sql`m.content`
  const matched = read.isSearch ? Prisma.sql` + octet_length(m.rendered_content)` : Prisma.empty
  const sql = Prisma.sql`WITH w AS (
      SELECT ${narrow.id} AS id, ${narrow.flags} AS flags,
        octet_length(${shown}) + COALESCE(octet_length(m.edit_history::text), 0)${matched} + ${MESSAGE_OVERHEAD_BYTES} AS weight
      ${narrow.from} WHERE ${narrow.where} AND ${cmp} ${order} LIMIT ${s.limit}
    ), r AS (SELECT id, flags, sum(weight) OVER (ORDER BY id ${dir}) - weight AS preceding, (count(*) OVER ())::int AS candidates FROM w)
    SELECT ${WINDOW_COLUMNS}, r.flags, r.candidates FROM r JOIN message m ON m.id = r.id WHERE r.preceding < ${read.budget} ORDER BY r.id ${dir}`
  return fastQuery<WindowRow>(ctx.prisma, sql, statementName('messages-window', sql.text))
}

interface IdRow {
  id: number
  flags: number
  /** Whole rows: how many rows the side had within its limit, before its byte budget. */
  candidates?: number
}

/** A side whose byte budget left out some of its rows (then more messages follow it). */
const wasCut = (rows: IdRow[]): boolean => rows.length > 0 && (rows[0]?.candidates ?? 0) > rows.length

/** A window before presentation: its rows in ascending id order and what the answer says of them. */
interface MessageWindow<R extends IdRow> {
  rows: R[]
  /** Among rows; each side may end early if the read had a byte budget (whole rows), see boundWindow. */
  beforeRows: R[]
  anchorRows: R[]
  afterRows: R[]
  found_anchor: boolean
  found_oldest: boolean
  found_newest: boolean
  anchor: number
  isSearch: boolean
}

async function messageWindow(ctx: ViewerContext, input: GetMessagesInput, read: { kind: 'ids' }): Promise<MessageWindow<IdRow>>
async function messageWindow(ctx: ViewerContext, input: GetMessagesInput, read: { kind: 'whole'; budget: number }): Promise<MessageWindow<WindowRow>>
async function messageWindow(
  ctx: ViewerContext,
  input: GetMessagesInput,
  read: { kind: 'ids' } | { kind: 'whole'; budget: number },
): Promise<MessageWindow<IdRow> | MessageWindow<WindowRow>> {
  const { numBefore, includeAnchor } = input
  let { numAfter } = input
  if (numBefore + numAfter > MAX_MESSAGES_PER_FETCH) throw tooManyMessagesRequested(MAX_MESSAGES_PER_FETCH)
  if (numBefore > 0 && numAfter > 0 && !includeAnchor) throw badRequest('The anchor can only be excluded at an end of the range')
  const parsedAnchor = parseAnchor(input)
  const terms = parseNarrow(input.narrow)
  const narrow = await compileNarrow(ctx.prisma, ctx.user, terms)
  const anchor = await resolveAnchor(ctx, narrow, parsedAnchor)
  const anchoredToLeft = anchor === 0
  const anchoredToRight = anchor >= LARGER_THAN_MAX_MESSAGE_ID
  const how: WindowRead = read.kind === 'ids' ? read : { ...read, applyMarkdown: input.applyMarkdown, isSearch: narrow.isSearch }
  const side = (s: WindowSide): Promise<(IdRow | WindowRow)[]> =>
    how.kind === 'ids' ? windowRows(ctx, narrow, s, how) : windowRows(ctx, narrow, s, how)

  // upstream limit_query_to_range: the anchor row rides along with one side.
  const needBefore = !anchoredToLeft && numBefore > 0
  const needAfter = !anchoredToRight && numAfter > 0
  let before: (IdRow | WindowRow)[] = []
  let after: (IdRow | WindowRow)[] = []
  if (needBefore && needAfter) {
    ;[before, after] = await Promise.all([
      side({ side: 'before', bound: anchor - 1, limit: numBefore }),
      side({ side: 'after', bound: anchor, limit: numAfter + 1 }),
    ])
  } else if (needBefore) {
    const limit = numBefore + (!anchoredToRight && includeAnchor ? 1 : 0)
    before = await side({ side: 'before', bound: includeAnchor ? anchor : anchor - 1, limit })
  } else if (needAfter) {
    after = await side({ side: 'after', bound: includeAnchor ? anchor : anchor + 1, limit: numAfter + (includeAnchor ? 1 : 0) })
  } else {
    after = await side({ side: 'after', bound: anchor, limit: 1 })
  }
  const cutBefore = wasCut(before)
  const cutAfter = wasCut(after)
  const rows = [...before.reverse(), ...after]

  // upstream post_process_limited_query
  let beforeRows: (IdRow | WindowRow)[]
  let anchorRows: (IdRow | WindowRow)[]
  let afterRows: (IdRow | WindowRow)[]
  if (anchoredToRight) {
    numAfter = 0
    beforeRows = rows
    anchorRows = []
    afterRows = []
  } else {
    beforeRows = rows.filter((r) => r.id < anchor)
    anchorRows = rows.filter((r) => r.id === anchor)
    afterRows = rows.filter((r) => r.id > anchor)
  }
  if (numBefore > 0) beforeRows = beforeRows.slice(-numBefore)
  else if (!anchoredToRight) beforeRows = []
  if (numAfter > 0) afterRows = afterRows.slice(0, numAfter)
  else afterRows = []
  const kept = [...beforeRows, ...(includeAnchor ? anchorRows : []), ...afterRows]
  return {
    rows: kept,
    beforeRows,
    anchorRows: includeAnchor ? anchorRows : [],
    afterRows,
    found_anchor: anchorRows.length === 1,
    found_oldest: !cutBefore && (anchoredToLeft || beforeRows.length < numBefore),
    found_newest: !cutAfter && (anchoredToRight || afterRows.length < numAfter),
    anchor,
    isSearch: narrow.isSearch,
  } as MessageWindow<IdRow> | MessageWindow<WindowRow>
}

/**
 * The messages of a window as JSON, within MAX_MESSAGES_RESPONSE_BYTES:
 * taken from the anchor outwards, one side then the other in turn, each side
 * stopping at its first message that would overrun the budget (the nearest
 * message is always taken, so paging moves on). Which sides lost messages
 * is returned, for found_oldest / found_newest.
 */
export function boundWindow<T>(
  nearestFirst: { anchor: T[]; before: T[]; after: T[] },
  bytesOf: (item: T) => number,
  budget: number,
): { kept: Set<T>; cutBefore: boolean; cutAfter: boolean } {
  const kept = new Set<T>()
  let used = 0
  const take = (item: T): boolean => {
    const n = bytesOf(item)
    if (kept.size > 0 && used + n > budget) return false
    kept.add(item)
    used += n
    return true
  }
  for (const item of nearestFirst.anchor) take(item)
  let b = 0
  let a = 0
  let beforeOpen = true
  let afterOpen = true
  while ((beforeOpen && b < nearestFirst.before.length) || (afterOpen && a < nearestFirst.after.length)) {
    if (afterOpen && a < nearestFirst.after.length) afterOpen = take(nearestFirst.after[a++] as T)
    if (beforeOpen && b < nearestFirst.before.length) beforeOpen = take(nearestFirst.before[b++] as T)
  }
  return { kept, cutBefore: !beforeOpen, cutAfter: !afterOpen }
}

/** Upstream's parameters that message_ids cannot be combined with, in its error's order. */
const ANCHOR_PARAMETERS = ['num_before', 'num_after', 'anchor', 'message_ids', 'include_anchor', 'use_first_unread_anchor']

/**
 * GET /messages with message_ids (upstream level 300): the listed messages
 * that the viewer may read and that match the narrow, in ascending ID order,
 * within MAX_MESSAGES_RESPONSE_BYTES (from the lowest ID; a client asks again
 * for the rest). Unknown, inaccessible and non-matching IDs are left out.
 */
async function getMessagesById(ctx: ViewerContext, input: GetMessagesInput, messageIds: number[]): Promise<GetMessagesByIdResult> {
  if (input.numBefore > 0 || input.numAfter > 0 || input.anchor !== undefined || input.useFirstUnreadAnchor === true) {
    throw incompatibleParameters(ANCHOR_PARAMETERS)
  }
  if (messageIds.length > MAX_MESSAGES_PER_FETCH) throw tooManyMessagesRequested(MAX_MESSAGES_PER_FETCH)
  const terms = parseNarrow(input.narrow)
  const narrow = await compileNarrow(ctx.prisma, ctx.user, terms)
  // Message IDs are 32-bit: a larger one names no message.
  const ids = [...new Set(messageIds.filter((id) => id <= MAX_INT32))]
  const empty: GetMessagesByIdResult = { messages: rawArray([]), found_anchor: false, found_oldest: false, found_newest: false, history_limited: false }
  if (ids.length === 0) return empty
  const rows = await ctx.prisma.$queryRaw<WindowRow[]>(Prisma.sql`
    SELECT ${WINDOW_COLUMNS}, ${narrow.flags} AS flags ${narrow.from}
    WHERE ${narrow.where} AND ${narrow.id} = ANY(${ids}::int[]) ORDER BY ${narrow.id} ASC`)
  const presented = await presentMessages(ctx, rows.map((r) => ({ message: r, flags: r.flags })), {
    applyMarkdown: input.applyMarkdown,
    clientExtavatar: input.clientExtavatar,
    allowEmptyTopicName: input.allowEmptyTopicName,
  })
  if (narrow.isSearch) {
    for (const [i, m] of presented.entries()) {
      m.match_content = rows[i]?.renderedContent ?? ''
      m.match_subject = escapeHtml(rows[i]?.topic ?? '')
    }
  }
  const json = presented.map((m) => Buffer.from(JSON.stringify(m)))
  const { kept } = boundWindow({ anchor: [], before: [], after: json }, (b) => b.length + 1, MAX_MESSAGES_RESPONSE_BYTES)
  return { ...empty, messages: rawArray(json.filter((b) => kept.has(b))) }
}

export async function getMessages(ctx: ViewerContext, input: GetMessagesInput): Promise<GetMessagesResult | GetMessagesByIdResult> {
  if (input.messageIds !== undefined) return getMessagesById(ctx, input, input.messageIds)
  const window = await messageWindow(ctx, input, { kind: 'whole', budget: MAX_MESSAGES_RESPONSE_BYTES })
  const byId = new Map(window.rows.map((r) => [r.id, r]))
  const presented = await presentMessages(
    ctx,
    window.rows.map((r) => ({ message: r, flags: r.flags })),
    { applyMarkdown: input.applyMarkdown, clientExtavatar: input.clientExtavatar, allowEmptyTopicName: input.allowEmptyTopicName },
  )
  if (window.isSearch) {
    for (const m of presented) {
      const source = byId.get(m.id as number)
      m.match_content = source?.renderedContent ?? ''
      m.match_subject = escapeHtml(source?.topic ?? '')
    }
  }
  // Each message is serialized once, here; the reply copies the bytes (present/raw-json.ts).
  const json = new Map<number, Buffer>(presented.map((m) => [m.id as number, Buffer.from(JSON.stringify(m))]))
  const idsOf = (rows: IdRow[]) => rows.map((r) => r.id)
  const { kept, cutBefore, cutAfter } = boundWindow(
    { anchor: idsOf(window.anchorRows), before: idsOf(window.beforeRows).reverse(), after: idsOf(window.afterRows) },
    (id) => (json.get(id) as Buffer).length + 1,
    MAX_MESSAGES_RESPONSE_BYTES,
  )
  return {
    messages: rawArray(window.rows.flatMap((r) => (kept.has(r.id) ? [json.get(r.id) as Buffer] : []))),
    found_anchor: window.found_anchor,
    found_oldest: window.found_oldest && !cutBefore,
    found_newest: window.found_newest && !cutAfter,
    history_limited: false,
    anchor: window.anchor,
  }
}

/** The ids of GET /messages' window (no byte budget: nothing is presented), for POST /messages/flags/narrow. */
export async function getMessageIds(
  ctx: ViewerContext,
  input: Omit<GetMessagesInput, 'applyMarkdown' | 'clientExtavatar' | 'allowEmptyTopicName'>,
): Promise<{ ids: number[]; found_oldest: boolean; found_newest: boolean }> {
  const window = await messageWindow(ctx, { ...input, applyMarkdown: false, clientExtavatar: true, allowEmptyTopicName: true }, { kind: 'ids' })
  return { ids: window.rows.map((r) => r.id), found_oldest: window.found_oldest, found_newest: window.found_newest }
}

export async function getMessage(
  ctx: ViewerContext,
  messageId: number,
  options: { applyMarkdown: boolean; allowEmptyTopicName: boolean },
): Promise<{ message: Record<string, unknown>; raw_content: string }> {
  const { message, userMessage } = await accessMessageById(ctx, messageId)
  const [presented] = await presentMessages(ctx, [{ message, flags: userMessage?.flags ?? HISTORICAL_FLAGS }], {
    applyMarkdown: options.applyMarkdown,
    clientExtavatar: false,
    allowEmptyTopicName: options.allowEmptyTopicName,
  })
  return { message: presented ?? {}, raw_content: message.content }
}
