// Messages the service itself posts as the realm's Notification Bot (move
// breadcrumbs, resolve notices, …): the ordinary send path, without the
// posting and wildcard permission checks a person would face.
import type { RequestContext } from './context.js'
import { sendMessage } from './send-message.js'

export interface NotificationInput {
  streamId: number
  topic: string
  content: string
  /** Only these recipients get the message unread; everyone does when omitted. */
  unreadUserIds?: readonly number[]
  /** The channel may be archived (upstream archived_channel_notice): the archive notice, notices of changes to an archived channel. */
  archivedChannelNotice?: boolean
}

/** Posts to a channel topic as the notification bot; returns the new message id (null when the realm has no bot). */
export async function sendNotificationBotMessage(ctx: RequestContext, input: NotificationInput): Promise<number | null> {
  const botId = ctx.realm.notificationBotId
  if (botId === null) return null
  const bot = await ctx.prisma.user.findUnique({ where: { id: botId } })
  if (!bot) return null
  const sent = await sendMessage(
    { ...ctx, user: bot, clientName: 'Internal' },
    {
      type: 'stream',
      to: JSON.stringify(input.streamId),
      topic: input.topic,
      content: input.content,
      readBySender: true,
      internal: true,
      unreadUserIds: input.unreadUserIds,
      archivedChannelNotice: input.archivedChannelNotice,
    },
  )
  return sent.id
}
