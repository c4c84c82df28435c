// POST /typing: a `typing` event to the other participants of a direct
// conversation, or to the subscribers of a channel topic (upstream
// zerver/actions/typing.py). Nothing is stored.
import { publishAll, type ActionContext } from './context.js'
import { findDirectRecipients } from './message-recipients.js'
import { accessStreamById } from '../access/stream.js'
import { usersWhoMayAccess } from '../access/user.js'
import { badRequest } from '../errors.js'
import { normalizeTopic } from '../domain/topics.js'
import { directTypingEvent, streamTypingEvent } from '../events/schemas/index.js'

/** Upstream sends channel typing only for channels up to this many subscribers. */
export const MAX_STREAM_SIZE_FOR_TYPING_NOTIFICATIONS = 100

export type TypingInput =
  | { kind: 'direct'; op: 'start' | 'stop'; to: number[] }
  | { kind: 'stream'; op: 'start' | 'stop'; streamId: number; topic: string }

/** Of `userIds`, those who want typing events and may access the typist (restricted guests may not access everyone). */
export async function receivingTyping(ctx: ActionContext, userIds: number[]): Promise<number[]> {
  const rows = await ctx.prisma.userSettings.findMany({
    where: { userId: { in: userIds }, receivesTypingNotifications: true, user: { isActive: true } },
    select: { userId: true },
  })
  return usersWhoMayAccess(ctx.prisma, ctx.realm, rows.map((r) => r.userId), ctx.user.id)
}

export async function sendTypingNotification(ctx: ActionContext, input: TypingInput): Promise<void> {
  const settings = await ctx.prisma.userSettings.findUnique({ where: { userId: ctx.user.id } })
  const sender = { user_id: ctx.user.id, email: ctx.user.email }
  if (input.kind === 'direct') {
    if (settings && !settings.sendPrivateTypingNotifications) throw badRequest('User has disabled typing notifications for direct messages')
    if (input.to.length === 0) throw badRequest("Empty 'to' list")
    const users = await findDirectRecipients(ctx, input.to)
    const participants = [...new Map([ctx.user, ...users].map((u) => [u.id, u])).values()].sort((a, b) => a.id - b.id)
    const event = directTypingEvent(input.op, sender, participants.map((u) => ({ user_id: u.id, email: u.email })))
    const targets = await receivingTyping(ctx, participants.map((u) => u.id))
    await publishAll(ctx, [{ event, userIds: targets }])
    return
  }
  if (settings && !settings.sendStreamTypingNotifications) throw badRequest('User has disabled typing notifications for channel messages')
  const { stream } = await accessStreamById(ctx, input.streamId)
  const topic = normalizeTopic(input.topic, { noTopicIsEmpty: true })
  const subscribers = await ctx.prisma.subscription.findMany({ where: { streamId: stream.id, active: true }, select: { userId: true } })
  if (subscribers.length > MAX_STREAM_SIZE_FOR_TYPING_NOTIFICATIONS) return
  const event = streamTypingEvent(input.op, sender, stream.id, topic)
  const targets = await receivingTyping(ctx, subscribers.map((s) => s.userId))
  await publishAll(ctx, [{ event, userIds: targets }])
}
