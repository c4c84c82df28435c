// When a user's activity flips, the anonymous groups whose direct member it
// is change their wire value (only active users are listed): upstream's
// send_update_events_for_anonymous_group_settings tells each such value
// again, as the user_group `update` of the group whose setting it is, the
// realm `update_dict` of the organization's setting or the `stream` `update`
// of the channel's (to those who may see the channel). Deactivation tells only
// those who cannot access the user (the others drop it themselves on the
// realm_user update); reactivation tells everyone.
import type { Tx } from '../db/index.js'
import type { Emit } from './context.js'
import {
  GROUP_PERMISSION_SETTING_NAMES,
  groupSettingColumn,
  REALM_PERMISSION_SETTING_NAMES,
  realmSettingColumn,
  STREAM_PERMISSION_SETTING_NAMES,
  streamSettingColumn,
} from '../domain/permission-settings.js'
import type { GroupSettingValue } from '../domain/group-setting-value.js'
import { storedStreamSettingGroupId } from '../domain/stream-settings.js'
import { streamAudience } from '../access/stream-admin.js'
import { metadataGranteesByStream } from '../queries/stream-permissions.js'
import { realmUpdateDictEvent, streamUpdateEvent, userGroupUpdateEvent } from '../events/schemas/index.js'
import { presentGroupSettingValues } from '../queries/group-setting-values.js'

/** Each user's direct named groups and the anonymous (setting) groups they are direct members of, in ID order. */
export async function directGroupsOf(tx: Tx, userIds: number[]): Promise<Map<number, { named: number[]; anonymous: number[] }>> {
  const rows = await tx.userGroupMember.findMany({
    where: { userId: { in: userIds } },
    select: { userId: true, groupId: true, group: { select: { isAnonymous: true } } },
    orderBy: { groupId: 'asc' },
  })
  const out = new Map<number, { named: number[]; anonymous: number[] }>()
  for (const row of rows) {
    const entry = out.get(row.userId) ?? { named: [], anonymous: [] }
    ;(row.group.isAnonymous ? entry.anonymous : entry.named).push(row.groupId)
    out.set(row.userId, entry)
  }
  return out
}

/** The current value of each anonymous group, told as the setting it is the value of (call after the change). */
export async function emitAnonymousSettingUpdates(tx: Tx, emit: Emit, realmId: number, anonymousGroupIds: number[], userIds: number[]): Promise<void> {
  const ids = [...new Set(anonymousGroupIds)]
  if (ids.length === 0 || userIds.length === 0) return
  const [values, groups, realm] = await Promise.all([
    presentGroupSettingValues(tx, ids),
    tx.userGroup.findMany({ where: { realmId, isAnonymous: false, OR: GROUP_PERMISSION_SETTING_NAMES.map((name) => ({ [groupSettingColumn(name)]: { in: ids } })) }, orderBy: { id: 'asc' } }),
    tx.realm.findUniqueOrThrow({ where: { id: realmId } }),
  ])
  await emitChannelSettingUpdates(tx, emit, realmId, ids, values, userIds)
  for (const id of ids) {
    const value = values.get(id) ?? id
    const group = groups.find((g) => GROUP_PERMISSION_SETTING_NAMES.some((name) => (g as unknown as Record<string, unknown>)[groupSettingColumn(name)] === id))
    if (group) {
      const setting = GROUP_PERMISSION_SETTING_NAMES.find((name) => (group as unknown as Record<string, unknown>)[groupSettingColumn(name)] === id)
      if (setting) emit(userGroupUpdateEvent(group.id, { [setting]: value }), userIds)
      continue
    }
    const setting = REALM_PERMISSION_SETTING_NAMES.find((name) => (realm as unknown as Record<string, unknown>)[realmSettingColumn(name)] === id)
    if (setting) emit(realmUpdateDictEvent({ [setting]: value }), userIds)
  }
}

/** Channel settings holding one of the groups: a `stream` update each, to those of `userIds` who may see the channel. */
async function emitChannelSettingUpdates(
  tx: Tx,
  emit: Emit,
  realmId: number,
  ids: number[],
  values: ReadonlyMap<number, GroupSettingValue>,
  userIds: number[],
): Promise<void> {
  const streams = await tx.stream.findMany({
    where: { realmId, OR: STREAM_PERMISSION_SETTING_NAMES.map((name) => ({ [streamSettingColumn(name)]: { in: ids } })) },
    orderBy: { id: 'asc' },
  })
  if (streams.length === 0) return
  const wanted = new Set(userIds)
  const [users, subscriptions, grantees] = await Promise.all([
    tx.user.findMany({ where: { id: { in: userIds } }, select: { id: true, role: true } }),
    tx.subscription.findMany({ where: { streamId: { in: streams.map((s) => s.id) }, active: true }, select: { streamId: true, userId: true } }),
    metadataGranteesByStream(tx, realmId, streams),
  ])
  for (const stream of streams) {
    const subscribers = new Set(subscriptions.filter((s) => s.streamId === stream.id).map((s) => s.userId))
    const audience = streamAudience(users, stream, subscribers, grantees.get(stream.id)).filter((id) => wanted.has(id))
    if (audience.length === 0) continue
    for (const name of STREAM_PERMISSION_SETTING_NAMES) {
      const id = storedStreamSettingGroupId(stream, name)
      if (id !== null && ids.includes(id)) emit(streamUpdateEvent(stream, name, values.get(id) ?? id), audience)
    }
  }
}
