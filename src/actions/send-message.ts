// POST /messages: check the addressee and the sender's permissions, render,
// store the message and every recipient's flags in one transaction, then
// publish one `message` event with per-recipient flags.
//
// The event (see events/queues/filter.ts for the conventions):
//   { type: 'message', message: <presentMessage(apply_markdown, no client_extavatar)> + raw_content }
// with BusItem.perUser[userId] = { flags: [...] } for every recipient, and for
// the sender, when queue_id and local_id were given, also
// { local_message_id, sender_queue_id } (only the queue `sender_queue_id`
// should keep local_message_id; sender_queue_id itself is internal).
import { claimAttachments } from './message-attachments.js'
import type { ActionContext } from './context.js'
import { inTransaction } from './context.js'
import type { Stream, User } from '../db/index.js'
import { Prisma } from '../db/index.js'
import { flagsToList, recipientFlags } from '../domain/flags.js'
import { normalizeMessageContent } from '../domain/limits.js'
import { topicWildcardMentionAllowed, wildcardMentionAllowed } from '../domain/mentions.js'
import { isFullMember } from '../domain/roles.js'
import { badRequest, streamWildcardMentionNotAllowed, topicWildcardMentionNotAllowed } from '../errors.js'
import { presentMessage } from '../present/message.js'
import { alertedUserIds, groupMemberIds, renderMessageContent } from './message-render.js'
import {
  checkMaySendToStream,
  findDirectRecipients,
  findStreamForSend,
  parseAddressee,
  type MessageType,
} from './message-recipients.js'

export interface SendMessageInput {
  type: MessageType
  to?: string
  topic?: string
  content: string
  readBySender?: boolean
  queueId?: string
  localId?: string
  /** Sent by the service itself (the notification bot): no posting or wildcard-mention permission checks. */
  internal?: boolean
  /** Only these recipients get the message unread (upstream limit_unread_user_ids). */
  unreadUserIds?: readonly number[]
}

/** Clients whose own messages start read (upstream Client.default_read_by_sender). */
const READ_BY_SENDER_CLIENTS = new Set([
  'zulipandroid',
  'zulipios',
  'zulipdesktop',
  'zulipmobile',
  'zulipelectron',
  'zulipterminal',
  'snipe',
  'website',
  'ios',
  'android',
])

export function defaultReadBySender(clientName: string): boolean {
  const name = clientName.toLowerCase()
  return READ_BY_SENDER_CLIENTS.has(name) || name.includes('desktop app')
}

/** What clients send as the topic when the user left it empty. */
const NO_TOPIC = '(no topic)'

type Target =
  | { kind: 'stream'; stream: Stream; topic: string; recipientIds: number[]; subscriberCount: number }
  | { kind: 'private'; participants: Pick<User, 'id' | 'email' | 'fullName'>[]; recipientIds: number[] }

async function resolveTarget(ctx: ActionContext, input: SendMessageInput, content: () => string): Promise<Target> {
  const addressee = parseAddressee(input)
  content()
  if (addressee.kind === 'stream') {
    if (ctx.realm.mandatoryTopics && addressee.topic === NO_TOPIC) throw badRequest('Topics are required in this organization')
    const stream = await findStreamForSend(ctx, addressee.channel)
    if (!input.internal) await checkMaySendToStream(ctx, stream)
    const subs = await ctx.prisma.subscription.findMany({
      where: { streamId: stream.id, active: true, user: { isActive: true } },
      select: { userId: true },
    })
    const recipientIds = [...new Set([...subs.map((s) => s.userId), ctx.user.id])].sort((a, b) => a - b)
    return { kind: 'stream', stream, topic: addressee.topic, recipientIds, subscriberCount: subs.length }
  }
  const users = await findDirectRecipients(ctx, addressee.to)
  const byId = new Map<number, Pick<User, 'id' | 'email' | 'fullName'>>([[ctx.user.id, ctx.user]])
  for (const u of users) byId.set(u.id, u)
  const participants = [...byId.values()].sort((a, b) => a.id - b.id)
  return { kind: 'private', participants, recipientIds: participants.map((u) => u.id) }
}

/** Distinct senders of the topic so far (upstream's topic participants, without reactions). */
async function topicParticipants(ctx: ActionContext, streamId: number, topic: string): Promise<Set<number>> {
  const rows = await ctx.prisma.$queryRaw<{ sender_id: number }[]>`
    SELECT DISTINCT sender_id FROM message WHERE stream_id = ${streamId} AND lower(topic) = lower(${topic})`
  return new Set(rows.map((r) => r.sender_id))
}

