// What the Notification Bot posts after a topic edit or channel move, in
// upstream's words (upstream-behaviour §5 and §6): the resolve/unresolve
// notice (or, within the undo grace period, the deletion of the previous
// one), then the breadcrumbs in the new thread and, when asked, the old one.
import type { ActionContext } from './context.js'
import type { Stream } from '../db/index.js'
import {
  isResolveNotice,
  nearMessageUrl,
  newThreadNotice,
  oldThreadNotice,
  resolveNotice,
  RESOLVE_TOPIC_UNDO_GRACE_PERIOD_SECONDS,
  topicLink,
} from '../domain/message-edit.js'
import type { TopicResolution } from '../domain/topics.js'
import { realmUrl } from '../present/realm.js'
import { deleteMessages } from './delete-message.js'
import { accessibleTopicMessages, hasFullHistory } from './move-messages.js'
import { sendNotificationBotMessage } from './notification-bot.js'

export interface MoveNoticeInput {
  oldStream: Stream
  oldTopic: string
  newStream: Stream
  newTopic: string
  /** Moved messages, ascending; the edited message among them. */
  movedIds: number[]
  targetId: number
  resolution: TopicResolution
  sendToOldThread: boolean
  sendToNewThread: boolean
}

/** Posts (or, within the grace period, takes back) the resolve notice; true when one was taken back. */
async function resolveNoticeFor(ctx: ActionContext, o: MoveNoticeInput, resolved: boolean): Promise<void> {
  const [newest] = await ctx.prisma.$queryRaw<{ id: number }[]>`
    SELECT id FROM message WHERE stream_id = ${o.newStream.id} AND lower(topic) = lower(${o.newTopic}) ORDER BY id DESC LIMIT 1`
  const last = newest ? await ctx.prisma.message.findUnique({ where: { id: newest.id } }) : null
  const ageSeconds = last ? (ctx.now().getTime() - last.dateSent.getTime()) / 1000 : Infinity
  if (last && last.senderId === ctx.realm.notificationBotId && ageSeconds <= RESOLVE_TOPIC_UNDO_GRACE_PERIOD_SECONDS && isResolveNotice(last.content)) {
    await deleteMessages(ctx, [last], null)
    return
  }
  const [senders, reactors] = await Promise.all([
    ctx.prisma.message.findMany({ where: { id: { in: o.movedIds } }, select: { senderId: true }, distinct: ['senderId'] }),
    ctx.prisma.reaction.findMany({ where: { messageId: { in: o.movedIds } }, select: { userId: true }, distinct: ['userId'] }),
  ])
  await sendNotificationBotMessage(ctx, {
    streamId: o.newStream.id,
    topic: o.newTopic,
    content: resolveNotice(ctx.user, resolved),
    unreadUserIds: [...senders.map((s) => s.senderId), ...reactors.map((r) => r.userId)],
  })
}

export async function sendMoveNotices(ctx: ActionContext, o: MoveNoticeInput): Promise<void> {
  if (o.resolution !== null) await resolveNoticeFor(ctx, o, o.resolution === 'resolved')
  const count = o.movedIds.length
  if (count === 0) return
  const oldFull = await hasFullHistory(ctx.prisma, ctx.user, o.oldStream)
  const movedAll = (await accessibleTopicMessages(ctx.prisma, ctx.user, o.oldStream, o.oldTopic, oldFull)).length === 0
  const streamChanged = o.newStream.id !== o.oldStream.id

  if (o.sendToNewThread && (streamChanged || o.resolution === null)) {
    const newFull = await hasFullHistory(ctx.prisma, ctx.user, o.newStream)
    const moved = new Set(o.movedIds)
    const there = await accessibleTopicMessages(ctx.prisma, ctx.user, o.newStream, o.newTopic, newFull)
    const preexisting = there.filter((m) => !moved.has(m.id))
    await sendNotificationBotMessage(ctx, {
      streamId: o.newStream.id,
      topic: o.newTopic,
      content: newThreadNotice({
        actor: ctx.user,
        oldLocation: topicLink(o.oldStream.name, o.oldTopic),
        count,
        wholeTopicIntoEmpty: movedAll && preexisting.length === 0,
        messageLink: nearMessageUrl(realmUrl(ctx.realm, ctx.config.externalUrl), o.newStream, o.newTopic, o.targetId),
      }),
    })
  }
  if (o.sendToOldThread) {
    await sendNotificationBotMessage(ctx, {
      streamId: o.oldStream.id,
      topic: o.oldTopic,
      content: oldThreadNotice({ actor: ctx.user, newLocation: topicLink(o.newStream.name, o.newTopic), count, movedAll }),
    })
  }
}
