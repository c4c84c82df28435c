// User group rows → the API's group object, and the user_group events.
import type { UserGroup } from '../db/index.js'
import type { GroupSettingValue } from '../domain/group-setting-value.js'
import type { GroupPermissionSettingName } from '../domain/permission-settings.js'
import type { UserGroupDict } from '../events/schemas/common.js'

/** The wire type, defined by its schema in events/schemas/common.ts. */
export type { UserGroupDict }

export interface GroupParts {
  memberIds: number[]
  subgroupIds: number[]
  /** Each permission setting's wire value, defaults already applied. */
  settings: Record<GroupPermissionSettingName, GroupSettingValue>
}

export function presentUserGroup(group: UserGroup, parts: GroupParts): UserGroupDict {
  return {
    id: group.id,
    name: group.name,
    description: group.description,
    members: [...parts.memberIds].sort((a, b) => a - b),
    direct_subgroup_ids: [...parts.subgroupIds].sort((a, b) => a - b),
    creator_id: group.creatorId,
    date_created: Math.floor(group.dateCreated.getTime() / 1000),
    is_system_group: group.isSystemGroup,
    can_add_members_group: parts.settings.can_add_members_group,
    can_join_group: parts.settings.can_join_group,
    can_leave_group: parts.settings.can_leave_group,
    can_manage_group: parts.settings.can_manage_group,
    can_mention_group: parts.settings.can_mention_group,
    can_remove_members_group: parts.settings.can_remove_members_group,
    deactivated: group.deactivated,
  }
}
