// Who may change user groups: members and above, never guests or bots
// (upstream's require_member_or_admin); system groups are read-only. Creating
// needs the realm's can_create_groups; changing a group needs
// can_manage_all_groups, or else can_create_groups together with being a
// moderator or a direct member of the group (the 9.0 rule of the
// user_group_edit_policy that can_create_groups replaced).
import type { Tx, UserGroup } from '../db/index.js'
import type { ActionContext, TxContext } from './context.js'
import { isModeratorOrAbove } from '../domain/roles.js'
import { insufficientPermission, invalidUserGroup, userGroupDeactivated } from '../errors.js'
import { requireMemberOrAdmin } from '../access/member-or-admin.js'
import { holdsRealmPermission, realmPermissionsOf } from '../queries/realm-permissions.js'

/** Upstream's require_member_or_admin, the first check of every group change. */
export function requireGroupEditPermission(ctx: TxContext): void {
  requireMemberOrAdmin(ctx)
}

/** POST /user_groups/create: the realm's can_create_groups. */
export async function requireGroupCreatePermission(ctx: ActionContext): Promise<void> {
  requireMemberOrAdmin(ctx)
  if (!(await holdsRealmPermission(ctx.prisma, ctx.realm, ctx.user, 'can_create_groups', ctx.now()))) throw insufficientPermission()
}

/**
 * A group of the user's realm, for reading (upstream's GET group endpoints
 * are require_member_or_admin too); a deactivated one is refused, as upstream
 * access_user_group_to_read_membership does.
 */
export async function accessUserGroupForRead(ctx: ActionContext, groupId: number, db: Tx | ActionContext['prisma'] = ctx.prisma): Promise<UserGroup> {
  requireMemberOrAdmin(ctx)
  const group = await db.userGroup.findFirst({ where: { id: groupId, realmId: ctx.realm.id, isAnonymous: false } })
  if (!group) throw invalidUserGroup()
  if (group.deactivated) throw userGroupDeactivated()
  return group
}

/**
 * A group the user may change; locks its row for the rest of the transaction.
 * A deactivated group only with allowDeactivated (its name, description,
 * settings and members stay editable, upstream levels 294 and 340).
 */
export async function accessUserGroupForWrite(ctx: TxContext, tx: Tx, groupId: number, options: { allowDeactivated?: boolean } = {}): Promise<UserGroup> {
  requireGroupEditPermission(ctx)
  await tx.$executeRaw`SELECT id FROM user_group WHERE id = ${groupId} FOR UPDATE`
  const [group] = await writableGroups(ctx, tx, [groupId], options)
  return group as UserGroup
}

/**
 * Several groups the user may change, checked as accessUserGroupForWrite
 * checks one (the first refused group in `groupIds` order decides the
 * error), in a fixed number of statements whatever their number, without
 * locking them: for requests that only name groups (an invitation's group_ids).
 */
export async function checkUserGroupsWritable(ctx: TxContext, db: Tx | ActionContext['prisma'], groupIds: number[]): Promise<void> {
  if (groupIds.length === 0) return
  requireGroupEditPermission(ctx)
  await writableGroups(ctx, db, groupIds, {})
}

/**
 * The rule of both: each group exists in the realm (not anonymous), is active
 * unless allowDeactivated, is no system group; the user holds
 * can_manage_all_groups, or can_create_groups and (below moderator) is a
 * direct member of it.
 */
async function writableGroups(ctx: TxContext, db: Tx | ActionContext['prisma'], groupIds: number[], options: { allowDeactivated?: boolean }): Promise<UserGroup[]> {
  const rows = new Map((await db.userGroup.findMany({ where: { id: { in: groupIds }, realmId: ctx.realm.id, isAnonymous: false } })).map((g) => [g.id, g]))
  const holds = await realmPermissionsOf(db, ctx.realm, ctx.user, ctx.now())
  const manageAll = holds('can_manage_all_groups')
  const memberOf =
    manageAll || isModeratorOrAbove(ctx.user.role)
      ? undefined
      : new Set((await db.userGroupMember.findMany({ where: { groupId: { in: groupIds }, userId: ctx.user.id }, select: { groupId: true } })).map((m) => m.groupId))
  return groupIds.map((id) => {
    const group = rows.get(id)
    if (!group) throw invalidUserGroup()
    if (group.deactivated && !options.allowDeactivated) throw userGroupDeactivated()
    if (group.isSystemGroup) throw insufficientPermission()
    if (manageAll) return group
    if (!holds('can_create_groups')) throw insufficientPermission()
    if (memberOf && !memberOf.has(id)) throw insufficientPermission()
    return group
  })
}

/** Serializes changes to the realm's subgroup graph, so two concurrent additions cannot form a cycle. */
export async function lockGroupGraph(tx: Tx, realmId: number): Promise<void> {
  await tx.$executeRaw`SELECT pg_advisory_xact_lock(7431, ${realmId}::int)`
}
