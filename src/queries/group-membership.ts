// Which user groups a user belongs to, directly or through subgroups.
import type { PrismaClient, Tx } from '../db/index.js'
import { recursiveGroupIds } from '../domain/group-membership.js'

type Db = PrismaClient | Tx

/** IDs of every group of the realm `userId` belongs to, transitively. */
export async function getRecursiveGroupIds(db: Db, realmId: number, userId: number): Promise<Set<number>> {
  const [direct, edges] = await Promise.all([
    db.userGroupMember.findMany({ where: { userId, group: { realmId, deactivated: false } }, select: { groupId: true } }),
    db.userGroupSubgroup.findMany({ where: { supergroup: { realmId, deactivated: false } }, select: { supergroupId: true, subgroupId: true } }),
  ])
  return recursiveGroupIds(direct.map((m) => m.groupId), edges)
}

/** Is the user a member of `groupId`, directly or through subgroups? */
export async function isUserInGroup(db: Db, realmId: number, userId: number, groupId: number | null): Promise<boolean> {
  if (groupId === null) return false
  return (await getRecursiveGroupIds(db, realmId, userId)).has(groupId)
}
