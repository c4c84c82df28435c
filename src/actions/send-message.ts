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
// Restricted guests who may not access the sender get a second event, the
// same message with the sender shown as the "Unknown user" stand-in.
import type { ActionContext } from './context.js'
import { announceRecipients, publishAll, type Emission } from './context.js'
import { usersWhoMayAccess } from '../access/user.js'
import { fakeEmailDomain } from '../present/realm.js'
import type { Stream, User } from '../db/index.js'
import { findDirectAudience, findStreamAudience, insertMessage, type AudienceExtras } from '../db/send-queries.js'
import { realmAlertWordMatcher } from '../queries/alert-word-matcher.js'
import { flagsToList, recipientFlags } from '../domain/flags.js'
import { normalizeMessageContent } from '../domain/limits.js'
import { topicWildcardMentionAllowed, wildcardMentionAllowed } from '../domain/mentions.js'
import { holdsRealmPermission } from '../queries/realm-permissions.js'
import {
  notAuthorizedToSendToChannel,
  streamIdNotFound,
  streamNameNotFound,
  streamWildcardMentionNotAllowed,
  topicsRequired,
  topicWildcardMentionNotAllowed,
} from '../errors.js'
import { mayMentionTopicWildcard } from '../domain/markdown.js'
import { presentMessage, withInaccessibleSender } from '../present/message.js'
import { groupMemberIds, renderMessageContent } from './message-render.js'
import { checkGroupMentionsAllowed } from './user-groups-access.js'
import { checkMaySendDirectMessage } from './direct-message-permission.js'
import { checkMaySendToStreamWith, matchDirectRecipients, parseAddressee, sendingChannel, type MessageType } from './message-recipients.js'
import { messageEvent } from '../events/schemas/index.js'
import { enqueueMissedMessageEmails } from '../notifications/enqueue.js'
import { firstMessageEmissions } from './first-message-id.js'
import { streamActivityEmissions } from './stream-activity.js'
import { attachmentUpdateEvents } from './message-attachments.js'

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
  /** With `internal`: the channel may be archived (upstream archived_channel_notice). */
  archivedChannelNotice?: boolean
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

// Reads and writes are raw statements (db/send-queries.ts): one to resolve
// the addressee with everything the flags need (channel, subscribers, topic
// participants, alert words, a bot's owner) and the realm's linkifiers, one
// to render when the content names users, groups, channels or emoji, and one
// to write the message, its recipients' rows and its attachments.

type Target = AudienceExtras &
  (
    | {
        kind: 'stream'
        stream: Stream
        topic: string
        recipientIds: number[]
        subscriberCount: number
        /** Distinct senders of the topic so far (upstream's topic participants, without reactions); empty when no topic wildcard can be mentioned. */
        participants: Set<number>
        /** Whether the sender is subscribed: if not, some restricted guests among the recipients may not access the sender. */
        senderSubscribed: boolean
      }
    | { kind: 'private'; participants: Pick<User, 'id' | 'email' | 'fullName'>[]; recipientIds: number[] }
  )

/** The fields of AudienceExtras, from either audience. */
const extrasOf = ({ alertWordsVersion, muterIds, linkifiers }: AudienceExtras): AudienceExtras => ({ alertWordsVersion, muterIds, linkifiers })

