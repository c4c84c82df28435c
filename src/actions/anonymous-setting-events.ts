// When a user's activity flips, the anonymous groups whose direct member it
// is change their wire value (only active users are listed): upstream's
// send_update_events_for_anonymous_group_settings tells each such value
// again, as the user_group `update` of the group whose setting it is or the
// realm `update_dict` of the organization's setting. Deactivation tells only
// those who cannot access the user (the others drop it themselves on the
// realm_user update); reactivation tells everyone.
import type { Tx } from '../db/index.js'
import type { Emit } from './context.js'
import { GROUP_PERMISSION_SETTING_NAMES, groupSettingColumn, REALM_PERMISSION_SETTING_NAMES, realmSettingColumn } from '../domain/permission-settings.js'
import { realmUpdateDictEvent, userGroupUpdateEvent } from '../events/schemas/index.js'
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
