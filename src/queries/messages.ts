// GET /messages and GET /messages/{id}: message windows around an anchor in a
// narrow, and single messages, as API dicts with the viewer's flags.
import type { PrismaClient, Realm, User } from '../db/index.js'
import { Prisma } from '../db/index.js'
import { escapeHtml } from '../domain/markdown.js'
import { FLAG_BITS, HISTORICAL_FLAGS } from '../domain/flags.js'
import { flagMask } from '../db/flag-sql.js'
import { parseNarrow } from '../domain/narrow.js'
import { badRequest, invalidAnchor, tooManyMessagesRequested } from '../errors.js'
import { avatarUrlOf, presentMessage, type MessageRow } from '../present/message.js'
import { accessMessageById } from '../access/message.js'
import { compileNarrow, type CompiledNarrow } from './narrow-sql.js'
import { fastQuery, statementName } from '../db/fast-read.js'
import { messageLookups, type MessageReactionRow, type MessageUser } from '../db/message-reads.js'
import type { AuthCache } from '../db/auth-cache.js'

/** Upstream's MAX_MESSAGES_PER_FETCH. */
export const MAX_MESSAGES_PER_FETCH = 5000
/** Upstream's LARGER_THAN_MAX_MESSAGE_ID: the anchor `newest` resolves to it. */
export const LARGER_THAN_MAX_MESSAGE_ID = 10_000_000_000_000_000
const MAX_INT32 = 2_147_483_647

export interface ViewerContext {
  prisma: PrismaClient
  realm: Realm
  user: User
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
}

export interface GetMessagesResult {
  messages: Record<string, unknown>[]
  found_anchor: boolean
  found_oldest: boolean
  found_newest: boolean
  history_limited: boolean
  anchor: number
}

type WindowRow = MessageRow & { realmId: number; flags: number }

/** Loads what presentMessage needs for the rows (one statement) and presents them in the given order. */
export async function presentMessages(
  ctx: ViewerContext,
  rows: { message: MessageRow & { realmId: number }; flags: number }[],
  options: { applyMarkdown: boolean; clientExtavatar: boolean },
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
  const streamById = new Map(lookups.streams.map((s) => [s.id, s]))
  const reactionsOf = new Map<number, MessageReactionRow[]>()
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
    return presentMessage(message, {
      applyMarkdown: options.applyMarkdown,
      clientExtavatar: options.clientExtavatar,
      realm: ctx.realm,
      sender,
      avatarUrl,
      stream: message.streamId === null ? null : streamById.get(message.streamId),
      recipients: message.dmUserIds.flatMap((id) => userById.get(id) ?? []),
      reactions: reactionsOf.get(message.id) ?? [],
      flags,
      allowEditHistory: ctx.realm.allowEditHistory,
    })
  })
}

function parseAnchor(input: GetMessagesInput): number | 'newest' | 'oldest' | 'first_unread' {
  const raw = input.anchor
  if (raw === undefined) {
    if (input.useFirstUnreadAnchor) return 'first_unread'
    throw badRequest("Missing 'anchor' argument.")
  }
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

/** One side of the window: the messages with the viewer's flags, in one statement (prepared per narrow shape: statementName). */
function windowRows(ctx: ViewerContext, narrow: CompiledNarrow, side: 'before' | 'after', bound: number, limit: number): Promise<WindowRow[]> {
  if (limit <= 0) return Promise.resolve([])
  // Message ids are 32-bit; the `newest` anchor is not (and Prisma refuses to send it).
  const clamped = Math.max(-1, Math.min(bound, MAX_INT32))
  const cmp = side === 'before' ? Prisma.sql`${narrow.id} <= ${clamped}` : Prisma.sql`${narrow.id} >= ${clamped}`
  const order = side === 'before' ? Prisma.sql`ORDER BY ${narrow.id} DESC` : Prisma.sql`ORDER BY ${narrow.id} ASC`
  const sql = Prisma.sql`SELECT ${WINDOW_COLUMNS}, ${narrow.flags} AS flags ${narrow.from} WHERE ${narrow.where} AND ${cmp} ${order} LIMIT ${limit}`
  return fastQuery<WindowRow>(ctx.prisma, sql, statementName('messages-window', sql.text))
}

export async function getMessages(ctx: ViewerContext, input: GetMessagesInput): Promise<GetMessagesResult> {
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

  // upstream limit_query_to_range: the anchor row rides along with one side.
  const needBefore = !anchoredToLeft && numBefore > 0
  const needAfter = !anchoredToRight && numAfter > 0
  let before: WindowRow[] = []
  let after: WindowRow[] = []
  if (needBefore && needAfter) {
    ;[before, after] = await Promise.all([
      windowRows(ctx, narrow, 'before', anchor - 1, numBefore),
      windowRows(ctx, narrow, 'after', anchor, numAfter + 1),
    ])
  } else if (needBefore) {
    const limit = numBefore + (!anchoredToRight && includeAnchor ? 1 : 0)
    before = await windowRows(ctx, narrow, 'before', includeAnchor ? anchor : anchor - 1, limit)
  } else if (needAfter) {
    after = await windowRows(ctx, narrow, 'after', includeAnchor ? anchor : anchor + 1, numAfter + (includeAnchor ? 1 : 0))
  } else {
    after = await windowRows(ctx, narrow, 'after', anchor, 1)
  }
  const rows = [...before.reverse(), ...after]

  // upstream post_process_limited_query
  let beforeRows: WindowRow[]
  let anchorRows: WindowRow[]
  let afterRows: WindowRow[]
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

  const byId = new Map(kept.map((r) => [r.id, r]))
  const presented = await presentMessages(
    ctx,
    kept.map((r) => ({ message: r, flags: r.flags })),
    { applyMarkdown: input.applyMarkdown, clientExtavatar: input.clientExtavatar },
  )
  if (narrow.isSearch) {
    for (const m of presented) {
      const source = byId.get(m.id as number)
      m.match_content = source?.renderedContent ?? ''
      m.match_subject = escapeHtml(source?.topic ?? '')
    }
  }
  return {
    messages: presented,
    found_anchor: anchorRows.length === 1,
    found_oldest: anchoredToLeft || beforeRows.length < numBefore,
    found_newest: anchoredToRight || afterRows.length < numAfter,
    history_limited: false,
    anchor,
  }
}

export async function getMessage(
  ctx: ViewerContext,
  messageId: number,
  options: { applyMarkdown: boolean },
): Promise<{ message: Record<string, unknown>; raw_content: string }> {
  const { message, userMessage } = await accessMessageById(ctx, messageId)
  const [presented] = await presentMessages(ctx, [{ message, flags: userMessage?.flags ?? HISTORICAL_FLAGS }], {
    applyMarkdown: options.applyMarkdown,
    clientExtavatar: false,
  })
  return { message: presented ?? {}, raw_content: message.content }
}
