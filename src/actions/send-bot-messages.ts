// Several messages of the notification bot at once (the notices after a
// subscription request): each as sendMessage sends an internal message (no
// posting or wildcard-mention checks, read by the sender, published as one
// `message` event with per-recipient flags), with the reads and writes of all
// of them in a fixed number of set-based statements, so that a request
// subscribing 100 people or creating 500 channels does not run a send per
// message (docs/api.md "Request limits").
import type { ActionContext } from './context.js'
import { announceRecipients, publishAll, type Emission } from './context.js'
import type { Stream, User } from '../db/index.js'
import { insertMessages, type MessageRecipientRows, type NewMessage } from '../db/send-queries.js'
import { realmAlertWordMatcher } from '../queries/alert-word-matcher.js'
import { flagsToList, recipientFlags } from '../domain/flags.js'
import { normalizeMessageContent } from '../domain/limits.js'
import { mayMentionTopicWildcard, renderMarkdown } from '../domain/markdown.js'
import { streamIdNotFound } from '../errors.js'
import { presentMessage } from '../present/message.js'
import { loadRenderContext, membersByGroup } from './message-render.js'
import { messageEvent } from '../events/schemas/index.js'
import { firstMessageEmissions } from './first-message-id.js'
import { streamActivityEmissions } from './stream-activity.js'

export type BotMessage =
  | { kind: 'private'; recipient: Pick<User, 'id' | 'email' | 'fullName'>; content: string }
  | {
      kind: 'stream'
      streamId: number
      topic: string
      content: string
      /** These recipients get the message already read (sendMessage's unreadUserIds, as its complement). */
      readUserIds?: readonly number[]
    }

