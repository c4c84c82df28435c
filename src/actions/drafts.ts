// Drafts: create (all or nothing), edit (full replacement) and delete, each
// told to the user's other clients by a drafts event. Nothing is stored while
// the user has enable_drafts_synchronization off. A user keeps at most
// MAX_DRAFTS_PER_USER (Roost's bound: upstream has none).
import type { Draft } from '../db/index.js'
import { inTransaction, type ActionContext } from './context.js'
import { checkStreamsByIds, type StreamAccess } from '../access/stream.js'
import { MAX_DRAFTS_PER_USER, normalizeMessageContent, truncateTopic } from '../domain/limits.js'
import {
  draftNeedsOneChannel,
  draftNotFound,
  draftsSyncDisabled,
  invalidUserId,
  negativeTimestamp,
  tooManyDrafts,
  topicHasNullBytes,
} from '../errors.js'
import { presentDraft } from '../present/draft.js'
import { draftsAddEvent, draftsRemoveEvent, draftsUpdateEvent } from '../events/schemas/index.js'
import { draftsSynchronized } from '../queries/drafts.js'

export interface DraftInput {
  type: '' | 'stream' | 'private'
  to: number[]
  topic: string
  content: string
  /** Last edit time in seconds, as the client saw it; defaults to now. */
  timestamp?: number
}

interface DraftRow {
  type: string
  to: number[]
  topic: string
  content: string
  lastEditTime: Date
}

async function requireSync(ctx: ActionContext): Promise<void> {
  if (!(await draftsSynchronized(ctx.prisma, ctx.user.id))) throw draftsSyncDisabled()
}

/** What validDraft needs from the database, read once for every draft of a request. */
interface DraftReferences {
  /** Each channel a channel draft names: the access, or why it is refused. */
  streams: Map<number, StreamAccess | Error>
  /** The realm's users among those the direct drafts name. */
  users: Set<number>
}

/** Reads the channels and users that `drafts` name: two or three queries however many drafts and recipients. */
async function draftReferences(ctx: ActionContext, drafts: readonly DraftInput[]): Promise<DraftReferences> {
  const streamIds = drafts.filter((d) => d.type === 'stream' && d.to.length === 1).map((d) => d.to[0] as number)
  const userIds = [...new Set(drafts.filter((d) => d.type === 'private').flatMap((d) => d.to))]
  const streams = await checkStreamsByIds(ctx.prisma, ctx.user, streamIds)
  const users =
    userIds.length === 0 ? [] : await ctx.prisma.user.findMany({ where: { id: { in: userIds }, realmId: ctx.user.realmId }, select: { id: true } })
  return { streams, users: new Set(users.map((u) => u.id)) }
}

/** Checks one draft as upstream does and returns the row to store. */
function validDraft(ctx: ActionContext, refs: DraftReferences, draft: DraftInput): DraftRow {
  const content = normalizeMessageContent(draft.content)
  let lastEditTime = ctx.now()
  if (draft.timestamp !== undefined) {
    const seconds = Math.round(draft.timestamp * 1e6) / 1e6
    if (seconds < 0) throw negativeTimestamp()
    lastEditTime = new Date(Math.round(seconds * 1000))
  }
  if (draft.type === 'stream') {
    const topic = truncateTopic(draft.topic)
    if (topic.includes('\u0000')) throw topicHasNullBytes()
    if (draft.to.length !== 1) throw draftNeedsOneChannel()
    const access = refs.streams.get(draft.to[0] as number)
    if (access === undefined) throw new Error('validDraft: a channel missing from draftReferences')
    if (access instanceof Error) throw access
    return { type: 'stream', to: [access.stream.id], topic, content, lastEditTime }
  }
  if (draft.type === 'private' && draft.to.length > 0) {
    const ids = [...new Set(draft.to)]
    const missing = ids.find((id) => !refs.users.has(id))
    if (missing !== undefined) throw invalidUserId(missing)
    // As upstream's recipient: the other participants, or only the user for a note to self.
    const others = ids.filter((id) => id !== ctx.user.id).sort((a, b) => a - b)
    return { type: 'private', to: others.length > 0 ? others : [ctx.user.id], topic: '', content, lastEditTime }
  }
  // Unaddressed (type "" or a direct draft without recipients yet): `to` and topic are ignored.
  return { type: '', to: [], topic: '', content, lastEditTime }
}

export async function createDrafts(ctx: ActionContext, drafts: DraftInput[]): Promise<number[]> {
  await requireSync(ctx)
  const refs = await draftReferences(ctx, drafts)
  const rows = drafts.map((draft) => validDraft(ctx, refs, draft))
  return inTransaction(ctx, async (tx, emit) => {
    if (rows.length === 0) return []
    // Serializes a user's concurrent creations, so the cap holds.
    await tx.$executeRaw`SELECT pg_advisory_xact_lock(7434, ${ctx.user.id}::int)`
    const kept = await tx.draft.count({ where: { userId: ctx.user.id } })
    if (kept + rows.length > MAX_DRAFTS_PER_USER) throw tooManyDrafts(MAX_DRAFTS_PER_USER)
    // One INSERT; its rows take increasing IDs in the order given.
    const created = (await tx.draft.createManyAndReturn({ data: rows.map((row) => ({ userId: ctx.user.id, ...row })) })).sort((a, b) => a.id - b.id)
    emit(draftsAddEvent(created.map(presentDraft)), [ctx.user.id])
    return created.map((d) => d.id)
  })
}

async function ownDraft(ctx: ActionContext, draftId: number): Promise<Draft> {
  const draft = await ctx.prisma.draft.findFirst({ where: { id: draftId, userId: ctx.user.id } })
  if (!draft) throw draftNotFound()
  return draft
}

export async function editDraft(ctx: ActionContext, draftId: number, input: DraftInput): Promise<void> {
  await requireSync(ctx)
  await ownDraft(ctx, draftId)
  const row = validDraft(ctx, await draftReferences(ctx, [input]), input)
  await inTransaction(ctx, async (tx, emit) => {
    const { count } = await tx.draft.updateMany({ where: { id: draftId, userId: ctx.user.id }, data: row })
    if (count === 0) throw draftNotFound()
    const updated = await tx.draft.findUniqueOrThrow({ where: { id: draftId } })
    emit(draftsUpdateEvent(presentDraft(updated)), [ctx.user.id])
  })
}

export async function deleteDraft(ctx: ActionContext, draftId: number): Promise<void> {
  await requireSync(ctx)
  await inTransaction(ctx, async (tx, emit) => {
    const { count } = await tx.draft.deleteMany({ where: { id: draftId, userId: ctx.user.id } })
    if (count === 0) throw draftNotFound()
    emit(draftsRemoveEvent(draftId), [ctx.user.id])
  })
}
