// A channel's first_message_id changed by a deletion or a move: the `stream`
// update event upstream sends when a deletion removes a channel's first
// message (check_update_first_message_id), to everyone whose register lists
// the channel (its subscribers and whoever may see it: non-guests for public
// channels, administrators for private ones, everyone for web-public ones).
//
// Upstream leaves first_message_id untouched when messages move; Roost keeps
// it true to the spec ("null when the channel has no messages") on moves too,
// so it tells clients the same way.
import type { Emit } from './context.js'
import type { Stream, Tx } from '../db/index.js'
import { canSeeStreamMetadata } from '../domain/stream-access.js'
import { streamUpdateEvent } from '../events/schemas/index.js'

/** Active users whose register lists the channel. */
export async function usersWhoSeeStream(tx: Tx, realmId: number, stream: Pick<Stream, 'id' | 'inviteOnly' | 'isWebPublic'>): Promise<number[]> {
  const subscribed = new Set(
    (await tx.subscription.findMany({ where: { streamId: stream.id, active: true, user: { isActive: true } }, select: { userId: true } })).map((s) => s.userId),
  )
  const users = await tx.user.findMany({ where: { realmId, isActive: true }, select: { id: true, role: true } })
  return users.filter((u) => canSeeStreamMetadata(u, stream, subscribed.has(u.id))).map((u) => u.id).sort((a, b) => a - b)
}

export async function emitFirstMessageIdChange(tx: Tx, emit: Emit, realmId: number, stream: Stream, value: number | null): Promise<void> {
  emit(streamUpdateEvent(stream, 'first_message_id', value), await usersWhoSeeStream(tx, realmId, stream))
}
