// Lookups for administering a channel (PATCH/DELETE /streams/{id}, default
// channels): upstream's access_stream_for_delete_or_update, who can see a
// channel, name availability and the group a channel setting may name.
import type { Stream, Subscription, Tx, User } from '../db/index.js'
import { mustBeAdmin, groupSettingNotAllowed, invalidStreamId, invalidUserGroup } from '../errors.js'
import { isAdmin } from '../domain/roles.js'
import { canSeeStreamMetadata } from '../domain/stream-access.js'
import { SYSTEM_GROUPS } from '../domain/system-groups.js'

export interface AdministeredStream {
  stream: Stream
  subscription: Subscription | null
}

/**
 * Administrators may change any channel, archived ones included (upstream
 * access_stream_for_delete_or_update_requiring_metadata_access); anyone else
 * learns the channel exists only if they could see it ("Invalid channel ID"
 * otherwise), and is then refused as not an administrator.
 */
export async function accessStreamForUpdate(tx: Tx, user: User, streamId: number): Promise<AdministeredStream> {
  const stream = await tx.stream.findUnique({ where: { id: streamId } })
  if (!stream || stream.realmId !== user.realmId) throw invalidStreamId()
  const subscription = await tx.subscription.findFirst({ where: { userId: user.id, streamId, active: true } })
  if (isAdmin(user.role)) return { stream, subscription }
  if (subscription === null && stream.inviteOnly) throw invalidStreamId()
  throw mustBeAdmin()
}

export interface AudienceUser {
  id: number
  role: number
}

/** The users (of `users`) who may see the channel's metadata: they get its stream events. */
export function streamAudience(users: readonly AudienceUser[], stream: Pick<Stream, 'inviteOnly' | 'isWebPublic'>, subscriberIds: ReadonlySet<number>): number[] {
  return users.filter((u) => canSeeStreamMetadata(u, stream, subscriberIds.has(u.id))).map((u) => u.id)
}

/** Another channel of the realm already has this name, compared case-insensitively and exactly (no LIKE). */
export async function streamNameTaken(tx: Tx, realmId: number, name: string, exceptStreamId: number): Promise<boolean> {
  const rows = await tx.$queryRaw<{ id: number }[]>`
    SELECT id FROM stream WHERE realm_id = ${realmId} AND lower(name) = lower(${name}) AND id <> ${exceptStreamId} LIMIT 1`
  return rows.length > 0
}

/** can_remove_subscribers_group: a group of the realm, not role:internet nor role:nobody (as at creation). */
export async function accessStreamSettingGroup(tx: Tx, realmId: number, groupId: number, setting: string): Promise<number> {
  const group = await tx.userGroup.findUnique({ where: { id: groupId } })
  if (!group || group.realmId !== realmId || group.deactivated || group.isAnonymous) throw invalidUserGroup()
  if (group.isSystemGroup && (group.name === SYSTEM_GROUPS.internet || group.name === SYSTEM_GROUPS.nobody)) {
    throw groupSettingNotAllowed(setting, group.name)
  }
  return group.id
}
