// Content edits: re-render with the sending path's renderer, check wildcard
// mentions against wildcard_mention_policy and group mentions against each
// group's can_mention_group, then store the new content and
// recompute every recipient's mention, wildcard and alert-word flags
// (upstream update_user_message_flags; spec "Personal flags").
import type { ActionContext, TxContext } from './context.js'
import type { Message, Stream, Tx } from '../db/index.js'
import { Prisma } from '../db/index.js'
import { FLAG_BITS } from '../domain/flags.js'
import { MAX_MESSAGE_LENGTH, normalizeMessageContent } from '../domain/limits.js'
import { topicWildcardMentionAllowed, wildcardMentionAllowed } from '../domain/mentions.js'
import { holdsRealmPermission } from '../queries/realm-permissions.js'
import type { RenderResult } from '../domain/markdown.js'
import { streamWildcardMentionNotAllowed, textTooLong, topicWildcardMentionNotAllowed } from '../errors.js'
import { isMeMessage } from '../present/message.js'
import { claimAttachments, unlinkUnreferencedAttachments } from './message-attachments.js'
import type { AttachmentDict } from '../queries/attachments.js'
import { alertedUserIds, groupMemberIds, renderMessageContent } from './message-render.js'
import { checkGroupMentionsAllowed } from './user-groups-access.js'
import { activeSubscriberIds } from './message-edit-audience.js'

/** What an edit that empties a message leaves (upstream). */
export const DELETED_CONTENT = '(deleted)'

export interface ContentEdit {
  content: string
  rendered: RenderResult
  /** Mentioned directly or through a group. */
  mentioned: Set<number>
  /** Senders of the topic (topic wildcards reach only them). */
  topicParticipants: Set<number>
}

/** Content as stored after an edit: too long is an error, empty becomes `(deleted)`. */
export function editedContent(raw: string): string {
  if (Array.from(raw).length > MAX_MESSAGE_LENGTH) throw textTooLong('content', MAX_MESSAGE_LENGTH)
  return raw.trim() === '' ? DELETED_CONTENT : normalizeMessageContent(raw)
}

export async function planContentEdit(ctx: ActionContext, message: Message, stream: Stream | null, raw: string): Promise<ContentEdit> {
  const content = editedContent(raw)
  const rendered = await renderMessageContent(ctx.prisma, ctx.realm, ctx.user, content, ctx.config)
  const mentioned = new Set([...rendered.mentionedUserIds, ...(await groupMemberIds(ctx.prisma, rendered.mentionedGroupIds))])
  const topicParticipants = new Set<number>()
  if (stream) {
    const senders = await ctx.prisma.$queryRaw<{ sender_id: number }[]>`
      SELECT DISTINCT sender_id FROM message WHERE stream_id = ${stream.id} AND lower(topic) = lower(${message.topic})`
    for (const s of senders) topicParticipants.add(s.sender_id)
    const policy = { mayMentionMany: rendered.streamWildcard || rendered.topicWildcard ? await holdsRealmPermission(ctx.prisma, ctx.realm, ctx.user, 'can_mention_many_users_group', ctx.now()) : false }
    if (rendered.streamWildcard) {
      const subscriberCount = (await activeSubscriberIds(ctx.prisma, stream.id)).length
      if (!wildcardMentionAllowed({ ...policy, subscriberCount })) throw streamWildcardMentionNotAllowed()
    }
    if (rendered.topicWildcard && !topicWildcardMentionAllowed({ ...policy, participantCount: topicParticipants.size })) {
      throw topicWildcardMentionNotAllowed()
    }
  }
  await checkGroupMentionsAllowed(ctx.prisma, ctx.realm, ctx.user, rendered.mentionedGroupIds, ctx.now())
  return { content, rendered, mentioned, topicParticipants }
}

const RECOMPUTED = FLAG_BITS.mentioned | FLAG_BITS.stream_wildcard_mentioned | FLAG_BITS.topic_wildcard_mentioned | FLAG_BITS.has_alert_word

/** The copy's flags with the mention bits recomputed for the new content. */
function recomputed(flags: number, userId: number, edit: ContentEdit, alerted: ReadonlySet<number>): number {
  let out = flags & ~RECOMPUTED
  if (edit.mentioned.has(userId)) out |= FLAG_BITS.mentioned
  if (edit.rendered.streamWildcard) out |= FLAG_BITS.stream_wildcard_mentioned
  if (edit.rendered.topicWildcard && edit.topicParticipants.has(userId)) out |= FLAG_BITS.topic_wildcard_mentioned
  if (alerted.has(userId)) out |= FLAG_BITS.has_alert_word
  return out
}

export interface AppliedContentEdit {
  /** Fields of the update_message event. */
  eventFields: Record<string, unknown>
  /** Fields of the edit-history entry. */
  historyFields: Record<string, unknown>
  /** The sender's uploads that the edit left linked from no message (the response's detached_uploads). */
  detachedUploads: AttachmentDict[]
  /** IDs of the uploads the edit started or stopped linking: their owner gets `attachment` `update` events. */
  relinkedUploads: number[]
  /** Recipients the edit newly mentions (a mention, wildcard or alert-word bit they lacked), with their new flags: candidates for a missed-message email. */
  newlyMentioned: { userId: number; flags: number }[]
}

/** Stores the new content and the recipients' recomputed flags. */
export async function applyContentEdit(tx: Tx, ctx: TxContext, message: Message, edit: ContentEdit): Promise<AppliedContentEdit> {
  const r = edit.rendered
  await tx.message.update({
    where: { id: message.id },
    data: { content: edit.content, renderedContent: r.html, hasLink: r.hasLink, hasImage: r.hasImage, hasAttachment: r.hasAttachment },
  })
  const claimed = await claimAttachments(tx, { realmId: ctx.realm.id, senderId: message.senderId, messageId: message.id, paths: r.linkedUploadPaths })
  const unlinked = await unlinkUnreferencedAttachments(tx, { messageId: message.id, senderId: message.senderId, keepPaths: r.linkedUploadPaths })

  const rows = await tx.userMessage.findMany({ where: { messageId: message.id }, select: { userId: true, flags: true } })
  const alerted = await alertedUserIds(tx, { realmId: ctx.realm.id, cacheKey: ctx.authCache }, rows.map((row) => row.userId), edit.content)
  const changed = rows
    .map((row) => ({ userId: row.userId, flags: recomputed(row.flags, row.userId, edit, alerted), old: row.flags }))
    .filter((row) => row.flags !== row.old)
  if (changed.length > 0) {
    await tx.$executeRaw(Prisma.sql`
      UPDATE user_message um SET flags = v.flags
      FROM unnest(${changed.map((c) => c.userId)}::int[], ${changed.map((c) => c.flags)}::int[]) AS v(user_id, flags)
      WHERE um.message_id = ${message.id} AND um.user_id = v.user_id`)
  }
  return {
    detachedUploads: unlinked.detached,
    relinkedUploads: [...claimed, ...unlinked.unlinked],
    newlyMentioned: changed.filter((c) => (c.flags & RECOMPUTED & ~c.old) !== 0).map((c) => ({ userId: c.userId, flags: c.flags })),
    eventFields: {
      orig_content: message.content,
      orig_rendered_content: message.renderedContent,
      content: edit.content,
      rendered_content: r.html,
      is_me_message: isMeMessage(edit.content),
    },
    historyFields: {
      prev_content: message.content,
      prev_rendered_content: message.renderedContent,
    },
  }
}
