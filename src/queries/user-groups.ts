// Reads of user groups: the realm's list, a group's members and subgroups
// (direct or through nested subgroups, by a recursive CTE).
import { Prisma, type PrismaClient, type Tx, type UserGroup } from '../db/index.js'
import { SYSTEM_GROUPS } from '../domain/system-groups.js'
import { presentUserGroup, type UserGroupDict } from '../present/user-group.js'

type Db = PrismaClient | Tx

/** Upstream's default for can_mention_group: nobody for system groups, everyone for the others. */
export async function defaultMentionGroupIds(db: Db, realmId: number): Promise<{ everyone: number; nobody: number }> {
  const rows = await db.userGroup.findMany({
    where: { realmId, name: { in: [SYSTEM_GROUPS.everyone, SYSTEM_GROUPS.nobody] }, isSystemGroup: true },
    select: { id: true, name: true },
  })
  const idOf = (name: string) => rows.find((r) => r.name === name)?.id ?? 0
  return { everyone: idOf(SYSTEM_GROUPS.everyone), nobody: idOf(SYSTEM_GROUPS.nobody) }
}

export function mentionGroupOf(group: UserGroup, defaults: { everyone: number; nobody: number }): number {
  return group.canMentionGroupId ?? (group.isSystemGroup ? defaults.nobody : defaults.everyone)
}

/**
 * The realm's groups with their direct members and subgroups (GET /user_groups,
 * register): deactivated groups only when asked for. Deactivated users are
 * members of no group (level 303): their rows stay, for a reactivation.
 */
export async function getUserGroups(db: Db, realmId: number, options: { includeDeactivated?: boolean } = {}): Promise<UserGroupDict[]> {
  const [groups, members, edges, defaults] = await Promise.all([
    db.userGroup.findMany({ where: { realmId, isAnonymous: false, ...(options.includeDeactivated ? {} : { deactivated: false }) }, orderBy: { id: 'asc' } }),
    db.userGroupMember.findMany({ where: { group: { realmId }, user: { isActive: true } }, select: { groupId: true, userId: true } }),
    db.userGroupSubgroup.findMany({ where: { supergroup: { realmId } }, select: { supergroupId: true, subgroupId: true } }),
    defaultMentionGroupIds(db, realmId),
  ])
  return groups.map((group) =>
    presentUserGroup(group, {
      memberIds: members.filter((m) => m.groupId === group.id).map((m) => m.userId),
      subgroupIds: edges.filter((e) => e.supergroupId === group.id).map((e) => e.subgroupId),
      canMentionGroupId: mentionGroupOf(group, defaults),
    }),
  )
}

export async function getUserGroupDict(db: Db, group: UserGroup): Promise<UserGroupDict> {
  const [members, edges, defaults] = await Promise.all([
    db.userGroupMember.findMany({ where: { groupId: group.id, user: { isActive: true } }, select: { userId: true } }),
    db.userGroupSubgroup.findMany({ where: { supergroupId: group.id }, select: { subgroupId: true } }),
    defaultMentionGroupIds(db, group.realmId),
  ])
  return presentUserGroup(group, {
    memberIds: members.map((m) => m.userId),
    subgroupIds: edges.map((e) => e.subgroupId),
    canMentionGroupId: mentionGroupOf(group, defaults),
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
