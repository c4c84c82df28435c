// Who may change user groups (upstream 9.0): members and above, never guests
// or bots; the realm's user_group_edit_policy; system groups are read-only;
// below moderator, only groups the user is a direct member of.
import type { Tx, UserGroup } from '../db/index.js'
import type { ActionContext, TxContext } from './context.js'
import { hasPolicyPermission, isModeratorOrAbove } from '../domain/roles.js'
import { insufficientPermission, invalidUserGroup, userGroupDeactivated } from '../errors.js'
import { requireMemberOrAdmin } from '../access/member-or-admin.js'

/** Upstream's require_user_group_edit_permission: may the user edit user groups at all? */
export function requireGroupEditPermission(ctx: TxContext): void {
  requireMemberOrAdmin(ctx)
  if (!hasPolicyPermission(ctx.realm.userGroupEditPolicy, ctx.user, ctx.realm, ctx.now())) throw insufficientPermission()
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
  const group = await tx.userGroup.findFirst({ where: { id: groupId, realmId: ctx.realm.id, isAnonymous: false } })
  if (!group) throw invalidUserGroup()
  if (group.deactivated && !options.allowDeactivated) throw userGroupDeactivated()
  if (group.isSystemGroup) throw insufficientPermission()
  if (!isModeratorOrAbove(ctx.user.role)) {
    const member = await tx.userGroupMember.findUnique({ where: { groupId_userId: { groupId, userId: ctx.user.id } } })
    if (!member) throw insufficientPermission()
  }
  return group
}

/** Serializes changes to the realm's subgroup graph, so two concurrent additions cannot form a cycle. */
export async function lockGroupGraph(tx: Tx, realmId: number): Promise<void> {
  await tx.$executeRaw`SELECT pg_advisory_xact_lock(7431, ${realmId}::int)`
}