/** Sends `messages` from `ctx.user` (the notification bot) in the given order; returns their IDs. */
export async function sendBotMessages(ctx: ActionContext, messages: readonly BotMessage[]): Promise<number[]> {
  if (messages.length === 0) return []
  const bot = ctx.user
  const contents = messages.map((m) => normalizeMessageContent(m.content))

  // Channels, their subscribers and topic participants, and the bot's muters: four statements at most.
  const streamIds = [...new Set(messages.flatMap((m) => (m.kind === 'stream' ? [m.streamId] : [])))]
  const streams = new Map((streamIds.length === 0 ? [] : await ctx.prisma.stream.findMany({ where: { id: { in: streamIds } } })).map((s) => [s.id, s]))
  for (const id of streamIds) {
    const stream = streams.get(id)
    if (!stream || stream.realmId !== ctx.realm.id || stream.deactivated) throw streamIdNotFound(id)
  }
  const subscribers = new Map<number, number[]>()
  if (streamIds.length > 0) {
    const rows = await ctx.prisma.subscription.findMany({
      where: { streamId: { in: streamIds }, active: true, user: { isActive: true } },
      select: { streamId: true, userId: true },
    })
    for (const row of rows) subscribers.set(row.streamId, [...(subscribers.get(row.streamId) ?? []), row.userId])
  }
  const wildcardTopics = messages.flatMap((m, i) => (m.kind === 'stream' && mayMentionTopicWildcard(contents[i] as string) ? [m] : []))
  const participants = await topicParticipants(ctx, wildcardTopics)
  const muters = new Set((await ctx.prisma.mutedUser.findMany({ where: { mutedUserId: bot.id }, select: { userId: true } })).map((m) => m.userId))

  // One render context for every content, one group lookup, the realm's cached alert-word matcher.
  const context = await loadRenderContext(ctx.prisma, ctx.realm, bot, contents, ctx.config)
  const rendered = contents.map((content) => renderMarkdown(content, context))
  const groupMembers = await membersByGroup(ctx.prisma, rendered.flatMap((r) => r.mentionedGroupIds))
  const alertWords = await realmAlertWordMatcher(ctx.prisma, ctx.authCache, ctx.realm.id)

  const items = messages.map((m, i) => {
    const content = contents[i] as string
    const r = rendered[i] as (typeof rendered)[number]
    const recipientIds =
      m.kind === 'stream' ? [...new Set([...(subscribers.get(m.streamId) ?? []), bot.id])].sort((a, b) => a - b) : [...new Set([bot.id, m.recipient.id])].sort((a, b) => a - b)
    const topicParticipant = new Set(m.kind === 'stream' ? [...(participants.get(topicKey(m.streamId, m.topic)) ?? []), bot.id] : [])
    const mentioned = new Set([...r.mentionedUserIds, ...r.mentionedGroupIds.flatMap((id) => groupMembers.get(id) ?? [])])
    const alerted = alertWords.usersAlerted(content, new Set(recipientIds))
    const read = new Set(m.kind === 'stream' ? (m.readUserIds ?? []) : [])
    const flags = recipientIds.map((userId) =>
      recipientFlags({
        isSender: userId === bot.id,
        mentioned: mentioned.has(userId),
        streamWildcard: r.streamWildcard,
        topicWildcard: r.topicWildcard,
        topicParticipant: topicParticipant.has(userId),
        alertWord: alerted.has(userId),
        isPrivate: m.kind === 'private',
        readBySender: true,
        markRead: read.has(userId) || muters.has(userId),
      }),
    )
    const message: NewMessage = {
      realmId: ctx.realm.id,
      senderId: bot.id,
      streamId: m.kind === 'stream' ? m.streamId : null,
      topic: m.kind === 'stream' ? m.topic : '',
      dmUserIds: m.kind === 'private' ? recipientIds : [],
      content,
      renderedContent: r.html,
      dateSent: ctx.now(),
      client: ctx.clientName,
      hasLink: r.hasLink,
      hasImage: r.hasImage,
      hasAttachment: r.hasAttachment,
    }
    const recipients: MessageRecipientRows = { userIds: recipientIds, flags, uploadPaths: r.linkedUploadPaths }
    return { message, recipients }
  })

  const { messages: stored, xid, firstInStreams, revivedStreams } = await insertMessages(ctx.prisma, items)
  await announceRecipients(ctx, items.flatMap((item) => item.recipients.userIds))
  const emissions: Emission[] = stored.map((message, i) => {
    const m = messages[i] as BotMessage
    const { recipients } = items[i] as (typeof items)[number]
    const stream = m.kind === 'stream' ? (streams.get(m.streamId) as Stream) : null
    const presented = presentMessage(message, {
      applyMarkdown: true,
      clientExtavatar: false,
      realm: ctx.realm,
      sender: bot,
      stream,
      recipients: m.kind === 'private' ? [bot, m.recipient].sort((a, b) => a.id - b.id).filter((u, j, all) => all.findIndex((v) => v.id === u.id) === j) : undefined,
    })
    // Recipients with the same flags share one (read-only) entry, as in sendMessage.
    const entries = new Map<number, { flags: string[] }>()
    const perUser: Record<number, Record<string, unknown>> = {}
    recipients.userIds.forEach((userId, j) => {
      const mask = recipients.flags[j] ?? 0
      let entry = entries.get(mask)
      if (entry === undefined) entries.set(mask, (entry = { flags: flagsToList(mask) }))
      perUser[userId] = entry
    })
    return {
      event: messageEvent({ ...presented, raw_content: message.content }),
      userIds: [...recipients.userIds],
      perUser,
      ...(stream && !stream.inviteOnly ? { publicStreamId: stream.id } : {}),
    }
  })
  // Channels that got their first message: clients that list them learn its first_message_id (actions/first-message-id.ts).
  const firstIds = new Map<number, number>()
  for (const message of stored) {
    if (message.streamId !== null && firstInStreams.includes(message.streamId) && !firstIds.has(message.streamId)) firstIds.set(message.streamId, message.id)
  }
  const first = firstIds.size === 0 ? [] : await firstMessageEmissions(ctx.prisma, ctx.realm.id, [...streams.values()], firstIds)
  // Channels not recently active are again (level 323; actions/stream-activity.ts).
  const revived = await streamActivityEmissions(
    ctx.prisma,
    ctx.realm.id,
    revivedStreams.flatMap((id) => {
      const stream = streams.get(id)
      return stream ? [{ ...stream, isRecentlyActive: true }] : []
    }),
  )
  await publishAll(ctx, [...emissions, ...first, ...revived], xid)
  const streamCount = messages.filter((m) => m.kind === 'stream').length
  if (streamCount > 0) ctx.metrics.messageSent('stream', streamCount)
  if (messages.length > streamCount) ctx.metrics.messageSent('direct', messages.length - streamCount)
  return stored.map((m) => m.id)
}

const topicKey = (streamId: number, topic: string): string => `${streamId}\u0000${topic.toLowerCase()}`

/** Distinct senders of each channel topic so far (only topic wildcard mentions need them), in one statement. */
async function topicParticipants(ctx: ActionContext, topics: readonly { streamId: number; topic: string }[]): Promise<Map<string, number[]>> {
  const out = new Map<string, number[]>()
  if (topics.length === 0) return out
  const rows = await ctx.prisma.$queryRaw<{ stream_id: number; topic: string; sender_id: number }[]>`
    SELECT DISTINCT t.stream_id, t.topic, m.sender_id
    FROM unnest(${topics.map((t) => t.streamId)}::int[], ${topics.map((t) => t.topic)}::text[]) AS t(stream_id, topic)
    JOIN message m ON m.stream_id = t.stream_id AND lower(m.topic) = lower(t.topic)`
  for (const row of rows) {
    const key = topicKey(row.stream_id, row.topic)
    out.set(key, [...(out.get(key) ?? []), row.sender_id])
  }
  return out
}
