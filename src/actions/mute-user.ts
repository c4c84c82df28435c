// POST and DELETE /users/me/muted_users/{muted_user_id} (upstream
// zerver/views/muted_users.py, actions/muted_users.py). Any user the muter
// can access may be muted, bots and deactivated users included, never
// oneself. Muting marks the muted user's messages read for the muter (an
// update_message_flags event with their IDs), then tells the muter's clients
// the whole list: { type: 'muted_users', muted_users: [{ id, timestamp }] }.
// New messages from a muted user arrive already read (send-message.ts);
// read receipts leave muted and muting users out (queries/read-receipts.ts).
// Notifications (not built yet) must skip messages from muted senders.
import { mutedUsersEvent } from '../events/schemas/index.js'
import type { ActionContext } from './context.js'
import { inTransaction } from './context.js'
import { Prisma } from '../db/index.js'
import { accessUserById } from '../access/user.js'
import { cannotMuteSelf, userAlreadyMuted, userNotMuted } from '../errors.js'
import { isUniqueViolation } from '../db/errors.js'
import { fetchMutedUsers } from '../queries/muted-users.js'
import { markCopiesRead, readEvent } from './mark-as-read.js'

export async function muteUser(ctx: ActionContext, mutedUserId: number): Promise<void> {
  if (mutedUserId === ctx.user.id) throw cannotMuteSelf()
  const muted = await accessUserById(ctx, mutedUserId)
  const userId = ctx.user.id
  if ((await ctx.prisma.mutedUser.count({ where: { userId, mutedUserId: muted.id } })) > 0) throw userAlreadyMuted()
  try {
    await inTransaction(ctx, async (tx, emit) => {
      await tx.mutedUser.create({ data: { userId, mutedUserId: muted.id, dateMuted: ctx.now() } })
      // One statement, like upstream's do_mark_muted_user_messages_as_read.
      const ids = await markCopiesRead(tx, userId, Prisma.sql`m.sender_id = ${muted.id}`, null)
      if (ids.length > 0) emit(readEvent(ids, false), [userId])
      emit(mutedUsersEvent(await fetchMutedUsers(tx, userId)), [userId])
    })
  } catch (err) {
    if (isUniqueViolation(err)) throw userAlreadyMuted()
    throw err
  }
}

export async function unmuteUser(ctx: ActionContext, mutedUserId: number): Promise<void> {
  const muted = await accessUserById(ctx, mutedUserId)
  const userId = ctx.user.id
  await inTransaction(ctx, async (tx, emit) => {
    const { count } = await tx.mutedUser.deleteMany({ where: { userId, mutedUserId: muted.id } })
    if (count === 0) throw userNotMuted()
    emit(mutedUsersEvent(await fetchMutedUsers(tx, userId)), [userId])
  })
}
