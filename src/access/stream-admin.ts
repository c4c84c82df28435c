// Lookups for administering a channel (PATCH/DELETE /streams/{id}, default
// channels): upstream's access_stream_for_delete_or_update, who can see a
// channel, name availability and the group a channel setting may name.
import type { Stream, Subscription, Tx, User } from '../db/index.js'
import { cannotAdministerChannel, invalidStreamId } from '../errors.js'
import { isAdmin } from '../domain/roles.js'
import { canAccessStreamContent, canSeeStreamMetadata, type GroupGrants } from '../domain/stream-access.js'
import { groupGrantsOf } from './stream-grants.js'

export interface AdministeredStream {
  stream: Stream
  subscription: Subscription | null
  /** What the user's groups grant on the channel. */
  grants: GroupGrants
}

/**
 * Upstream's access_stream_for_delete_or_update_requiring_metadata_access
 * (level 325): organization administrators administer every channel
 * (archived ones included), members of its can_administer_channel_group this
 * one; anyone else who may read the channel is told they cannot administer
 * it, and the rest that it does not exist.
 */
export async function accessStreamForUpdate(tx: Tx, user: User, streamId: number): Promise<AdministeredStream> {
  const stream = await tx.stream.findUnique({ where: { id: streamId } })
  if (!stream || stream.realmId !== user.realmId) throw invalidStreamId()
  const subscription = await tx.subscription.findFirst({ where: { userId: user.id, streamId, active: true } })
  const grants = (await groupGrantsOf(tx, user))(stream)
  if (isAdmin(user.role) || grants.administer) return { stream, subscription, grants }
  if (canAccessStreamContent(user, stream, subscription !== null, grants)) throw cannotAdministerChannel()
  throw invalidStreamId()
}

export interface AudienceUser {
  id: number
  role: number
}

/**
 * The users (of `users`) who may see the channel's metadata: they get its stream events.
 * `grantees` are those whose groups grant it (queries/stream-permissions.ts metadataGranteesByStream).
 */
export function streamAudience(
  users: readonly AudienceUser[],
  stream: Pick<Stream, 'inviteOnly' | 'isWebPublic'>,
  subscriberIds: ReadonlySet<number>,
  grantees: ReadonlySet<number> = new Set(),
): number[] {
  return users.filter((u) => canSeeStreamMetadata(u, stream, subscriberIds.has(u.id)) || grantees.has(u.id)).map((u) => u.id)
}

/** Another channel of the realm already has this name, compared case-insensitively and exactly (no LIKE). */
export async function streamNameTaken(tx: Tx, realmId: number, name: string, exceptStreamId: number): Promise<boolean> {
  const rows = await tx.$queryRaw<{ id: number }[]>`
    SELECT id FROM stream WHERE realm_id = ${realmId} AND lower(name) = lower(${name}) AND id <> ${exceptStreamId} LIMIT 1`
  return rows.length > 0
}
