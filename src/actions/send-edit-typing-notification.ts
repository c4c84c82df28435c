// POST /messages/{message_id}/typing (and its level-351 spelling POST
// /message_edit_typing): a `typing_edit_message` event saying that the
// sender is editing a message's content, to those the saved edit would reach
// (upstream zerver/views/typing.py, zerver/actions/typing.py, level 351/361).
// Only someone who may edit the content now, with no grace past the time
// limit, may send it. Nothing is stored.
import { publishAll, type ActionContext } from './context.js'
import { accessMessageById } from '../access/message.js'
import { badRequest } from '../errors.js'
import { checkContentEdit } from '../domain/message-edit.js'
import { typingEditMessageEvent } from '../events/schemas/index.js'
import { MAX_STREAM_SIZE_FOR_TYPING_NOTIFICATIONS, receivingTyping } from './send-typing-notification.js'

export async function sendEditTypingNotification(ctx: ActionContext, input: { messageId: number; op: 'start' | 'stop' }): Promise<void> {
  const { message, stream } = await accessMessageById(ctx, input.messageId, { modifying: true })
  checkContentEdit({ realm: ctx.realm, actor: ctx.user, senderId: message.senderId, sentAt: message.dateSent, now: ctx.now(), buffer: 0 })
  const settings = await ctx.prisma.userSettings.findUnique({ where: { userId: ctx.user.id } })
  if (stream) {
    if (settings && !settings.sendStreamTypingNotifications) throw badRequest('User has disabled typing notifications for channel messages')
    const subscribers = await ctx.prisma.subscription.findMany({ where: { streamId: stream.id, active: true }, select: { userId: true } })
    if (subscribers.length > MAX_STREAM_SIZE_FOR_TYPING_NOTIFICATIONS) return
    const targets = await receivingTyping(ctx, subscribers.map((s) => s.userId))
    const event = typingEditMessageEvent(input.op, ctx.user.id, message.id, { type: 'channel', channel_id: stream.id, topic: message.topic })
    await publishAll(ctx, [{ event, userIds: targets }])
    return
  }
  if (settings && !settings.sendPrivateTypingNotifications) throw badRequest('User has disabled typing notifications for direct messages')
  // The participants who receive typing notifications; upstream names exactly them in the event.
  const targets = (await receivingTyping(ctx, [...message.dmUserIds])).sort((a, b) => a - b)
  const event = typingEditMessageEvent(input.op, ctx.user.id, message.id, { type: 'direct', user_ids: targets })
  await publishAll(ctx, [{ event, userIds: targets }])
}
