// DELETE /messages/{id} (upstream-behaviour §15): administrators delete any
// message; others their own (or their bots') where delete_own_message_policy
// and the delete time limit allow. `delete_message` events are published in
// bulk form; events/queues/filter.ts splits them for queues without the
// bulk_message_deletion capability. Copies whose push notification went out
// get a removal notice (notifications/enqueue.ts).
import type { ActionContext, Emit, Services } from './context.js'
import { inTransaction } from './context.js'
import type { Message, Realm, Tx } from '../db/index.js'
import { accessMessageById } from '../access/message.js'
import { checkDelete } from '../domain/message-edit.js'
import { getEditPermissions } from '../queries/realm-permissions.js'
import { messageAlreadyDeleted } from '../errors.js'
import { activeSubscriberIds } from './message-edit-audience.js'
import { deletePrivateMessageEvent, deleteStreamMessagesEvent, type BuiltEvent } from '../events/schemas/index.js'
import { emitFirstMessageIdChange } from './first-message-id.js'
import { queuePushRemovalsForDeletion } from '../notifications/enqueue.js'

export async function deleteMessage(ctx: ActionContext, messageId: number): Promise<void> {
  const { message } = await accessMessageById(ctx, messageId, { modifying: true })
  const sender = await ctx.prisma.user.findUnique({ where: { id: message.senderId }, select: { botOwnerId: true } })
  checkDelete({
    realm: ctx.realm,
    actor: ctx.user,
    perms: await getEditPermissions(ctx.prisma, ctx.realm, ctx.user, ctx.now()),
    senderId: message.senderId,
    senderBotOwnerId: sender?.botOwnerId ?? null,
    sentAt: message.dateSent,
    now: ctx.now(),
  })
  await deleteMessages(ctx, [message], ctx.user.id)
}

/** Deletes messages of one realm (any mix of channels and direct messages) in one transaction, with their events. */
export async function deleteMessages(ctx: Services & { realm: Realm }, messages: readonly Message[], actingUserId: number | null): Promise<void> {
  if (messages.length === 0) return
  await inTransaction(ctx, async (tx, emit) => {
    const ids = messages.map((m) => m.id)
    const emissions = await deletionEvents(tx, messages, actingUserId)
    await queuePushRemovalsForDeletion(tx, ids, ctx.now())
    const deleted = await tx.message.deleteMany({ where: { id: { in: ids } } })
    if (deleted.count !== ids.length) throw messageAlreadyDeleted()
    for (const e of emissions) emit(e.event, e.userIds)
    await refreshFirstMessageIds(tx, ctx.realm.id, messages, emit)
  })
}

async function deletionEvents(tx: Tx, messages: readonly Message[], actingUserId: number | null) {
  const out: { event: BuiltEvent; userIds: number[] }[] = []
  const withActor = (ids: Iterable<number>): number[] => {
    const set = new Set(ids)
    if (actingUserId !== null) set.add(actingUserId)
    return [...set].sort((a, b) => a - b)
  }
  const byTopic = new Map<string, Message[]>()
  for (const m of messages) {
    if (m.streamId === null) {
      const rows = await tx.userMessage.findMany({ where: { messageId: m.id }, select: { userId: true } })
      out.push({ event: deletePrivateMessageEvent(m.id), userIds: withActor(rows.map((r) => r.userId)) })
    } else {
      const key = `${m.streamId}\u0000${m.topic}`
      byTopic.set(key, [...(byTopic.get(key) ?? []), m])
    }
  }
  for (const group of byTopic.values()) {
    const first = group[0]
    if (!first || first.streamId === null) continue
    out.push({
      event: deleteStreamMessagesEvent(group.map((m) => m.id).sort((a, b) => a - b), first.streamId, first.topic),
      userIds: withActor(await activeSubscriberIds(tx, first.streamId)),
    })
  }
  return out
}

async function refreshFirstMessageIds(tx: Tx, realmId: number, messages: readonly Message[], emit: Emit): Promise<void> {
  const deleted = new Set(messages.map((m) => m.id))
  const streamIds = [...new Set(messages.flatMap((m) => (m.streamId === null ? [] : [m.streamId])))]
  for (const streamId of streamIds) {
    const stream = await tx.stream.findUnique({ where: { id: streamId } })
    if (!stream || stream.firstMessageId === null || !deleted.has(stream.firstMessageId)) continue
    const first = await tx.message.findFirst({ where: { streamId }, orderBy: { id: 'asc' }, select: { id: true } })
    const value = first?.id ?? null
    await tx.stream.update({ where: { id: streamId }, data: { firstMessageId: value } })
    await emitFirstMessageIdChange(tx, emit, realmId, stream, value)
  }
}
