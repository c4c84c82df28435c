// DELETE /streams/{stream_id}: archive a channel as upstream's
// do_deactivate_stream does. Every subscription ends (subscription remove to
// each subscriber, one peer_remove to the remaining audience), the channel
// leaves the default channels, it is renamed "<hash>!DEACTIVATED:<name>" so
// its name is free again, and everyone who could see it gets `stream delete`
// (with the old name and privacy).
import { createHash } from 'node:crypto'
import type { ActionContext } from './context.js'
import { inTransaction } from './context.js'
import { accessStreamForUpdate, streamAudience, type AudienceUser } from '../access/stream-admin.js'
import { isAdmin, isGuest } from '../domain/roles.js'
import { MAX_STREAM_NAME_LENGTH } from '../domain/limits.js'
import { presentStream } from '../present/stream.js'
import { streamDeleteEvent, subscriptionPeerEvent, subscriptionRemoveEvent } from '../events/schemas/index.js'
import { emitDefaultStreams, setDefaultStream } from './default-streams.js'
import { emitGuestAccessChanges } from './guest-access-events.js'

/** Upstream's archived name: 7 hex digits of sha512(id), the marker, the old name; at most 60 code points. */
export function deactivatedStreamName(streamId: number, name: string): string {
  const hash = createHash('sha512').update(String(streamId)).digest('hex').slice(0, 7)
  return Array.from(`${hash}!DEACTIVATED:${name}`).slice(0, MAX_STREAM_NAME_LENGTH).join('')
}

export async function deactivateStream(ctx: ActionContext, streamId: number): Promise<void> {
  await inTransaction(ctx, async (tx, emit) => {
    const { stream } = await accessStreamForUpdate(tx, ctx.user, streamId)
    const users: AudienceUser[] = await tx.user.findMany({ where: { realmId: ctx.realm.id, isActive: true }, select: { id: true, role: true } })
    const removed = await tx.$queryRaw<{ user_id: number }[]>`
      UPDATE subscription SET active = false WHERE stream_id = ${stream.id} AND active RETURNING user_id`
    const removedIds = removed.map((r) => r.user_id).sort((a, b) => a - b)
    const audience = streamAudience(users, stream, new Set(removedIds))

    await tx.stream.update({
      where: { id: stream.id },
      data: { deactivated: true, inviteOnly: true, name: deactivatedStreamName(stream.id, stream.name) },
    })
    if (await setDefaultStream(tx, ctx.realm, stream, false)) await emitDefaultStreams(tx, emit, ctx.realm)

    const active = new Set(users.map((u) => u.id))
    const activeRemoved = removedIds.filter((id) => active.has(id))
    if (activeRemoved.length > 0) {
      emit(subscriptionRemoveEvent([stream]), activeRemoved)
      const gone = new Set(activeRemoved)
      const peers = users
        .filter((u) => !gone.has(u.id) && (stream.inviteOnly ? isAdmin(u.role) : stream.isWebPublic || !isGuest(u.role)))
        .map((u) => u.id)
      emit(subscriptionPeerEvent('peer_remove', [stream.id], activeRemoved), peers)
      await emitGuestAccessChanges(tx, emit, {
        realm: ctx.realm,
        change: { op: 'remove', streamsByUser: new Map(activeRemoved.map((id) => [id, [stream.id]])) },
        realmUsers: users,
        subscribersAfter: new Map([[stream.id, []]]),
      })
    }
    emit(streamDeleteEvent([presentStream(stream)]), audience)
  })
}