export async function sendMessage(ctx: ActionContext, input: SendMessageInput): Promise<{ id: number }> {
  let content = ''
  const target = await resolveTarget(ctx, input, () => (content = normalizeMessageContent(input.content)))
  const sender = ctx.user
  const rendered = await renderMessageContent(ctx.prisma, ctx.realm, sender, content, ctx.config)

  let participants = new Set<number>()
  if (target.kind === 'stream') {
    participants = await topicParticipants(ctx, target.stream.id, target.topic)
    const policy = {
      policy: ctx.realm.wildcardMentionPolicy,
      role: sender.role,
      isFullMember: isFullMember(sender, ctx.realm, ctx.now()),
    }
    if (rendered.streamWildcard && !input.internal) {
      if (!wildcardMentionAllowed({ ...policy, subscriberCount: target.subscriberCount })) throw streamWildcardMentionNotAllowed()
    }
    if (rendered.topicWildcard && !input.internal && !topicWildcardMentionAllowed({ ...policy, participantCount: participants.size })) {
      throw topicWildcardMentionNotAllowed()
    }
    participants.add(sender.id)
  }

  const mentioned = new Set([...rendered.mentionedUserIds, ...(await groupMemberIds(ctx.prisma, rendered.mentionedGroupIds))])
  const alerted = await alertedUserIds(ctx.prisma, target.recipientIds, content)
  const readBySender = input.readBySender ?? defaultReadBySender(ctx.clientName)
  const flags = target.recipientIds.map((userId) =>
    recipientFlags({
      isSender: userId === sender.id,
      mentioned: mentioned.has(userId),
      streamWildcard: rendered.streamWildcard,
      topicWildcard: rendered.topicWildcard,
      topicParticipant: participants.has(userId),
      alertWord: alerted.has(userId),
      isPrivate: target.kind === 'private',
      readBySender,
      markRead: input.unreadUserIds !== undefined && !input.unreadUserIds.includes(userId),
    }),
  )

  const now = ctx.now()
  return inTransaction(ctx, async (tx, emit) => {
    const message = await tx.message.create({
      data: {
        realmId: ctx.realm.id,
        senderId: sender.id,
        streamId: target.kind === 'stream' ? target.stream.id : null,
        topic: target.kind === 'stream' ? target.topic : '',
        dmUserIds: target.kind === 'private' ? target.recipientIds : [],
        content,
        renderedContent: rendered.html,
        dateSent: now,
        client: ctx.clientName,
        hasLink: rendered.hasLink,
        hasImage: rendered.hasImage,
        hasAttachment: rendered.hasAttachment,
      },
    })
    const messageIds = target.recipientIds.map(() => message.id)
    await tx.$executeRaw(Prisma.sql`
      INSERT INTO user_message (user_id, message_id, flags)
      SELECT * FROM unnest(${target.recipientIds}::int[], ${messageIds}::int[], ${flags}::int[])`)
    await claimAttachments(tx, { realmId: ctx.realm.id, senderId: sender.id, messageId: message.id, paths: rendered.linkedUploadPaths })
    if (target.kind === 'stream') {
      await tx.stream.updateMany({ where: { id: target.stream.id, firstMessageId: null }, data: { firstMessageId: message.id } })
    }

    const presented = presentMessage(message, {
      applyMarkdown: true,
      clientExtavatar: false,
      realm: ctx.realm,
      sender,
      stream: target.kind === 'stream' ? target.stream : null,
      recipients: target.kind === 'private' ? target.participants : undefined,
    })
    const perUser: Record<number, Record<string, unknown>> = {}
    target.recipientIds.forEach((userId, i) => {
      perUser[userId] = { flags: flagsToList(flags[i] ?? 0) }
    })
    if (input.queueId !== undefined && input.localId !== undefined) {
      perUser[sender.id] = { ...perUser[sender.id], local_message_id: input.localId, sender_queue_id: input.queueId }
    }
    const isPublic = target.kind === 'stream' && !target.stream.inviteOnly
    emit({ type: 'message', message: { ...presented, raw_content: content } }, target.recipientIds, {
      perUser,
      ...(isPublic ? { publicStreamId: target.stream.id } : {}),
    })
    return { id: message.id }
  })
}
