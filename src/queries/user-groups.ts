// Reads of user groups: the realm's list, a group's members and subgroups
// (direct or through nested subgroups, by a recursive CTE).
import { Prisma, type PrismaClient, type Tx, type UserGroup } from '../db/index.js'
import type { GroupSettingValue } from '../domain/group-setting-value.js'
import { GROUP_PERMISSION_SETTING_NAMES, groupSettingColumn, storedDefaultGroupName, type GroupPermissionSettingName } from '../domain/permission-settings.js'
import { presentUserGroup, type UserGroupDict } from '../present/user-group.js'
import { getSystemGroupIds, presentGroupSettingValues } from './group-setting-values.js'

type Db = PrismaClient | Tx

/** The group ID a group's row stores for a setting (null: its default). */
export function storedGroupSettingId(group: UserGroup, setting: GroupPermissionSettingName): number | null {
  const value = (group as unknown as Record<string, unknown>)[groupSettingColumn(setting)]
  return typeof value === 'number' ? value : null
}

/** Every setting's group ID, the default system group standing in for an empty column. */
export function groupSettingIds(group: UserGroup, system: ReadonlyMap<string, number>): Record<GroupPermissionSettingName, number> {
  const out = {} as Record<GroupPermissionSettingName, number>
  for (const name of GROUP_PERMISSION_SETTING_NAMES) out[name] = storedGroupSettingId(group, name) ?? system.get(storedDefaultGroupName(name, group.isSystemGroup)) ?? 0
  return out
}

/** The wire values of the settings of several groups (a handful of queries for all). */
async function groupSettingValues(db: Db, realmId: number, groups: UserGroup[]): Promise<Map<number, Record<GroupPermissionSettingName, GroupSettingValue>>> {
  const system = await getSystemGroupIds(db, realmId)
  const ids = new Map(groups.map((g) => [g.id, groupSettingIds(g, system)]))
  const wire = await presentGroupSettingValues(db, [...ids.values()].flatMap((r) => Object.values(r)))
  const out = new Map<number, Record<GroupPermissionSettingName, GroupSettingValue>>()
  for (const [groupId, record] of ids) {
    const values = {} as Record<GroupPermissionSettingName, GroupSettingValue>
    for (const name of GROUP_PERMISSION_SETTING_NAMES) values[name] = wire.get(record[name]) ?? record[name]
    out.set(groupId, values)
  }
  return out
}

/**
 * The realm's groups with their direct members and subgroups (GET /user_groups,
 * register): deactivated groups only when asked for. Deactivated users are
 * members of no group (level 303): their rows stay, for a reactivation.
 */
export async function getUserGroups(db: Db, realmId: number, options: { includeDeactivated?: boolean } = {}): Promise<UserGroupDict[]> {
  const [groups, members, edges] = await Promise.all([
    db.userGroup.findMany({ where: { realmId, isAnonymous: false, ...(options.includeDeactivated ? {} : { deactivated: false }) }, orderBy: { id: 'asc' } }),
    db.userGroupMember.findMany({ where: { group: { realmId, isAnonymous: false }, user: { isActive: true } }, select: { groupId: true, userId: true } }),
    db.userGroupSubgroup.findMany({ where: { supergroup: { realmId, isAnonymous: false } }, select: { supergroupId: true, subgroupId: true } }),
  ])
  const settings = await groupSettingValues(db, realmId, groups)
  return groups.map((group) =>
    presentUserGroup(group, {
      memberIds: members.filter((m) => m.groupId === group.id).map((m) => m.userId),
      subgroupIds: edges.filter((e) => e.supergroupId === group.id).map((e) => e.subgroupId),
      settings: settings.get(group.id) as Record<GroupPermissionSettingName, GroupSettingValue>,
    }),
  )
}

export async function getUserGroupDict(db: Db, group: UserGroup): Promise<UserGroupDict> {
  const [members, edges, settings] = await Promise.all([
    db.userGroupMember.findMany({ where: { groupId: group.id, user: { isActive: true } }, select: { userId: true } }),
    db.userGroupSubgroup.findMany({ where: { supergroupId: group.id }, select: { subgroupId: true } }),
    groupSettingValues(db, group.realmId, [group]),
  ])
  return presentUserGroup(group, {
    memberIds: members.map((m) => m.userId),
    subgroupIds: edges.map((e) => e.subgroupId),
    settings: settings.get(group.id) as Record<GroupPermissionSettingName, GroupSettingValue>,
  })
}

/** The groups themselves and every group nested below them, at any depth. */
export async function getRecursiveSubgroupIds(db: Db, groupIds: number[]): Promise<Set<number>> {
  if (groupIds.length === 0) return new Set()
  const rows = await db.$queryRaw<{ id: number }[]>(Prisma.sql`
    WITH RECURSIVE below(id) AS (
      SELECT unnest(${groupIds}::int[])
      UNION
      SELECT s.subgroup_id FROM user_group_subgroup s JOIN below ON s.supergroup_id = below.id
    )
    SELECT id FROM below`)
  return new Set(rows.map((r) => Number(r.id)))
}

/** Strict subgroups of a group: direct ones, or all nested ones. */
export async function getSubgroupIds(db: Db, groupId: number, directOnly: boolean): Promise<number[]> {
  if (directOnly) {
    const edges = await db.userGroupSubgroup.findMany({ where: { supergroupId: groupId }, select: { subgroupId: true } })
    return edges.map((e) => e.subgroupId).sort((a, b) => a - b)
  }
  const all = await getRecursiveSubgroupIds(db, [groupId])
  all.delete(groupId)
  return [...all].sort((a, b) => a - b)
}

/** Active users in the group directly, or also through its subgroups. */
export async function getGroupMemberIds(db: Db, groupId: number, directOnly: boolean): Promise<number[]> {
  const groupIds = directOnly ? [groupId] : [...(await getRecursiveSubgroupIds(db, [groupId]))]
  const rows = await db.userGroupMember.findMany({ where: { groupId: { in: groupIds }, user: { isActive: true } }, select: { userId: true }, distinct: ['userId'] })
  return rows.map((r) => r.userId).sort((a, b) => a - b)
}

/** IDs of the realm's active users: who receives user_group events. */
export async function activeUserIds(db: Db, realmId: number): Promise<number[]> {
  const rows = await db.user.findMany({ where: { realmId, isActive: true }, select: { id: true } })
  return rows.map((r) => r.id)
}
