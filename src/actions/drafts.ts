// Drafts: create (all or nothing), edit (full replacement) and delete, each
// told to the user's other clients by a drafts event. Nothing is stored while
// the user has enable_drafts_synchronization off.
import type { Draft } from '../db/index.js'
import { inTransaction, type ActionContext } from './context.js'
import { accessStreamById } from '../access/stream.js'
import { normalizeMessageContent, truncateTopic } from '../domain/limits.js'
import {
  draftNeedsOneChannel,
  draftNotFound,
  draftsSyncDisabled,
  invalidUserId,
  negativeTimestamp,
  topicHasNullBytes,
} from '../errors.js'
import { draftsAddEvent, draftsRemoveEvent, draftsUpdateEvent, presentDraft } from '../present/draft.js'
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

/** Checks one draft as upstream does and returns the row to store. */
async function validDraft(ctx: ActionContext, draft: DraftInput): Promise<DraftRow> {
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
    const { stream } = await accessStreamById(ctx, draft.to[0] as number)
    return { type: 'stream', to: [stream.id], topic, content, lastEditTime }
  }
  if (draft.type === 'private' && draft.to.length > 0) {
    const ids = [...new Set(draft.to)]
    const found = await ctx.prisma.user.findMany({ where: { id: { in: ids }, realmId: ctx.user.realmId }, select: { id: true } })
    const known = new Set(found.map((u) => u.id))
    const missing = ids.find((id) => !known.has(id))
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
  const rows: DraftRow[] = []
  for (const draft of drafts) rows.push(await validDraft(ctx, draft))
  return inTransaction(ctx, async (tx, emit) => {
    const created: Draft[] = []
    for (const row of rows) created.push(await tx.draft.create({ data: { userId: ctx.user.id, ...row } }))
    if (created.length > 0) emit(draftsAddEvent(created.map(presentDraft)), [ctx.user.id])
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
  const row = await validDraft(ctx, input)
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
