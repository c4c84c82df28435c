// POST /user_groups/{id}/members and /subgroups: additions first, then
// removals, all in one transaction; each change is a user_group event.
import { inTransaction, type ActionContext } from './context.js'
import { accessUserGroupForWrite, lockGroupGraph, requireGroupEditPermission } from './user-groups-access.js'
import { checkGroupIds, checkUserIds } from './user-groups.js'
import { alreadyGroupMember, alreadySubgroup, notGroupMember, notSubgroup, nothingToAddOrDelete, subgroupCycle } from '../errors.js'
import { userGroupMembersEvent, userGroupSubgroupsEvent } from '../events/schemas/index.js'
import { activeUserIds, getRecursiveSubgroupIds } from '../queries/user-groups.js'

export interface AddDeleteInput {
  add?: number[]
  delete?: number[]
}

export async function updateUserGroupMembers(ctx: ActionContext, groupId: number, input: AddDeleteInput): Promise<void> {
  requireGroupEditPermission(ctx)
  const add = input.add ?? []
  const remove = input.delete ?? []
  if (add.length === 0 && remove.length === 0) throw nothingToAddOrDelete()
  await inTransaction(ctx, async (tx, emit) => {
    const group = await accessUserGroupForWrite(ctx, tx, groupId)
    const recipients = await activeUserIds(tx, ctx.realm.id)
    const direct = async () => new Set((await tx.userGroupMember.findMany({ where: { groupId: group.id }, select: { userId: true } })).map((m) => m.userId))
    if (add.length > 0) {
      const userIds = await checkUserIds(tx, ctx.realm.id, add)
      const existing = await direct()
      const already = userIds.find((id) => existing.has(id))
      if (already !== undefined) throw alreadyGroupMember(already)
      await tx.userGroupMember.createMany({ data: userIds.map((userId) => ({ groupId: group.id, userId })) })
      emit(userGroupMembersEvent('add_members', group.id, userIds), recipients)
    }
    if (remove.length > 0) {
      const existing = await direct()
      const missing = remove.find((id) => !existing.has(id))
      if (missing !== undefined) throw notGroupMember(missing)
      const userIds = [...new Set(remove)]
      await tx.userGroupMember.deleteMany({ where: { groupId: group.id, userId: { in: userIds } } })
      emit(userGroupMembersEvent('remove_members', group.id, userIds), recipients)
    }
  })
}

export async function updateUserGroupSubgroups(ctx: ActionContext, groupId: number, input: AddDeleteInput): Promise<void> {
  requireGroupEditPermission(ctx)
  const add = input.add ?? []
  const remove = input.delete ?? []
  if (add.length === 0 && remove.length === 0) throw nothingToAddOrDelete()
  await inTransaction(ctx, async (tx, emit) => {
    await lockGroupGraph(tx, ctx.realm.id)
    const group = await accessUserGroupForWrite(ctx, tx, groupId)
    const recipients = await activeUserIds(tx, ctx.realm.id)
    const direct = async () =>
      new Set((await tx.userGroupSubgroup.findMany({ where: { supergroupId: group.id }, select: { subgroupId: true } })).map((e) => e.subgroupId))
    if (add.length > 0) {
      const subgroupIds = await checkGroupIds(tx, ctx.realm.id, add)
      const existing = await direct()
      const already = subgroupIds.find((id) => existing.has(id))
      if (already !== undefined) throw alreadySubgroup(already)
      // The new edges would close a cycle if this group already sits at or below one of them.
      if ((await getRecursiveSubgroupIds(tx, subgroupIds)).has(group.id)) throw subgroupCycle(group.id)
      await tx.userGroupSubgroup.createMany({ data: subgroupIds.map((subgroupId) => ({ supergroupId: group.id, subgroupId })) })
      emit(userGroupSubgroupsEvent('add_subgroups', group.id, subgroupIds), recipients)
    }
    if (remove.length > 0) {
      const subgroupIds = await checkGroupIds(tx, ctx.realm.id, remove)
      const existing = await direct()
      const missing = subgroupIds.find((id) => !existing.has(id))
      if (missing !== undefined) throw notSubgroup(missing)
      await tx.userGroupSubgroup.deleteMany({ where: { supergroupId: group.id, subgroupId: { in: subgroupIds } } })
      emit(userGroupSubgroupsEvent('remove_subgroups', group.id, subgroupIds), recipients)
    }
  })
}
