// Creating, renaming/describing, changing the permission settings of and
// deactivating user groups, each told to every active user of the realm by a
// user_group event. Groups are never deleted (upstream level 294): a
// deactivated group keeps its row, its name and its members, and stays
// editable. The settings (levels 283–324, domain/permission-settings.ts) are
// group-setting values: an anonymous value is an anonymous user_group row
// (actions/group-setting-values.ts), updated in place or dropped when replaced.
import type { Tx, UserGroup } from '../db/index.js'
import { inTransaction, type ActionContext, type Emit } from './context.js'
import { checkGroupSettingChange, type GroupSettingChange, type GroupSettingValue } from '../domain/group-setting-value.js'
import { GROUP_CREATOR, GROUP_PERMISSION_SETTING_NAMES, GROUP_PERMISSION_SETTINGS, groupSettingColumn, type GroupPermissionSettingName } from '../domain/permission-settings.js'
import { accessUserGroupForUpdate, lockGroupGraph, requireGroupCreatePermission, requireGroupEditPermission, requireGroupPermission } from './user-groups-access.js'
import {
  invalidUserGroupId,
  invalidUserIdInList,
  noNewDataSupplied,
  cannotDeactivateGroupInUse,
  userGroupDeactivated,
  userGroupExists,
  userGroupNameBadPrefix,
  userGroupNameEmpty,
  userGroupNameTooLong,
} from '../errors.js'
import { userGroupAddEvent, userGroupRemoveEvent, userGroupUpdateEvent } from '../events/schemas/index.js'
import { activeUserIds, getUserGroupDict, groupSettingIds, storedGroupSettingId } from '../queries/user-groups.js'
import { getSystemGroupIds, presentGroupSettingValues } from '../queries/group-setting-values.js'
import { getGroupObjections } from '../queries/group-usage.js'
import { dropReplacedAnonymousGroups, storeGroupSettingValue } from './group-setting-values.js'

export const MAX_USER_GROUP_NAME_LENGTH = 100
const INVALID_NAME_PREFIXES = ['@', 'role:', 'user:', 'stream:', 'channel:']

function checkGroupName(name: string): string {
  if (name.trim() === '') throw userGroupNameEmpty()
  if (Array.from(name).length > MAX_USER_GROUP_NAME_LENGTH) throw userGroupNameTooLong(MAX_USER_GROUP_NAME_LENGTH)
  const prefix = INVALID_NAME_PREFIXES.find((p) => name.startsWith(p))
  if (prefix !== undefined) throw userGroupNameBadPrefix(prefix)
  return name
}

async function checkNameFree(tx: Tx, realmId: number, name: string, exceptId?: number): Promise<void> {
  const other = await tx.userGroup.findFirst({ where: { realmId, name, ...(exceptId ? { id: { not: exceptId } } : {}) } })
  if (other) throw userGroupExists(name)
}

/** Upstream's user_ids_to_users: every ID must be an active user of the realm. */
export async function checkUserIds(tx: Tx, realmId: number, userIds: number[]): Promise<number[]> {
  const unique = [...new Set(userIds)]
  const found = await tx.user.findMany({ where: { id: { in: unique }, realmId, isActive: true }, select: { id: true } })
  const known = new Set(found.map((u) => u.id))
  const missing = unique.find((id) => !known.has(id))
  if (missing !== undefined) throw invalidUserIdInList(missing)
  return unique
}

/** Every ID must be an active group of the realm (a deactivated one cannot be a subgroup, upstream). */
export async function checkGroupIds(tx: Tx, realmId: number, groupIds: number[]): Promise<number[]> {
  const unique = [...new Set(groupIds)]
  const found = await tx.userGroup.findMany({ where: { id: { in: unique }, realmId, isAnonymous: false }, select: { id: true, deactivated: true } })
  const known = new Set(found.map((g) => g.id))
  const missing = unique.find((id) => !known.has(id))
  if (missing !== undefined) throw invalidUserGroupId(missing)
  if (found.some((g) => g.deactivated)) throw userGroupDeactivated()
  return unique
}

export type GroupSettingInputs = Partial<Record<GroupPermissionSettingName, GroupSettingValue>>
export type GroupSettingChanges = Partial<Record<GroupPermissionSettingName, GroupSettingChange>>

export interface CreateUserGroupInput {
  name: string
  description: string
  members: number[]
  subgroups?: number[]
  /** Settings given; the others get upstream's defaults (group_creator: an anonymous group of the creator). */
  settings?: GroupSettingInputs
}

export async function createUserGroup(ctx: ActionContext, input: CreateUserGroupInput): Promise<number> {
  await requireGroupCreatePermission(ctx)
  const name = checkGroupName(input.name)
  return inTransaction(ctx, async (tx, emit) => {
    await lockGroupGraph(tx, ctx.realm.id)
    await checkNameFree(tx, ctx.realm.id, name)
    const memberIds = await checkUserIds(tx, ctx.realm.id, input.members)
    const subgroupIds = await checkGroupIds(tx, ctx.realm.id, input.subgroups ?? [])
    const system = await getSystemGroupIds(tx, ctx.realm.id)
    const settings: Record<string, number> = {}
    for (const setting of GROUP_PERMISSION_SETTING_NAMES) {
      const config = GROUP_PERMISSION_SETTINGS[setting]
      const given = input.settings?.[setting]
      settings[groupSettingColumn(setting)] =
        given === undefined && config.defaultGroupName !== GROUP_CREATOR
          ? (system.get(config.defaultGroupName) ?? 0)
          : await storeGroupSettingValue(tx, { realmId: ctx.realm.id, setting, config, value: given ?? { direct_members: [ctx.user.id], direct_subgroups: [] }, currentGroupId: null })
    }
    const group = await tx.userGroup.create({
      data: { realmId: ctx.realm.id, name, description: input.description, creatorId: ctx.user.id, dateCreated: ctx.now(), ...settings },
    })
    if (memberIds.length > 0) await tx.userGroupMember.createMany({ data: memberIds.map((userId) => ({ groupId: group.id, userId })) })
    if (subgroupIds.length > 0) await tx.userGroupSubgroup.createMany({ data: subgroupIds.map((subgroupId) => ({ supergroupId: group.id, subgroupId })) })
    emit(userGroupAddEvent(await getUserGroupDict(tx, group)), await activeUserIds(tx, ctx.realm.id))
    return group.id
  })
}

