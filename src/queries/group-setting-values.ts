// Reads for group-setting values (domain/group-setting-value.ts): stored
// group IDs → wire values, and the group IDs that decide a user's
// permissions.
import type { PrismaClient, Tx } from '../db/index.js'
import type { GroupSettingValue } from '../domain/group-setting-value.js'
import { recursiveGroupIds } from '../domain/group-membership.js'
import { isProvisionalMember, ROLE } from '../domain/roles.js'
import { SYSTEM_GROUPS } from '../domain/system-groups.js'

type Db = PrismaClient | Tx

/**
 * The wire value of each stored setting group: a named group's ID, or for an anonymous
 * group its active direct members and its direct subgroups (sorted). Three queries at most.
 */
export async function presentGroupSettingValues(db: Db, groupIds: Iterable<number>): Promise<Map<number, GroupSettingValue>> {
  const ids = [...new Set(groupIds)]
  const out = new Map<number, GroupSettingValue>()
  if (ids.length === 0) return out
  const anonymous = (await db.userGroup.findMany({ where: { id: { in: ids }, isAnonymous: true }, select: { id: true } })).map((g) => g.id)
  for (const id of ids) out.set(id, id)
  if (anonymous.length === 0) return out
  const [members, subgroups] = await Promise.all([
    db.userGroupMember.findMany({ where: { groupId: { in: anonymous }, user: { isActive: true } }, select: { groupId: true, userId: true } }),
    db.userGroupSubgroup.findMany({ where: { supergroupId: { in: anonymous } }, select: { supergroupId: true, subgroupId: true } }),
  ])
  for (const id of anonymous) {
    out.set(id, {
      direct_members: members.filter((m) => m.groupId === id).map((m) => m.userId).sort((a, b) => a - b),
      direct_subgroups: subgroups.filter((s) => s.supergroupId === id).map((s) => s.subgroupId).sort((a, b) => a - b),
    })
  }
  return out
}

/** The realm's system groups by name (role:members → its ID, …). */
export async function getSystemGroupIds(db: Db, realmId: number): Promise<Map<string, number>> {
  const rows = await db.userGroup.findMany({ where: { realmId, isSystemGroup: true }, select: { id: true, name: true } })
  return new Map(rows.map((r) => [r.name, r.id]))
}

export interface PermissionUser {
  id: number
  role: number
  dateJoined: Date
}

/**
 * Every group (named or anonymous) the user belongs to for permission checks, transitively:
 * as getRecursiveGroupIds, except that a member still inside the realm's waiting period
 * counts in role:members but not role:fullmembers.
 */
export async function getPermissionGroupIds(db: Db, realm: { id: number; waitingPeriodThreshold: number }, user: PermissionUser, now: Date): Promise<Set<number>> {
  const [direct, edges] = await Promise.all([
    db.userGroupMember.findMany({ where: { userId: user.id, group: { realmId: realm.id, deactivated: false } }, select: { groupId: true, group: { select: { name: true, isSystemGroup: true } } } }),
    db.userGroupSubgroup.findMany({ where: { supergroup: { realmId: realm.id, deactivated: false } }, select: { supergroupId: true, subgroupId: true } }),
  ])
  // The role:members look-up only for the provisional member who needs it.
  const members = fullMembership(direct, user, realm, now) ? await db.userGroup.findFirst({ where: { realmId: realm.id, name: SYSTEM_GROUPS.members, isSystemGroup: true }, select: { id: true } }) : null
  return permissionGroupIds(direct, edges, user, realm, now, members?.id)
}

interface DirectMembership {
  groupId: number
  group: { name: string; isSystemGroup: boolean }
}

/** A provisional member's role:fullmembers membership, which counts as role:members instead; undefined for everyone else. */
function fullMembership(own: readonly DirectMembership[], user: PermissionUser, realm: { waitingPeriodThreshold: number }, now: Date): DirectMembership | undefined {
  if (user.role !== ROLE.MEMBER || !isProvisionalMember(user, realm, now)) return undefined
  return own.find((m) => m.group.isSystemGroup && m.group.name === SYSTEM_GROUPS.fullMembers)
}

/** The groups of one user's direct memberships `own`, transitively, with the waiting-period rule of getPermissionGroupIds. */
function permissionGroupIds(
  own: readonly DirectMembership[],
  edges: readonly { supergroupId: number; subgroupId: number }[],
  user: PermissionUser,
  realm: { waitingPeriodThreshold: number },
  now: Date,
  membersId: number | undefined,
): Set<number> {
  const full = fullMembership(own, user, realm, now)
  const directIds = own.map((m) => m.groupId)
  return recursiveGroupIds(full ? directIds.filter((id) => id !== full.groupId).concat(membersId === undefined ? [] : [membersId]) : directIds, edges)
}

/**
 * The users of `users` who belong to `groupId` for permission checks (as
 * getPermissionGroupIds, for many users in three statements).
 */
export async function usersInPermissionGroup(db: Db, realm: { id: number; waitingPeriodThreshold: number }, users: readonly PermissionUser[], groupId: number, now: Date): Promise<Set<number>> {
  if (users.length === 0) return new Set()
  const [direct, edges, members] = await Promise.all([
    db.userGroupMember.findMany({
      where: { userId: { in: users.map((u) => u.id) }, group: { realmId: realm.id, deactivated: false } },
      select: { userId: true, groupId: true, group: { select: { name: true, isSystemGroup: true } } },
    }),
    db.userGroupSubgroup.findMany({ where: { supergroup: { realmId: realm.id, deactivated: false } }, select: { supergroupId: true, subgroupId: true } }),
    db.userGroup.findFirst({ where: { realmId: realm.id, name: SYSTEM_GROUPS.members, isSystemGroup: true }, select: { id: true } }),
  ])
  const holding = new Set<number>()
  for (const user of users) {
    const own = direct.filter((m) => m.userId === user.id)
    if (permissionGroupIds(own, edges, user, realm, now, members?.id).has(groupId)) holding.add(user.id)
  }
  return holding
}
