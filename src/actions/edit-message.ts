// PATCH /messages/{id}: content edits, topic edits and channel moves, checked
// in upstream's order (upstream-behaviour §6, spec "Edit a message"), applied
// in one transaction that publishes one update_message event (and
// delete_message for users who can no longer read the moved messages); the
// Notification Bot's notices follow the commit.
import type { ActionContext } from './context.js'
import { inTransaction } from './context.js'
import { emitFirstMessageIdChange } from './first-message-id.js'
import { reviveAfterMove } from './stream-activity.js'
import type { Stream, Tx } from '../db/index.js'
import { Prisma } from '../db/index.js'
import { accessMessageById } from '../access/message.js'
import { accessStreamById } from '../access/stream.js'
import { codePointLength, MAX_EDIT_HISTORY_BYTES, MAX_EDIT_HISTORY_ENTRIES, MAX_TOPIC_LENGTH } from '../domain/limits.js'
import {
  checkChannelMovePermission,
  checkChannelMoveTime,
  checkContentEdit,
  checkEditPayload,
  checkMoveWindow,
  checkTopicEdit,
  exemptFromMoveLimits,
  moveDeadlineSeconds,
  type PropagateMode,
} from '../domain/message-edit.js'
import { normalizeTopic, topicResolutionChange, type TopicResolution } from '../domain/topics.js'
import { textTooLong } from '../errors.js'
import { getEditPermissions } from '../queries/realm-permissions.js'
import { checkMaySendToStream } from './message-recipients.js'
import { audienceOf, messageAudience } from './message-edit-audience.js'
import { applyContentEdit, planContentEdit } from './message-edit-content.js'
import { attachmentUpdateEvents } from './message-attachments.js'
import { enqueueMissedMessageEmails } from '../notifications/enqueue.js'
import { sendMoveNotices } from './message-edit-notices.js'
import type { AttachmentDict } from '../queries/attachments.js'
import { deleteStreamMessagesEvent, updateMessageEvent } from '../events/schemas/index.js'
import {
  accessibleTopicMessages,
  hasFullHistory,
  moveCopies,
  moveUserTopics,
  relocateMessages,
  selectByPropagateMode,
  type MoveApplied,
  type TopicMessage,
} from './move-messages.js'

export interface EditMessageInput {
  messageId: number
  content?: string
  topic?: string
  streamId?: number
  propagateMode: PropagateMode
  sendNotificationToOldThread: boolean
  sendNotificationToNewThread: boolean
}

/**
 * Prepends one entry to the messages' edit history and stamps their last edit
 * time, in one statement for all of them. A history keeps its newest
 * MAX_EDIT_HISTORY_ENTRIES entries within MAX_EDIT_HISTORY_BYTES (the bytes
 * of each entry's stored JSON, counted from the newest); older entries are
 * dropped. The new entry is always kept.
 */
async function recordHistory(tx: Tx, ids: number[], entry: Record<string, unknown>, now: Date): Promise<void> {
  if (ids.length === 0) return
  await tx.$executeRaw(Prisma.sql`
    UPDATE message m SET last_edit_time = ${now},
      edit_history = (
        SELECT jsonb_agg(kept.e ORDER BY kept.i) FROM (
          SELECT h.e, h.i, sum(octet_length(h.e::text)) OVER (ORDER BY h.i) AS upto
          FROM jsonb_array_elements(jsonb_build_array(${JSON.stringify(entry)}::jsonb) || COALESCE(m.edit_history, '[]'::jsonb))
            WITH ORDINALITY AS h(e, i)
        ) kept
        WHERE kept.i = 1 OR (kept.i <= ${MAX_EDIT_HISTORY_ENTRIES} AND kept.upto <= ${MAX_EDIT_HISTORY_BYTES}))
    WHERE m.id = ANY(${ids}::int[])`)
}

export type EditMessageResult = {
  /** Upstream level 285: the actor's uploads that the content edit left linked from no message. */
  detached_uploads: AttachmentDict[]
}

