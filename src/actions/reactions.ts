// POST and DELETE /messages/{id}/reactions (upstream-behaviour §15): emoji
// checked as for user status; a vote for an existing reaction keeps its
// name; reacting to a readable message never received adds a historical
// copy. `reaction` events go to everyone who can see the message (restricted
// guests who may not access the reacting user see it as "Unknown user").
import type { ActionContext } from './context.js'
import { inTransaction } from './context.js'
import type { Message, Stream, Tx } from '../db/index.js'
import { Prisma } from '../db/index.js'
import { accessMessageById } from '../access/message.js'
import { HISTORICAL_FLAGS } from '../domain/flags.js'
import { checkEmoji, emojiForName } from '../domain/user-status.js'
import { reactionAlreadyExists, reactionDoesNotExist, reactionNeedsEmoji } from '../errors.js'
import { audienceOf, messageAudience } from './message-edit-audience.js'
import { reactionEvent } from '../events/schemas/index.js'
import { usersWhoMayAccess } from '../access/user.js'
import { inaccessibleUserDict } from '../present/user.js'
import { fakeEmailDomain } from '../present/realm.js'

export interface AddReactionInput {
  messageId: number
  emojiName: string
  emojiCode?: string
  reactionType?: string
}

export interface RemoveReactionInput {
  messageId: number
  emojiName?: string
  emojiCode?: string
  reactionType: string
}

type ReactionChange = { op: 'add' | 'remove'; messageId: number; emoji: { emojiName: string; emojiCode: string; reactionType: string } }

async function realmEmoji(ctx: ActionContext) {
  return ctx.prisma.realmEmoji.findMany({ where: { realmId: ctx.realm.id }, select: { id: true, name: true, deactivated: true } })
}

/**
 * Makes the change and tells everyone who can see the message. The event's
 * deprecated `user` names the reacting user; restricted guests who may not
 * access that user get it as the "Unknown user" stand-in (one statement
 * finds them, none when guests are not restricted).
 */
async function publish(ctx: ActionContext, message: Message, stream: Stream | null, change: (tx: Tx) => Promise<ReactionChange>): Promise<void> {
  await inTransaction(ctx, async (tx, emit) => {
    const { op, messageId, emoji } = await change(tx)
    const { userIds } = audienceOf(await messageAudience(tx, message.id, stream))
    const seeing = new Set(await usersWhoMayAccess(tx, ctx.realm, userIds, ctx.user.id))
    const blind = userIds.filter((id) => !seeing.has(id))
    emit(reactionEvent(op, ctx.user, messageId, emoji), blind.length === 0 ? userIds : userIds.filter((id) => seeing.has(id)))
    if (blind.length > 0) {
      const stand = inaccessibleUserDict(ctx.user.id, fakeEmailDomain(ctx.realm, ctx.config.externalUrl))
      emit(reactionEvent(op, { id: ctx.user.id, email: stand.email, fullName: stand.full_name }, messageId, emoji), blind)
    }
  })
}

export async function addReaction(ctx: ActionContext, input: AddReactionInput): Promise<void> {
  const { message, stream, userMessage } = await accessMessageById(ctx, input.messageId, { modifying: true })
  const emoji = await realmEmoji(ctx)
  const given =
    input.emojiCode !== undefined && input.reactionType !== undefined
      ? { emojiName: input.emojiName, emojiCode: input.emojiCode, reactionType: input.reactionType }
      : emojiForName(input.emojiName, emoji)
  const mine = await ctx.prisma.reaction.findFirst({
    where: { messageId: message.id, userId: ctx.user.id, emojiCode: given.emojiCode, reactionType: given.reactionType },
  })
  if (mine) throw reactionAlreadyExists()
  // A vote for someone's existing reaction keeps that reaction's name, even for an emoji since deactivated.
  const existing = await ctx.prisma.reaction.findFirst({ where: { messageId: message.id, emojiCode: given.emojiCode, reactionType: given.reactionType } })
  const chosen = existing ? { ...given, emojiName: existing.emojiName } : checkEmoji(given, emoji)
  await publish(ctx, message, stream, async (tx) => {
    if (!userMessage) {
      await tx.$executeRaw(Prisma.sql`
        INSERT INTO user_message (user_id, message_id, flags) VALUES (${ctx.user.id}, ${message.id}, ${HISTORICAL_FLAGS}) ON CONFLICT DO NOTHING`)
    }
    await tx.reaction.create({ data: { messageId: message.id, userId: ctx.user.id, ...chosen } })
    return { op: 'add', messageId: message.id, emoji: chosen }
  })
}

export async function removeReaction(ctx: ActionContext, input: RemoveReactionInput): Promise<void> {
  const { message, stream } = await accessMessageById(ctx, input.messageId, { modifying: true })
  let code = input.emojiCode
  if (code === undefined) {
    if (input.emojiName === undefined) throw reactionNeedsEmoji()
    // Simple clients may name the emoji instead of giving its code.
    code = emojiForName(input.emojiName, await realmEmoji(ctx)).emojiCode
  }
  const reaction = await ctx.prisma.reaction.findFirst({
    where: { messageId: message.id, userId: ctx.user.id, emojiCode: code, reactionType: input.reactionType },
  })
  if (!reaction) throw reactionDoesNotExist()
  await publish(ctx, message, stream, async (tx) => {
    await tx.reaction.delete({ where: { id: reaction.id } })
    return { op: 'remove', messageId: message.id, emoji: reaction }
  })
}
