// What the Notification Bot posts after a subscription request (upstream
// send_messages_for_new_subscribers): a "subscribed you" direct message to each
// person someone else subscribed to existing channels, a creation notice in
// each new channel, and with `announce` a notice in the new-channel
// announcements channel.
import type { Stream, User } from '../db/index.js'
import type { ActionContext } from './context.js'
import { sendBotMessages, type BotMessage } from './send-bot-messages.js'

export const CHANNEL_EVENTS_TOPIC = 'channel events'
export const MAX_BULK_NEW_SUBSCRIPTION_MESSAGES = 100
export const NEW_CHANNELS_TOPIC = 'new channels'

export const silentMention = (user: Pick<User, 'id' | 'fullName'>): string => `@_**${user.fullName}|${user.id}**`
const channelLink = (name: string): string => `#**${name}**`

export function youWereSubscribedMessage(actor: Pick<User, 'id' | 'fullName'>, channelNames: string[]): string {
  const names = [...channelNames].sort()
  if (names.length === 1) return `${silentMention(actor)} subscribed you to ${channelLink(names[0] as string)}.`
  return `${silentMention(actor)} subscribed you to the following channels:\n\n${names.map((n) => `* ${channelLink(n)}\n`).join('')}`
}

/** The creation notice; channels public with protected history get none, as upstream. */
export function channelCreatedMessage(actor: Pick<User, 'id' | 'fullName'>, stream: Pick<Stream, 'inviteOnly' | 'isWebPublic' | 'historyPublicToSubscribers' | 'description'>): string | null {
  let policy: string
  if (stream.isWebPublic) policy = 'Web-public'
  else if (!stream.inviteOnly) {
    if (!stream.historyPublicToSubscribers) return null
    policy = 'Public'
  } else policy = stream.historyPublicToSubscribers ? 'Private, shared history' : 'Private, protected history'
  const description = stream.description === '' ? '*No description.*' : stream.description
  return `**${policy}** channel created by ${silentMention(actor)}. **Description:**\n\`\`\`\` quote\n${description}\n\`\`\`\``
}

export interface SubscriptionNotificationInput {
  created: Stream[]
  /** Channel names newly subscribed, per subscriber. */
  added: { user: User; streamNames: string[] }[]
  announce: boolean
}

async function asNotificationBot(ctx: ActionContext): Promise<ActionContext | null> {
  if (ctx.realm.notificationBotId === null) return null
  const bot = await ctx.prisma.user.findUnique({ where: { id: ctx.realm.notificationBotId } })
  return bot ? { ...ctx, user: bot, clientName: 'Internal' } : null
}

export async function sendSubscriptionNotifications(ctx: ActionContext, input: SubscriptionNotificationInput): Promise<void> {
  const bot = await asNotificationBot(ctx)
  if (!bot) return
  const actor = ctx.user
  const createdNames = new Set(input.created.map((s) => s.name))
  const messages: BotMessage[] = []
  // Upstream's MAX_BULK_NEW_SUBSCRIPTION_MESSAGES: a bulk subscription of many people sends them no messages.
  const notified = input.added.length <= MAX_BULK_NEW_SUBSCRIPTION_MESSAGES ? input.added : []
  for (const { user, streamNames } of notified) {
    if (user.id === actor.id || user.isBot) continue
    const names = streamNames.filter((n) => !createdNames.has(n))
    if (names.length === 0) continue
    messages.push({ kind: 'private', recipient: user, content: youWereSubscribedMessage(actor, names) })
  }
  if (input.announce && input.created.length > 0 && ctx.realm.newStreamAnnouncementsStreamId !== null) {
    const links = input.created.map((s) => channelLink(s.name)).join(', ')
    const content = input.created.length > 1 ? `${silentMention(actor)} created the following channels: ${links}.` : `${silentMention(actor)} created a new channel ${links}.`
    messages.push({ kind: 'stream', streamId: ctx.realm.newStreamAnnouncementsStreamId, topic: NEW_CHANNELS_TOPIC, content })
  }
  for (const stream of input.created) {
    const content = channelCreatedMessage(actor, stream)
    // The creator has seen it happen; everyone else gets it unread.
    if (content !== null) messages.push({ kind: 'stream', streamId: stream.id, topic: CHANNEL_EVENTS_TOPIC, content, readUserIds: [actor.id] })
  }
  // All of them in a few statements, in this order (docs/api.md "Request limits").
  await sendBotMessages(bot, messages)
}
