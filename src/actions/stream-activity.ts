// A channel's is_recently_active (upstream level 323): whether a message was
// sent to it within STREAM_ACTIVE_DAYS. Sending marks a channel active
// (db/send-queries.ts sets the column in the send's own statement; the
// emissions come from here), as does moving a recent message into it; the
// daily check (scheduler/stream-activity.ts) recomputes every channel of a
// realm, as upstream's update_stream_active_status_for_realm does, in both
// directions. Every change is a `stream` `update` to whoever may see the
// channel (upstream notify_stream_is_recently_active_update).
import type { Services } from '../services.js'
import { publishAll, transactionId, type Emission, type Emit } from './context.js'
import type { Stream, Tx } from '../db/index.js'
import { lockDue } from '../jobs/leased.js'
import { streamUpdateEvent } from '../events/schemas/index.js'
import { usersWhoSeeStreams } from './first-message-id.js'
import type { StreamGroupColumns } from '../domain/stream-settings.js'

/** Upstream's Stream.LAST_ACTIVITY_DAYS_BEFORE_FOR_ACTIVE. */
export const STREAM_ACTIVE_DAYS = 180

export const activityCutoff = (now: Date): Date => new Date(now.getTime() - STREAM_ACTIVE_DAYS * 24 * 3600 * 1000)

type ChangedStream = Pick<Stream, 'id' | 'name' | 'inviteOnly' | 'isWebPublic' | 'isRecentlyActive'> & StreamGroupColumns

/** The `stream` update events of channels whose is_recently_active just changed (to the value they carry). */
export async function streamActivityEmissions(db: Tx, realmId: number, streams: readonly ChangedStream[]): Promise<Emission[]> {
  if (streams.length === 0) return []
  const audiences = await usersWhoSeeStreams(db, realmId, streams)
  return streams.map((stream) => ({
    event: streamUpdateEvent(stream, 'is_recently_active', stream.isRecentlyActive),
    userIds: audiences.get(stream.id) ?? [],
  }))
}

/**
 * Sets every channel of the realm to whether its newest message is at most
 * STREAM_ACTIVE_DAYS old at `now` (one statement, an index look-up per
 * channel) and emits the changes; returns how many changed.
 */
export async function recheckStreamActivity(tx: Tx, emit: Emit, realmId: number, now: Date): Promise<number> {
  const changed = await tx.$queryRaw<ChangedStream[]>`
    WITH latest AS (
      SELECT st.id, COALESCE((SELECT m.date_sent >= ${activityCutoff(now)}::timestamptz FROM message m WHERE m.stream_id = st.id ORDER BY m.id DESC LIMIT 1), false) AS active
      FROM stream st WHERE st.realm_id = ${realmId}
    )
    UPDATE stream SET is_recently_active = latest.active
    FROM latest WHERE stream.id = latest.id AND stream.is_recently_active <> latest.active
    RETURNING stream.id, stream.name, stream.invite_only AS "inviteOnly", stream.is_web_public AS "isWebPublic", stream.is_recently_active AS "isRecentlyActive", stream.can_remove_subscribers_group_id AS "canRemoveSubscribersGroupId", stream.can_send_message_group_id AS "canSendMessageGroupId",
      stream.can_administer_channel_group_id AS "canAdministerChannelGroupId", stream.can_add_subscribers_group_id AS "canAddSubscribersGroupId",
      stream.can_subscribe_group_id AS "canSubscribeGroupId"`
  for (const { event, userIds } of await streamActivityEmissions(tx, realmId, changed)) emit(event, userIds)
  return changed.length
}

/** After messages moved into `streamId`: an inactive channel with a recent message becomes active (upstream's move path). */
export async function reviveAfterMove(tx: Tx, emit: Emit, realmId: number, streamId: number, now: Date): Promise<void> {
  const revived = await tx.$queryRaw<ChangedStream[]>`
    UPDATE stream SET is_recently_active = true
    WHERE id = ${streamId} AND NOT is_recently_active
      AND (SELECT m.date_sent FROM message m WHERE m.stream_id = ${streamId} ORDER BY m.id DESC LIMIT 1) >= ${activityCutoff(now)}::timestamptz
    RETURNING id, name, invite_only AS "inviteOnly", is_web_public AS "isWebPublic", is_recently_active AS "isRecentlyActive",
      can_remove_subscribers_group_id AS "canRemoveSubscribersGroupId", can_send_message_group_id AS "canSendMessageGroupId",
      can_administer_channel_group_id AS "canAdministerChannelGroupId", can_add_subscribers_group_id AS "canAddSubscribersGroupId",
      can_subscribe_group_id AS "canSubscribeGroupId"`
  for (const { event, userIds } of await streamActivityEmissions(tx, realmId, revived)) emit(event, userIds)
}

/**
 * The daily check of one due realm (scheduler/stream-activity.ts): locks a due
 * stream_activity_check row (`FOR UPDATE SKIP LOCKED`, no lease: the work is
 * one statement inside the locking transaction), rechecks the realm's
 * channels, moves the row's due_at `intervalMs` on and commits; the events go
 * out after the commit. Returns 1, or 0 when another node took every due row.
 */
export async function recheckDueRealm(services: Services, now: Date, intervalMs: number, realmIds?: number[]): Promise<number> {
  const emitted: Emission[] = []
  const done = await services.prisma.$transaction(
    async (tx) => {
      const [id] = await lockDue(tx, 'stream_activity_check', { now, realmIds, limit: 1 })
      if (id === undefined) return null
      const row = await tx.streamActivityCheck.findUniqueOrThrow({ where: { id }, include: { realm: true } })
      if (!row.realm.deactivated) await recheckStreamActivity(tx, (event, userIds) => emitted.push({ event, userIds }), row.realmId, now)
      await tx.streamActivityCheck.update({ where: { id }, data: { dueAt: new Date(now.getTime() + intervalMs) } })
      return { realm: row.realm, xid: emitted.length > 0 ? await transactionId(tx) : undefined }
    },
    { maxWait: 10_000, timeout: 60_000 },
  )
  if (done === null) return 0
  await publishAll({ ...services, realm: done.realm }, emitted, done.xid)
  return 1
}
