// Storing group-setting values (domain/group-setting-value.ts) inside an
// action's transaction: a named group is checked against the setting's
// configuration; an anonymous value becomes (or updates in place) an
// anonymous user_group row whose direct members and subgroups are the value's.
// All lists are checked with one query each.
import { randomUUID } from 'node:crypto'
import type { Tx } from '../db/index.js'
import {
  type AnonymousGroupValue,
  checkAnonymousAllowed,
  checkNamedGroupForSetting,
  type GroupPermissionConfig,
  type GroupSettingValue,
} from '../domain/group-setting-value.js'
import { invalidUserGroup, invalidUserGroupId, invalidUserIdInList, userGroupDeactivated } from '../errors.js'

export interface StoreGroupSettingOptions {
  realmId: number
  /** The wire name, for error messages. */
  setting: string
  config: GroupPermissionConfig
  value: GroupSettingValue
  /** The group the setting stores now (null: none yet); an anonymous one is updated in place. */
  currentGroupId: number | null
}

/**
 * Validates `value` for the setting and returns the group ID to store. Errors as upstream:
 * "Invalid user group" for an unknown or anonymous group ID, "User group is deactivated.",
 * "Invalid user ID: N", "Invalid user group ID: N", and the system-group rules of the config.
 */
export async function storeGroupSettingValue(tx: Tx, o: StoreGroupSettingOptions): Promise<number> {
  const named = await validateGroupSettingValue(tx, o)
  if (named !== null) return named
  const value = o.value as AnonymousGroupValue
  const current = o.currentGroupId === null ? null : await tx.userGroup.findUnique({ where: { id: o.currentGroupId }, select: { id: true, isAnonymous: true } })
  if (current?.isAnonymous) {
    const groupId = current.id
    await tx.userGroupMember.deleteMany({ where: { groupId } })
    await tx.userGroupSubgroup.deleteMany({ where: { supergroupId: groupId } })
    await writeAnonymousContents(tx, [groupId], value)
    return groupId
  }
  return ((await createAnonymousGroups(tx, o.realmId, value, 1)) as [number])[0]
}

/**
 * Checks `value` for the setting: for a named group, returns its ID; for an anonymous value,
 * checks its users and subgroups and returns null (the caller stores it).
 */
export async function validateGroupSettingValue(tx: Tx, o: Omit<StoreGroupSettingOptions, 'currentGroupId'>): Promise<number | null> {
  if (typeof o.value === 'number') {
    const group = await tx.userGroup.findFirst({ where: { id: o.value, realmId: o.realmId, isAnonymous: false } })
    if (!group) throw invalidUserGroup()
    if (group.deactivated) throw userGroupDeactivated()
    checkNamedGroupForSetting(group, o.setting, o.config)
    return group.id
  }
  checkAnonymousAllowed(o.setting, o.config)
  const { direct_members: memberIds, direct_subgroups: subgroupIds } = o.value
  const [users, groups] = await Promise.all([
    memberIds.length > 0 ? tx.user.findMany({ where: { id: { in: memberIds }, realmId: o.realmId, isActive: true }, select: { id: true } }) : [],
    subgroupIds.length > 0 ? tx.userGroup.findMany({ where: { id: { in: subgroupIds }, realmId: o.realmId, isAnonymous: false }, select: { id: true, deactivated: true } }) : [],
  ])
  const foundUsers = new Set(users.map((u) => u.id))
  const missingUser = memberIds.find((id) => !foundUsers.has(id))
  if (missingUser !== undefined) throw invalidUserIdInList(missingUser)
  const foundGroups = new Map(groups.map((g) => [g.id, g]))
  const missingGroup = subgroupIds.find((id) => !foundGroups.has(id))
  if (missingGroup !== undefined) throw invalidUserGroupId(missingGroup)
  if (groups.some((g) => g.deactivated)) throw userGroupDeactivated()
  return null
}

/** `count` new anonymous groups holding the (already validated) value; one statement per table. */
export async function createAnonymousGroups(tx: Tx, realmId: number, value: AnonymousGroupValue, count: number): Promise<number[]> {
  if (count === 0) return []
  const rows = await tx.userGroup.createManyAndReturn({
    data: Array.from({ length: count }, () => ({ realmId, name: `@anonymous:${randomUUID()}`, isAnonymous: true })),
    select: { id: true },
  })
  const ids = rows.map((r) => r.id)
  await writeAnonymousContents(tx, ids, value)
  return ids
}

async function writeAnonymousContents(tx: Tx, groupIds: number[], value: AnonymousGroupValue): Promise<void> {
  const members = groupIds.flatMap((groupId) => value.direct_members.map((userId) => ({ groupId, userId })))
  const subgroups = groupIds.flatMap((supergroupId) => value.direct_subgroups.map((subgroupId) => ({ supergroupId, subgroupId })))
  if (members.length > 0) await tx.userGroupMember.createMany({ data: members })
  if (subgroups.length > 0) await tx.userGroupSubgroup.createMany({ data: subgroups })
}

/** Deletes anonymous groups a setting no longer stores (call after the setting's row points elsewhere). */
export async function dropReplacedAnonymousGroups(tx: Tx, replaced: Iterable<number | null>, kept: Iterable<number>): Promise<void> {
  const keep = new Set(kept)
  const ids = [...new Set(replaced)].filter((id): id is number => id !== null && !keep.has(id))
  if (ids.length > 0) await tx.userGroup.deleteMany({ where: { id: { in: ids }, isAnonymous: true } })
}
