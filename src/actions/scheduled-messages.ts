// Scheduled messages: create, edit and delete, each told to the sender's
// clients by a scheduled_messages event. The message is checked as a send
// would be (addressee, permission to post, content and topic limits) when it
// is scheduled, and again when scheduler/delivery.ts sends it. A user has at
// most MAX_SCHEDULED_MESSAGES_PER_USER waiting (Roost's bound: upstream has none).
import type { ScheduledMessage, Tx } from '../db/index.js'
import type { ActionContext, TxContext } from './context.js'
import { inTransaction } from './context.js'
import { MAX_SCHEDULED_MESSAGES_PER_USER, normalizeMessageContent } from '../domain/limits.js'
import { normalizeTopic } from '../domain/topics.js'
import {
  badRequest,
  missingTopic,
  nothingToChange,
  scheduledMessageAlreadySent,
  scheduledMessageNotFound,
  scheduledRecipientRequired,
  scheduledTimeNotInFuture,
  scheduledTopicRequired,
  tooManyScheduledMessages,
  topicsRequired,
} from '../errors.js'
import { checkMaySendToStream, findDirectRecipients, findStreamForSend, type MessageType } from './message-recipients.js'
import { renderMessageContent } from './message-render.js'
import { checkMaySendDirectMessage } from './direct-message-permission.js'
import { defaultReadBySender } from './send-message.js'
import { presentScheduledMessage, type ScheduledMessageDict } from '../queries/scheduled-messages.js'
import { scheduledMessagesAddEvent, scheduledMessagesRemoveEvent, scheduledMessagesUpdateEvent } from '../events/schemas/index.js'

export type ScheduledRecipientKind = 'stream' | 'private'

export const recipientKindOf = (type: MessageType): ScheduledRecipientKind =>
  type === 'channel' || type === 'stream' ? 'stream' : 'private'

export interface CreateScheduledMessageInput {
  type: MessageType
  to: number | number[]
  content: string
  topic?: string
  /** UTC seconds. */
  scheduledDeliveryTimestamp: number
  readBySender?: boolean
}

export interface EditScheduledMessageInput {
  type?: MessageType
  to?: number | number[]
  content?: string
  topic?: string
  scheduledDeliveryTimestamp?: number
}

export { scheduledMessagesAddEvent, scheduledMessagesRemoveEvent, scheduledMessagesUpdateEvent }

/** A channel is named by one ID (or a one-element list), as upstream's extract_stream_id. */
function channelIdOf(to: number | number[]): number {
  if (typeof to === 'number') return to
  if (to.length !== 1) throw badRequest('Invalid data type for channel ID')
  return to[0] as number
}

const userIdsOf = (to: number | number[]): number[] => [...new Set(typeof to === 'number' ? [to] : to)]

interface Recipient {
  recipientType: ScheduledRecipientKind
  streamId: number | null
  /** Direct: the other participants, or the sender alone for a note to self. */
  to: number[]
  topic: string
}

async function resolveRecipient(ctx: ActionContext, kind: ScheduledRecipientKind, to: number | number[], topic: string | undefined): Promise<Recipient> {
  if (kind === 'stream') {
    const streamId = channelIdOf(to)
    if (topic === undefined) throw missingTopic()
    const normalized = normalizeTopic(topic, { noTopicIsEmpty: true })
    const stream = await findStreamForSend(ctx, streamId)
    await checkMaySendToStream(ctx, stream)
    if (ctx.realm.mandatoryTopics && normalized === '') throw topicsRequired()
    return { recipientType: 'stream', streamId: stream.id, to: [], topic: normalized }
  }
  const ids = userIdsOf(to)
  if (ids.length === 0) throw badRequest('Message must have recipients')
  const users = await findDirectRecipients(ctx, ids)
  await checkMaySendDirectMessage(ctx, users, [...new Set([ctx.user.id, ...users.map((u) => u.id)])].sort((a, b) => a - b))
  const others = users.map((u) => u.id).filter((id) => id !== ctx.user.id).sort((a, b) => a - b)
  return { recipientType: 'private', streamId: null, to: others.length > 0 ? others : [ctx.user.id], topic: '' }
}

function deliveryTime(ctx: ActionContext, seconds: number): Date {
  const at = new Date(seconds * 1000)
  if (at.getTime() <= ctx.now().getTime()) throw scheduledTimeNotInFuture()
  return at
}

async function render(ctx: ActionContext, content: string): Promise<{ content: string; html: string; uploads: string[] }> {
  const normalized = normalizeMessageContent(content)
  const rendered = await renderMessageContent(ctx.prisma, ctx.realm, ctx.user, normalized, ctx.config)
  return { content: normalized, html: rendered.html, uploads: rendered.linkedUploadPaths }
}

/** Links the sender's own uploads referenced by the content to the scheduled message. */
async function claimUploads(tx: Tx, ctx: TxContext, scheduledMessageId: number, paths: string[]): Promise<void> {
  if (paths.length === 0) return
  const owned = await tx.attachment.findMany({ where: { realmId: ctx.realm.id, ownerId: ctx.user.id, pathId: { in: paths } }, select: { id: true } })
  if (owned.length === 0) return
  await tx.attachmentScheduledMessage.createMany({ data: owned.map((a) => ({ attachmentId: a.id, scheduledMessageId })), skipDuplicates: true })
}