async function resolveTarget(ctx: ActionContext, input: SendMessageInput, content: () => string): Promise<Target> {
  const addressee = parseAddressee(input)
  const text = content()
  const sender = ctx.user
  if (addressee.kind === 'stream') {
    const channel = sendingChannel(ctx, addressee.channel)
    const audience = await findStreamAudience(ctx.prisma, {
      realmId: ctx.realm.id,
      streamId: typeof channel === 'number' ? channel : null,
      name: typeof channel === 'string' ? channel.trim() : '',
      topic: addressee.topic,
      senderId: sender.id,
      ownerId: !input.internal && sender.isBot ? sender.botOwnerId : null,
      participants: mayMentionTopicWildcard(text),
    })
    if (typeof channel === 'number') {
      if (!audience || audience.stream.realmId !== ctx.realm.id) throw streamIdNotFound(channel)
    } else if (!audience) throw streamNameNotFound(channel.trim())
    // An archived channel takes no messages but the notification bot's notices (upstream access_stream_for_send_message).
    if (audience.stream.deactivated && !(input.internal && input.archivedChannelNotice)) throw notAuthorizedToSendToChannel(audience.stream.name)
    const { stream, subscriberIds } = audience
    if (!input.internal) await checkMaySendToStreamWith(ctx, stream, audience.owner, new Set(subscriberIds))
    if (ctx.realm.mandatoryTopics && addressee.topic === '') throw topicsRequired()
    const recipientIds = [...new Set([...subscriberIds, sender.id])].sort((a, b) => a - b)
    return {
      kind: 'stream',
      stream,
      topic: addressee.topic,
      recipientIds,
      subscriberCount: subscriberIds.length,
      participants: new Set(audience.participantIds),
      senderSubscribed: subscriberIds.includes(sender.id),
      ...extrasOf(audience),
    }
  }
  const byId = typeof addressee.to[0] === 'number'
  const audience = await findDirectAudience(ctx.prisma, {
    realmId: ctx.realm.id,
    senderId: sender.id,
    ids: byId ? (addressee.to as number[]) : [],
    emails: byId ? [] : (addressee.to as string[]),
  })
  const users = matchDirectRecipients(addressee.to, audience.users, sender)
  const participantsById = new Map<number, Pick<User, 'id' | 'email' | 'fullName'>>([[sender.id, sender]])
  for (const u of users) participantsById.set(u.id, u)
  const participants = [...participantsById.values()].sort((a, b) => a.id - b.id)
  const recipientIds = participants.map((u) => u.id)
  await checkMaySendDirectMessage(ctx, users, recipientIds, audience.everyoneGroupId)
  return { kind: 'private', participants, recipientIds, ...extrasOf(audience) }
}

