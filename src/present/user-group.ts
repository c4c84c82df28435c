// User group rows → the API's group object, and the user_group events.
import type { UserGroup } from '../db/index.js'
import type { UserGroupDict } from '../events/schemas/common.js'

/** The wire type, defined by its schema in events/schemas/common.ts. */
export type { UserGroupDict }

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
    creator_id: group.creatorId,
    date_created: Math.floor(group.dateCreated.getTime() / 1000),
    is_system_group: group.isSystemGroup,
    can_mention_group: parts.canMentionGroupId,
    deactivated: group.deactivated,
  }
}