export interface UpdateUserGroupInput {
  name?: string
  description?: string
  /** `{new, old?}` per setting; a stale `old` is EXPECTATION_MISMATCH. */
  settings?: GroupSettingChanges
}

/** PATCH /user_groups/{id}: needs can_manage_group (or the realm's can_manage_all_groups). */
export async function updateUserGroup(ctx: ActionContext, groupId: number, input: UpdateUserGroupInput): Promise<void> {
  requireGroupEditPermission(ctx)
  const changes = Object.entries(input.settings ?? {}).filter(([, change]) => change !== undefined) as [GroupPermissionSettingName, GroupSettingChange][]
  if (input.name === undefined && input.description === undefined && changes.length === 0) throw noNewDataSupplied()
  await inTransaction(ctx, async (tx, emit) => {
    const writable = await accessUserGroupForUpdate(ctx, tx, groupId, { allowDeactivated: true })
    requireGroupPermission(writable, 'can_manage_group')
    const { group } = writable
    const recipients = await activeUserIds(tx, ctx.realm.id)
    if (input.name !== undefined && input.name !== group.name) {
      const name = checkGroupName(input.name)
      await checkNameFree(tx, ctx.realm.id, name, group.id)
      await tx.userGroup.update({ where: { id: group.id }, data: { name } })
      emit(userGroupUpdateEvent(group.id, { name }, { groupDeactivated: group.deactivated }), recipients)
    }
    if (input.description !== undefined && input.description !== group.description) {
      await tx.userGroup.update({ where: { id: group.id }, data: { description: input.description } })
      emit(userGroupUpdateEvent(group.id, { description: input.description }), recipients)
    }
    if (changes.length > 0) await changeGroupSettings(tx, emit, { realmId: ctx.realm.id, group, changes, recipients })
  })
}

/** The settings of one group, in upstream's order: each checked against its current value, stored, and told. */
async function changeGroupSettings(
  tx: Tx,
  emit: Emit,
  o: { realmId: number; group: UserGroup; changes: [GroupPermissionSettingName, GroupSettingChange][]; recipients: number[] },
): Promise<void> {
  const before = groupSettingIds(o.group, await getSystemGroupIds(tx, o.realmId))
  const current = await presentGroupSettingValues(tx, Object.values(before))
  const data: Record<string, number> = {}
  const replaced: (number | null)[] = []
  const told: [GroupPermissionSettingName, number][] = []
  for (const setting of GROUP_PERMISSION_SETTING_NAMES) {
    const change = o.changes.find(([name]) => name === setting)?.[1]
    if (!change || !checkGroupSettingChange(current.get(before[setting]) ?? before[setting], change)) continue
    const stored = storedGroupSettingId(o.group, setting)
    const id = await storeGroupSettingValue(tx, { realmId: o.realmId, setting, config: GROUP_PERMISSION_SETTINGS[setting], value: change.new, currentGroupId: stored })
    data[groupSettingColumn(setting)] = id
    replaced.push(stored)
    told.push([setting, id])
  }
  if (told.length === 0) return
  await tx.userGroup.update({ where: { id: o.group.id }, data })
  await dropReplacedAnonymousGroups(tx, replaced, Object.values({ ...before, ...Object.fromEntries(told) }))
  const wire = await presentGroupSettingValues(tx, told.map(([, id]) => id))
  for (const [setting, id] of told) emit(userGroupUpdateEvent(o.group.id, { [setting]: wire.get(id) ?? id }), o.recipients)
}

/**
 * POST /user_groups/{id}/deactivate (level 290): refused while the group is a
 * subgroup of an active group or the value of a setting (level 298). Told as
 * user_group update {deactivated: true} and remove; each queue keeps the one
 * its include_deactivated_groups capability asks for (events/queues/filter.ts).
 */
export async function deactivateUserGroup(ctx: ActionContext, groupId: number): Promise<void> {
  await inTransaction(ctx, async (tx, emit) => {
    await lockGroupGraph(tx, ctx.realm.id)
    const writable = await accessUserGroupForUpdate(ctx, tx, groupId)
    requireGroupPermission(writable, 'can_manage_group')
    const { group } = writable
    const objections = await getGroupObjections(tx, ctx.realm.id, group.id)
    if (objections.length > 0) throw cannotDeactivateGroupInUse(objections)
    await tx.userGroup.update({ where: { id: group.id }, data: { deactivated: true } })
    const recipients = await activeUserIds(tx, ctx.realm.id)
    emit(userGroupUpdateEvent(group.id, { deactivated: true }), recipients)
    emit(userGroupRemoveEvent(group.id), recipients)
  })
}
