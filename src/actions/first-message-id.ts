// A channel's first_message_id changed by a deletion, a move or a channel's
// first message: the `stream` update event upstream sends when a deletion
// removes a channel's first message (check_update_first_message_id), to
// everyone whose register lists the channel (its subscribers and whoever may
// see it: non-guests for public channels, administrators and those whose
// groups grant it for private ones, everyone for web-public ones).
//
// Upstream leaves first_message_id untouched when messages move, and sets it
// without an event when a channel gets its first message; Roost keeps it true
// to the spec ("null when the channel has no messages") on moves too, and
// tells clients of both the same way, so that a client applying events ends
// where a fresh register does (clients not subscribed get no message event).
import type { Emission, Emit } from './context.js'
import type { Stream, Tx } from '../db/index.js'
import { canSeeStreamMetadata } from '../domain/stream-access.js'
import { streamUpdateEvent } from '../events/schemas/index.js'
import { metadataGranteesByStream } from '../queries/stream-permissions.js'
import type { StreamGroupColumns } from '../domain/stream-settings.js'

/** A channel as who-sees-it needs it: its privacy and the groups that may grant metadata access (levels 349, 357). */
type SeenStream = Pick<Stream, 'id' | 'inviteOnly' | 'isWebPublic'> & StreamGroupColumns

/** Active users whose register lists the channel. */
export async function usersWhoSeeStream(tx: Tx, realmId: number, stream: SeenStream): Promise<number[]> {
  const grantees = (await metadataGranteesByStream(tx, realmId, [stream])).get(stream.id) ?? new Set<number>()
  const subscribed = new Set(
    (await tx.subscription.findMany({ where: { streamId: stream.id, active: true, user: { isActive: true } }, select: { userId: true } })).map((s) => s.userId),
  )
  const users = await tx.user.findMany({ where: { realmId, isActive: true }, select: { id: true, role: true } })
  return users.filter((u) => canSeeStreamMetadata(u, stream, subscribed.has(u.id)) || grantees.has(u.id)).map((u) => u.id).sort((a, b) => a - b)
}

/** usersWhoSeeStream for several channels of one realm, in two statements whatever their number. */
export async function usersWhoSeeStreams(
  db: Tx,
  realmId: number,
  streams: readonly SeenStream[],
): Promise<Map<number, number[]>> {
  const out = new Map<number, number[]>()
  if (streams.length === 0) return out
  const grantees = await metadataGranteesByStream(db, realmId, streams)
  const subscribed = new Set(
    (
      await db.subscription.findMany({
        where: { streamId: { in: streams.map((s) => s.id) }, active: true, user: { isActive: true } },
        select: { streamId: true, userId: true },
      })
    ).map((s) => `${s.streamId}:${s.userId}`),
  )
  const users = await db.user.findMany({ where: { realmId, isActive: true }, select: { id: true, role: true }, orderBy: { id: 'asc' } })
  for (const stream of streams) {
    const granted = grantees.get(stream.id)
    out.set(stream.id, users.filter((u) => canSeeStreamMetadata(u, stream, subscribed.has(`${stream.id}:${u.id}`)) || granted?.has(u.id) === true).map((u) => u.id))
  }
  return out
}

/** The `stream` update events of channels that just got their first message (firstIds: channel → message ID). */
export async function firstMessageEmissions(db: Tx, realmId: number, streams: readonly Stream[], firstIds: ReadonlyMap<number, number>): Promise<Emission[]> {
  const changed = streams.filter((s) => firstIds.has(s.id))
  const audiences = await usersWhoSeeStreams(db, realmId, changed)
  return changed.map((stream) => ({
    event: streamUpdateEvent(stream, 'first_message_id', firstIds.get(stream.id) as number),
    userIds: audiences.get(stream.id) ?? [],
  }))
}

export async function emitFirstMessageIdChange(tx: Tx, emit: Emit, realmId: number, stream: Stream, value: number | null): Promise<void> {
  emit(streamUpdateEvent(stream, 'first_message_id', value), await usersWhoSeeStream(tx, realmId, stream))
}