export async function sendMessage(ctx: ActionContext, input: SendMessageInput): Promise<{ id: number }> {
  let content = ''
  const target = await resolveTarget(ctx, input, () => (content = normalizeMessageContent(input.content)))
  const sender = ctx.user
  const rendered = await renderMessageContent(ctx.prisma, ctx.realm, sender, content, ctx.config, target.linkifiers)

  let participants = new Set<number>()
  if (target.kind === 'stream') {
    participants = target.participants
    const wildcard = (rendered.streamWildcard || rendered.topicWildcard) && !input.internal
    const policy = { mayMentionMany: wildcard ? await holdsRealmPermission(ctx.prisma, ctx.realm, sender, 'can_mention_many_users_group', ctx.now()) : false }
    if (rendered.streamWildcard && !input.internal) {
      if (!wildcardMentionAllowed({ ...policy, subscriberCount: target.subscriberCount })) throw streamWildcardMentionNotAllowed()
    }
    if (rendered.topicWildcard && !input.internal && !topicWildcardMentionAllowed({ ...policy, participantCount: participants.size })) {
      throw topicWildcardMentionNotAllowed()
    }
    participants.add(sender.id)
  }
  await checkGroupMentionsAllowed(ctx.prisma, ctx.realm, sender, rendered.mentionedGroupIds, ctx.now())

  const mentioned = new Set([...rendered.mentionedUserIds, ...(await groupMemberIds(ctx.prisma, rendered.mentionedGroupIds))])
  // One pass over the content, however many alert words the recipients have.
  const alertWords = await realmAlertWordMatcher(ctx.prisma, ctx.authCache, ctx.realm.id, target.alertWordsVersion)
  const alerted = alertWords.usersAlerted(content, new Set(target.recipientIds))
  const readBySender = input.readBySender ?? defaultReadBySender(ctx.clientName)
  const unread = input.unreadUserIds === undefined ? undefined : new Set(input.unreadUserIds)
  // Messages from a muted sender reach the muter already read (upstream
  // muted_sender_user_ids). When notifications exist, they must skip muters too.
  const muters = new Set(target.muterIds)
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
      markRead: (unread !== undefined && !unread.has(userId)) || muters.has(userId),
    }),
  )

  // One statement, hence one transaction: the events go out after it returns.
  const { message, xid, firstInStream, revivedStream } = await insertMessage(
    ctx.prisma,
    {
      realmId: ctx.realm.id,
      senderId: sender.id,
      streamId: target.kind === 'stream' ? target.stream.id : null,
      topic: target.kind === 'stream' ? target.topic : '',
      dmUserIds: target.kind === 'private' ? target.recipientIds : [],
      content,
      renderedContent: rendered.html,
      dateSent: ctx.now(),
      client: ctx.clientName,
      hasLink: rendered.hasLink,
      hasImage: rendered.hasImage,
      hasAttachment: rendered.hasAttachment,
    },
    { userIds: target.recipientIds, flags, uploadPaths: rendered.linkedUploadPaths },
  )
  await announceRecipients(ctx, target.recipientIds)

  const presented = presentMessage(message, {
    applyMarkdown: true,
    clientExtavatar: false,
    realm: ctx.realm,
    sender,
    stream: target.kind === 'stream' ? target.stream : null,
    recipients: target.kind === 'private' ? target.participants : undefined,
  })
  // Recipients with the same flags share one (read-only) entry: most have the same.
  const entries = new Map<number, { flags: string[] }>()
  const flagsOf = new Map<number, Record<string, unknown>>()
  target.recipientIds.forEach((userId, i) => {
    const mask = flags[i] ?? 0
    let entry = entries.get(mask)
    if (entry === undefined) entries.set(mask, (entry = { flags: flagsToList(mask) }))
    flagsOf.set(userId, entry)
  })
  if (input.queueId !== undefined && input.localId !== undefined) {
    flagsOf.set(sender.id, { ...flagsOf.get(sender.id), local_message_id: input.localId, sender_queue_id: input.queueId })
  }
  const perUserOf = (userIds: readonly number[]) => Object.fromEntries(userIds.map((id) => [id, flagsOf.get(id) ?? {}]))
  // A sender who is not subscribed may be a user some restricted guests among
  // the subscribers may not access (they share no channel or conversation):
  // those get the message with the sender shown as the "Unknown user"
  // stand-in, as upstream's user_ids_without_access_to_sender. One statement,
  // and none when the sender is subscribed or a bot (every user may access
  // bots) or guests are not restricted.
  const seeing =
    target.kind === 'stream' && !target.senderSubscribed && !sender.isBot
      ? new Set(await usersWhoMayAccess(ctx.prisma, ctx.realm, target.recipientIds, sender.id))
      : undefined
  const blind = seeing === undefined ? [] : target.recipientIds.filter((id) => !seeing.has(id))
  const shownTo = blind.length === 0 ? target.recipientIds : target.recipientIds.filter((id) => seeing?.has(id))
  const isPublic = target.kind === 'stream' && !target.stream.inviteOnly
  const emission: Emission = {
    event: messageEvent({ ...presented, raw_content: content }),
    userIds: shownTo,
    perUser: perUserOf(shownTo),
    ...(isPublic ? { publicStreamId: target.stream.id } : {}),
  }
  const hidden: Emission[] =
    blind.length === 0
      ? []
      : [
          {
            event: messageEvent({ ...withInaccessibleSender(presented, fakeEmailDomain(ctx.realm, ctx.config.externalUrl)), raw_content: content }),
            userIds: blind,
            perUser: perUserOf(blind),
          },
        ]
  // The channel's first message: clients that list the channel learn its first_message_id (actions/first-message-id.ts).
  const first = target.kind === 'stream' && firstInStream ? await firstMessageEmissions(ctx.prisma, ctx.realm.id, [target.stream], new Map([[target.stream.id, message.id]])) : []
  // A channel not recently active is again (level 323; actions/stream-activity.ts).
  const revived = target.kind === 'stream' && revivedStream ? await streamActivityEmissions(ctx.prisma, ctx.realm.id, [{ ...target.stream, isRecentlyActive: true }]) : []
  // The sender's uploads the message links: their owner's lists gain it (upstream's notify_attachment_update).
  const linkedUploads = rendered.linkedUploadPaths.length === 0 ? [] : await linkedUploadEmissions(ctx, sender.id, message.id)
  await publishAll(ctx, [emission, ...hidden, ...first, ...revived, ...linkedUploads], xid)
  ctx.metrics.messageSent(target.kind === 'stream' ? 'stream' : 'direct')
  // After the commit, like upstream's notification queueing after the send; a failure here is logged, the message stays sent.
  await enqueueMissedMessageEmails(ctx, {
    realmId: ctx.realm.id,
    presenceDisabled: ctx.realm.presenceDisabled,
    senderId: sender.id,
    messageId: message.id,
    streamId: target.kind === 'stream' ? target.stream.id : null,
    topic: target.kind === 'stream' ? target.topic : '',
    dmUserIds: target.kind === 'private' ? target.recipientIds : [],
    recipients: target.recipientIds.map((userId, i) => ({ userId, flags: flags[i] ?? 0 })),
  }).catch((error: unknown) => ctx.log.error({ err: error, message_id: message.id }, 'queueing missed-message emails failed'))
  return { id: message.id }
}

async function linkedUploadEmissions(ctx: ActionContext, senderId: number, messageId: number): Promise<Emission[]> {
  const links = await ctx.prisma.attachmentMessage.findMany({ where: { messageId }, select: { attachmentId: true } })
  const events = await attachmentUpdateEvents(ctx.prisma, ctx.realm.id, senderId, links.map((link) => link.attachmentId))
  return events.map((event) => ({ event, userIds: [senderId] }))
}
