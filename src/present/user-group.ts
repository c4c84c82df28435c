// User group rows → the API's group object, and the user_group events.
import type { UserGroup } from '../db/index.js'
import type { ChatEvent } from '../events/bus.js'

export interface UserGroupDict {
  id: number
  name: string
  description: string
  members: number[]
  direct_subgroup_ids: number[]
  is_system_group: boolean
  can_mention_group: number
}

export interface GroupParts {
  memberIds: number[]
  subgroupIds: number[]
  /** The group that may mention this one, with upstream's defaults already applied. */
  canMentionGroupId: number
}

export function presentUserGroup(group: UserGroup, parts: GroupParts): UserGroupDict {
  return {
    id: group.id,
    name: group.name,
    description: group.description,
    members: [...parts.memberIds].sort((a, b) => a - b),
    direct_subgroup_ids: [...parts.subgroupIds].sort((a, b) => a - b),
    is_system_group: group.isSystemGroup,
    can_mention_group: parts.canMentionGroupId,
  }
}

export const userGroupAddEvent = (group: UserGroupDict): ChatEvent => ({ type: 'user_group', op: 'add', group })
export const userGroupUpdateEvent = (groupId: number, data: Record<string, unknown>): ChatEvent => ({ type: 'user_group', op: 'update', group_id: groupId, data })
export const userGroupRemoveEvent = (groupId: number): ChatEvent => ({ type: 'user_group', op: 'remove', group_id: groupId })
export const userGroupMembersEvent = (op: 'add_members' | 'remove_members', groupId: number, userIds: number[]): ChatEvent =>
  ({ type: 'user_group', op, group_id: groupId, user_ids: userIds })
export const userGroupSubgroupsEvent = (op: 'add_subgroups' | 'remove_subgroups', groupId: number, subgroupIds: number[]): ChatEvent =>
  ({ type: 'user_group', op, group_id: groupId, direct_subgroup_ids: subgroupIds })
