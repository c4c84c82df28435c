// POST /user_groups/{id}/members and /subgroups: additions first, then
// removals, all in one transaction; each change is a user_group event. The
// members endpoint also takes add_subgroups and delete_subgroups (level 311),
// applied after the members as upstream does. Each part needs its own group
// setting (user-groups-access.ts): adding members can_add_members_group, or
// can_join_group when the request adds only the user; removing members
// can_remove_members_group, or can_leave_group when it removes only the
// user; adding subgroups can_add_members_group; removing them can_manage_group.
import { inTransaction, type ActionContext, type Emit, type TxContext } from './context.js'
import { accessUserGroupForUpdate, lockGroupGraph, requireGroupEditPermission, requireGroupPermission, type WritableGroup } from './user-groups-access.js'
import { checkGroupIds, checkUserIds } from './user-groups.js'
import { alreadyGroupMember, alreadySubgroup, notGroupMember, notSubgroup, nothingToAddOrDelete, nothingToDoForGroupMembers, subgroupCycle } from '../errors.js'
import type { Tx } from '../db/index.js'
import { userGroupMembersEvent, userGroupSubgroupsEvent } from '../events/schemas/index.js'
import { activeUserIds, getRecursiveSubgroupIds } from '../queries/user-groups.js'
import { watchBillingAdmins } from './billing-admin-events.js'

export interface AddDeleteInput {
  add?: number[]
  delete?: number[]
}

export interface MembersInput extends AddDeleteInput {
  addSubgroups?: number[]
  deleteSubgroups?: number[]
}

export async function updateUserGroupMembers(ctx: ActionContext, groupId: number, input: MembersInput): Promise<void> {
  requireGroupEditPermission(ctx)
  const add = input.add ?? []
  const remove = input.delete ?? []
  const subgroups = { add: input.addSubgroups ?? [], delete: input.deleteSubgroups ?? [] }
  if (add.length === 0 && remove.length === 0 && subgroups.add.length === 0 && subgroups.delete.length === 0) throw nothingToDoForGroupMembers()
  await inTransaction(ctx, async (tx, emit) => {
    if (subgroups.add.length > 0 || subgroups.delete.length > 0) await lockGroupGraph(tx, ctx.realm.id)
    // Members of a deactivated group stay editable (upstream); its subgroups do not.
    const writable = await accessUserGroupForUpdate(ctx, tx, groupId, { allowDeactivated: add.length + remove.length > 0 && subgroups.add.length + subgroups.delete.length === 0 })
    const { group } = writable
    const recipients = await activeUserIds(tx, ctx.realm.id)
    const billingAdminsChanged = await watchBillingAdmins(tx, ctx, emit)
    const onlySelf = (ids: number[]) => ids.length === 1 && ids[0] === ctx.user.id
    // Deactivated users are in no group (level 303): checkUserIds refuses them, and their rows count as absent.
    const direct = async () =>
      new Set((await tx.userGroupMember.findMany({ where: { groupId: group.id, user: { isActive: true } }, select: { userId: true } })).map((m) => m.userId))
    if (add.length > 0) {
      requireGroupPermission(writable, onlySelf(add) && writable.may('can_join_group') ? 'can_join_group' : 'can_add_members_group')
      const userIds = await checkUserIds(tx, ctx.realm.id, add)
      const existing = await direct()
      const already = userIds.find((id) => existing.has(id))
      if (already !== undefined) throw alreadyGroupMember(already)
      await tx.userGroupMember.createMany({ data: userIds.map((userId) => ({ groupId: group.id, userId })) })
      emit(userGroupMembersEvent('add_members', group.id, userIds), recipients)
    }
    if (remove.length > 0) {
      const userIds = await checkUserIds(tx, ctx.realm.id, remove)
      requireGroupPermission(writable, onlySelf(remove) && writable.may('can_leave_group') ? 'can_leave_group' : 'can_remove_members_group')
      const existing = await direct()
      const missing = userIds.find((id) => !existing.has(id))
      if (missing !== undefined) throw notGroupMember(missing)
      await tx.userGroupMember.deleteMany({ where: { groupId: group.id, userId: { in: userIds } } })
      emit(userGroupMembersEvent('remove_members', group.id, userIds), recipients)
    }
    await changeSubgroups(tx, emit, writable, recipients, subgroups, ctx)
    await billingAdminsChanged()
  })
}

export async function updateUserGroupSubgroups(ctx: ActionContext, groupId: number, input: AddDeleteInput): Promise<void> {
  requireGroupEditPermission(ctx)
  const add = input.add ?? []
  const remove = input.delete ?? []
  if (add.length === 0 && remove.length === 0) throw nothingToAddOrDelete()
  await inTransaction(ctx, async (tx, emit) => {
    await lockGroupGraph(tx, ctx.realm.id)
    const writable = await accessUserGroupForUpdate(ctx, tx, groupId)
    const recipients = await activeUserIds(tx, ctx.realm.id)
    const billingAdminsChanged = await watchBillingAdmins(tx, ctx, emit)
    await changeSubgroups(tx, emit, writable, recipients, { add, delete: remove }, ctx)
    await billingAdminsChanged()
  })
}

/** Subgroup additions (can_add_members_group), then removals (can_manage_group), of a group the caller locked. */
async function changeSubgroups(tx: Tx, emit: Emit, writable: WritableGroup, recipients: number[], input: { add: number[]; delete: number[] }, ctx: TxContext): Promise<void> {
  const groupId = writable.group.id
  const direct = async () => new Set((await tx.userGroupSubgroup.findMany({ where: { supergroupId: groupId }, select: { subgroupId: true } })).map((e) => e.subgroupId))
  if (input.add.length > 0) {
    requireGroupPermission(writable, 'can_add_members_group')
    const subgroupIds = await checkGroupIds(tx, ctx.realm.id, input.add)
    const existing = await direct()
    const already = subgroupIds.find((id) => existing.has(id))
    if (already !== undefined) throw alreadySubgroup(already)
    // The new edges would close a cycle if this group already sits at or below one of them.
    if ((await getRecursiveSubgroupIds(tx, subgroupIds)).has(groupId)) throw subgroupCycle(groupId)
    await tx.userGroupSubgroup.createMany({ data: subgroupIds.map((subgroupId) => ({ supergroupId: groupId, subgroupId })) })
    emit(userGroupSubgroupsEvent('add_subgroups', groupId, subgroupIds), recipients)
  }
  if (input.delete.length > 0) {
    requireGroupPermission(writable, 'can_manage_group')
    const subgroupIds = await checkGroupIds(tx, ctx.realm.id, input.delete)
    const existing = await direct()
    const missing = subgroupIds.find((id) => !existing.has(id))
    if (missing !== undefined) throw notSubgroup(missing)
    await tx.userGroupSubgroup.deleteMany({ where: { supergroupId: groupId, subgroupId: { in: subgroupIds } } })
    emit(userGroupSubgroupsEvent('remove_subgroups', groupId, subgroupIds), recipients)
  }
}
