// Creating, renaming/describing and deactivating user groups, each told to
// every active user of the realm by a user_group event. Groups are never
// deleted (upstream level 294): a deactivated group keeps its row, its name
// and its members, and stays editable.
import type { Tx, UserGroup } from '../db/index.js'
import { inTransaction, type ActionContext } from './context.js'
import { SYSTEM_GROUPS } from '../domain/system-groups.js'
import { accessUserGroupForWrite, lockGroupGraph, requireGroupCreatePermission, requireGroupEditPermission } from './user-groups-access.js'
import {
  groupSettingNotAllowed,
  groupSettingOldMismatch,
  invalidUserGroup,
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
import { activeUserIds, defaultMentionGroupIds, getUserGroupDict, mentionGroupOf } from '../queries/user-groups.js'
import { getGroupObjections } from '../queries/group-usage.js'

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

/** The group a can_mention_group value names; role:internet and role:owners are not allowed. */
async function mentionGroup(tx: Tx, realmId: number, groupId: number): Promise<UserGroup> {
  const group = await tx.userGroup.findFirst({ where: { id: groupId, realmId, deactivated: false, isAnonymous: false } })
  if (!group) throw invalidUserGroup()
  if (group.name === SYSTEM_GROUPS.internet || group.name === SYSTEM_GROUPS.owners) throw groupSettingNotAllowed('can_mention_group', group.name)
  return group
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

export interface CreateUserGroupInput {
  name: string
  description: string
  members: number[]
  subgroups?: number[]
  canMentionGroup?: number
}

export async function createUserGroup(ctx: ActionContext, input: CreateUserGroupInput): Promise<number> {
  await requireGroupCreatePermission(ctx)
  const name = checkGroupName(input.name)
  return inTransaction(ctx, async (tx, emit) => {
    await lockGroupGraph(tx, ctx.realm.id)
    await checkNameFree(tx, ctx.realm.id, name)
    const memberIds = await checkUserIds(tx, ctx.realm.id, input.members)
    const subgroupIds = await checkGroupIds(tx, ctx.realm.id, input.subgroups ?? [])
    const canMentionGroupId =
      input.canMentionGroup === undefined ? (await defaultMentionGroupIds(tx, ctx.realm.id)).everyone : (await mentionGroup(tx, ctx.realm.id, input.canMentionGroup)).id
    const group = await tx.userGroup.create({
      data: { realmId: ctx.realm.id, name, description: input.description, creatorId: ctx.user.id, dateCreated: ctx.now(), canMentionGroupId },
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
  canMentionGroup?: { new: number; old?: number }
}

export async function updateUserGroup(ctx: ActionContext, groupId: number, input: UpdateUserGroupInput): Promise<void> {
  requireGroupEditPermission(ctx)
  if (input.name === undefined && input.description === undefined && input.canMentionGroup === undefined) throw noNewDataSupplied()
  await inTransaction(ctx, async (tx, emit) => {
    const group = await accessUserGroupForWrite(ctx, tx, groupId, { allowDeactivated: true })
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
    if (input.canMentionGroup !== undefined) {
      const current = mentionGroupOf(group, await defaultMentionGroupIds(tx, ctx.realm.id))
      if (input.canMentionGroup.old !== undefined && input.canMentionGroup.old !== current) throw groupSettingOldMismatch()
      const target = await mentionGroup(tx, ctx.realm.id, input.canMentionGroup.new)
      if (target.id !== current) {
        await tx.userGroup.update({ where: { id: group.id }, data: { canMentionGroupId: target.id } })
        emit(userGroupUpdateEvent(group.id, { can_mention_group: target.id }), recipients)
      }
    }
  })
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
    const group = await accessUserGroupForWrite(ctx, tx, groupId)
    const objections = await getGroupObjections(tx, ctx.realm.id, group.id)
    if (objections.length > 0) throw cannotDeactivateGroupInUse(objections)
    await tx.userGroup.update({ where: { id: group.id }, data: { deactivated: true } })
    const recipients = await activeUserIds(tx, ctx.realm.id)
    emit(userGroupUpdateEvent(group.id, { deactivated: true }), recipients)
    emit(userGroupRemoveEvent(group.id), recipients)
  })
}