export async function createScheduledMessage(ctx: ActionContext, input: CreateScheduledMessageInput): Promise<number> {
  const scheduledTimestamp = deliveryTime(ctx, input.scheduledDeliveryTimestamp)
  const recipient = await resolveRecipient(ctx, recipientKindOf(input.type), input.to, input.topic)
  const body = await render(ctx, input.content)
  // Upstream's default: read when sent from a client whose own messages start read, unless it is a note to self.
  const noteToSelf = recipient.recipientType === 'private' && recipient.to.length === 1 && recipient.to[0] === ctx.user.id
  const readBySender = input.readBySender ?? (defaultReadBySender(ctx.clientName) && !noteToSelf)
  return inTransaction(ctx, async (tx, emit) => {
    // Serializes a user's concurrent creations, so the cap holds.
    await tx.$executeRaw`SELECT pg_advisory_xact_lock(7435, ${ctx.user.id}::int)`
    const waiting = await tx.scheduledMessage.count({ where: { senderId: ctx.user.id, delivered: false } })
    if (waiting >= MAX_SCHEDULED_MESSAGES_PER_USER) throw tooManyScheduledMessages(MAX_SCHEDULED_MESSAGES_PER_USER)
    const row = await tx.scheduledMessage.create({
      data: {
        realmId: ctx.realm.id,
        senderId: ctx.user.id,
        ...recipient,
        content: body.content,
        renderedContent: body.html,
        scheduledTimestamp,
        readBySender,
        createdAt: ctx.now(),
      },
    })
    await claimUploads(tx, ctx, row.id, body.uploads)
    emit(scheduledMessagesAddEvent([presentScheduledMessage(row)]), [ctx.user.id])
    return row.id
  })
}

async function ownScheduledMessage(ctx: ActionContext, id: number): Promise<ScheduledMessage> {
  const row = await ctx.prisma.scheduledMessage.findFirst({ where: { id, senderId: ctx.user.id, realmId: ctx.realm.id } })
  if (!row) throw scheduledMessageNotFound()
  return row
}

export async function editScheduledMessage(ctx: ActionContext, id: number, input: EditScheduledMessageInput): Promise<void> {
  const given = [input.type, input.to, input.content, input.topic, input.scheduledDeliveryTimestamp].some((v) => v !== undefined)
  if (!given) throw nothingToChange()
  if (input.type !== undefined && input.to === undefined) throw scheduledRecipientRequired()
  if (input.type !== undefined && recipientKindOf(input.type) === 'stream' && input.topic === undefined) throw scheduledTopicRequired()
  const row = await ownScheduledMessage(ctx, id)
  if (row.delivered) throw scheduledMessageAlreadySent()

  const data: Partial<ScheduledMessage> = {}
  if (input.to !== undefined) {
    const kind = input.type !== undefined ? recipientKindOf(input.type) : (row.recipientType as ScheduledRecipientKind)
    Object.assign(data, await resolveRecipient(ctx, kind, input.to, input.topic ?? (kind === 'stream' ? row.topic : undefined)))
  } else if (input.topic !== undefined && row.recipientType === 'stream') {
    data.topic = normalizeTopic(input.topic, { noTopicIsEmpty: true })
    if (ctx.realm.mandatoryTopics && data.topic === '') throw topicsRequired()
  }
  if (input.scheduledDeliveryTimestamp !== undefined) {
    data.scheduledTimestamp = deliveryTime(ctx, input.scheduledDeliveryTimestamp)
  } else if (row.failed) {
    // A failed message goes back to the queue only for a time still ahead.
    deliveryTime(ctx, row.scheduledTimestamp.getTime() / 1000)
  }
  let uploads: string[] = []
  if (input.content !== undefined) {
    const body = await render(ctx, input.content)
    data.content = body.content
    data.renderedContent = body.html
    uploads = body.uploads
  }
  await inTransaction(ctx, async (tx, emit) => {
    const { count } = await tx.scheduledMessage.updateMany({
      where: { id, senderId: ctx.user.id, delivered: false },
      data: { ...data, failed: false, failureMessage: null },
    })
    if (count === 0) throw scheduledMessageAlreadySent()
    await claimUploads(tx, ctx, id, uploads)
    const updated = await tx.scheduledMessage.findUniqueOrThrow({ where: { id } })
    emit(scheduledMessagesUpdateEvent(presentScheduledMessage(updated)), [ctx.user.id])
  })
}

export async function deleteScheduledMessage(ctx: ActionContext, id: number): Promise<void> {
  await inTransaction(ctx, async (tx, emit) => {
    const { count } = await tx.scheduledMessage.deleteMany({ where: { id, senderId: ctx.user.id, realmId: ctx.realm.id, delivered: false } })
    // A delivered message is no longer listed, so it no longer exists as a scheduled one.
    if (count === 0) throw scheduledMessageNotFound()
    emit(scheduledMessagesRemoveEvent(id), [ctx.user.id])
  })
}