export async function editMessage(ctx: ActionContext, input: EditMessageInput): Promise<EditMessageResult> {
  const now = ctx.now()
  const { message, stream } = await accessMessageById(ctx, input.messageId, { modifying: true })
  const actor = ctx.user
  const hasContent = input.content !== undefined
  if (hasContent) checkContentEdit({ realm: ctx.realm, actor, senderId: message.senderId, sentAt: message.dateSent, now })

  let rawTopic = input.topic?.trim()
  if (rawTopic !== undefined && stream && rawTopic === message.topic) rawTopic = undefined
  const streamId = stream && input.streamId === stream.id ? undefined : input.streamId
  checkEditPayload({
    isStreamMessage: stream !== null,
    content: hasContent,
    topic: rawTopic !== undefined,
    stream: streamId !== undefined,
    propagateMode: input.propagateMode,
  })

  let newTopic: string | undefined
  let resolution: TopicResolution = null
  if (rawTopic !== undefined) {
    if (!hasContent && streamId === undefined) resolution = topicResolutionChange(message.topic, rawTopic)
    // Resolving a topic of the maximum length is allowed: the name is truncated instead.
    if (resolution !== 'resolved' && codePointLength(rawTopic) > MAX_TOPIC_LENGTH) throw textTooLong('topic', MAX_TOPIC_LENGTH)
    newTopic = normalizeTopic(rawTopic)
    const perms = await getEditPermissions(ctx.prisma, ctx.realm, actor, now)
    checkTopicEdit({ realm: ctx.realm, actor, perms, currentTopic: message.topic, resolvingOnly: resolution !== null, sentAt: message.dateSent, now })
  }

  const contentEdit = input.content !== undefined ? await planContentEdit(ctx, message, stream, input.content) : null

  let newStream: Stream | null = null
  if (streamId !== undefined && stream) {
    checkChannelMovePermission({ perms: await getEditPermissions(ctx.prisma, ctx.realm, actor, now) })
    newStream = (await accessStreamById(ctx, streamId)).stream
    await checkMaySendToStream(ctx, newStream)
    checkChannelMoveTime({ realm: ctx.realm, actor, sentAt: message.dateSent, now })
  }

  const moving = stream !== null && (newTopic !== undefined || newStream !== null)
  let topicMessages: TopicMessage[] = []
  if (moving && stream) {
    topicMessages = await accessibleTopicMessages(ctx.prisma, actor, stream, message.topic, await hasFullHistory(ctx.prisma, actor, stream))
    if (input.propagateMode === 'change_all' && !exemptFromMoveLimits(actor.role)) {
      checkMoveWindow(topicMessages, moveDeadlineSeconds(ctx.realm, { topic: newTopic !== undefined, stream: newStream !== null }), now)
    }
  }
  const ids = moving ? selectByPropagateMode(topicMessages, message, input.propagateMode) : [message.id]
  const editTimestamp = Math.floor(now.getTime() / 1000)

  let newlyMentioned: { userId: number; flags: number }[] = []
  let detachedUploads: AttachmentDict[] = []
  await inTransaction(ctx, async (tx, emit) => {
    const before = await messageAudience(tx, message.id, stream)
    const event = updateMessageEvent({
      user_id: actor.id,
      edit_timestamp: editTimestamp,
      message_id: message.id,
      message_ids: ids,
      rendering_only: false,
      flags: [],
    })
    if (stream) Object.assign(event, { stream_name: stream.name, stream_id: stream.id })
    const entry: Record<string, unknown> = { user_id: actor.id, timestamp: editTimestamp }
    const moveEntry: Record<string, unknown> = {}
    if (contentEdit) {
      const applied = await applyContentEdit(tx, ctx, message, contentEdit)
      Object.assign(event, applied.eventFields)
      Object.assign(entry, applied.historyFields)
      newlyMentioned = applied.newlyMentioned
      detachedUploads = applied.detachedUploads
      for (const update of await attachmentUpdateEvents(tx, ctx.realm.id, message.senderId, applied.relinkedUploads)) emit(update, [message.senderId])
    }
    let applied: MoveApplied = { losingCopies: new Set(), losingAccess: new Set(), firstMessageIds: [] }
    if (moving && stream) {
      Object.assign(event, { propagate_mode: input.propagateMode, orig_subject: message.topic })
      if (newStream) Object.assign(moveEntry, { prev_stream: stream.id, stream: newStream.id })
      if (newTopic !== undefined) Object.assign(moveEntry, { prev_topic: message.topic, topic: newTopic })
      if (newTopic !== undefined) Object.assign(event, { subject: newTopic, topic_links: [] })
      if (newStream) event.new_stream_id = newStream.id
      await relocateMessages(tx, { ids, streamId: (newStream ?? stream).id, topic: newTopic ?? message.topic })
      if (newStream) applied = await moveCopies(tx, { ids, oldStream: stream, newStream })
      if (input.propagateMode === 'change_all') {
        await moveUserTopics(tx, emit, {
          oldStream: stream,
          oldTopic: message.topic,
          newStream: newStream ?? stream,
          newTopic: newTopic ?? message.topic,
          now,
          skipUsers: applied.losingAccess,
        })
      }
      await recordHistory(tx, ids.filter((id) => id !== message.id), { user_id: actor.id, timestamp: editTimestamp, ...moveEntry }, now)
    }
    await recordHistory(tx, [message.id], { ...entry, ...moveEntry }, now)

    const after = await messageAudience(tx, message.id, newStream ?? stream)
    const hadAccess = [...before.rows.keys(), ...before.subscribers]
    const { userIds, perUser } = audienceOf({ rows: after.rows, subscribers: [...hadAccess, ...after.subscribers] }, applied.losingAccess)
    emit(event, userIds, { perUser })
    if (applied.losingAccess.size > 0 && stream) {
      emit(
        deleteStreamMessagesEvent(ids, stream.id, message.topic),
        [...applied.losingAccess].sort((a, b) => a - b),
      )
    }
    for (const { stream: changed, value } of applied.firstMessageIds) await emitFirstMessageIdChange(tx, emit, ctx.realm.id, changed, value)
    // Recent messages moved into a channel not recently active make it active (level 323).
    if (newStream && !newStream.isRecentlyActive) await reviveAfterMove(tx, emit, ctx.realm.id, newStream.id, now)
  })

  // Upstream notifies those an edit newly mentions in a channel message (never for direct messages, already notified).
  if (stream && newlyMentioned.length > 0) {
    await enqueueMissedMessageEmails(ctx, {
      realmId: ctx.realm.id,
      presenceDisabled: ctx.realm.presenceDisabled,
      senderId: actor.id,
      messageId: message.id,
      streamId: (newStream ?? stream).id,
      topic: newTopic ?? message.topic,
      dmUserIds: [],
      recipients: newlyMentioned,
      mentionsOnly: true,
    }).catch((error: unknown) => ctx.log.error({ err: error, message_id: message.id }, 'queueing missed-message emails failed'))
  }

  if (moving && stream) {
    await sendMoveNotices(ctx, {
      oldStream: stream,
      oldTopic: message.topic,
      newStream: newStream ?? stream,
      newTopic: newTopic ?? message.topic,
      movedIds: ids,
      targetId: message.id,
      resolution,
      sendToOldThread: input.sendNotificationToOldThread,
      sendToNewThread: input.sendNotificationToNewThread,
    })
  }
  return { detached_uploads: detachedUploads }
}
