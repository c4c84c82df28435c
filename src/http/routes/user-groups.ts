// User groups: list, create, update, deactivate (groups are never deleted,
// upstream level 294: DELETE answers 405); members and subgroups.
import { Type } from 'typebox'
import { route } from '../route.js'
import { json, optional } from '../params.js'
import { createUserGroup, deactivateUserGroup, updateUserGroup, type GroupSettingChanges, type GroupSettingInputs } from '../../actions/user-groups.js'
import { updateUserGroupMembers, updateUserGroupSubgroups } from '../../actions/user-groups-membership.js'
import { accessUserGroupForRead } from '../../actions/user-groups-access.js'
import { requireMemberOrAdmin } from '../../access/member-or-admin.js'
import { getGroupMemberIds, getSubgroupIds, getUserGroups } from '../../queries/user-groups.js'
import { noSuchUser } from '../../errors.js'
import { MAX_USERS_PER_REQUEST } from '../../domain/limits.js'
import { parseGroupSettingChange, parseGroupSettingValue } from '../../domain/group-setting-value.js'
import { GROUP_PERMISSION_SETTING_NAMES } from '../../domain/permission-settings.js'

const ids = () => optional(json(Type.Array(Type.Integer(), { maxItems: MAX_USERS_PER_REQUEST })))
/** The group settings (levels 283–324), group-setting values decoded from JSON and parsed by the handler. */
const settingParams = Object.fromEntries(GROUP_PERMISSION_SETTING_NAMES.map((name) => [name, optional(json(Type.Unknown()))]))
const given = (input: Record<string, unknown>) => GROUP_PERMISSION_SETTING_NAMES.filter((name) => input[name] !== undefined).map((name) => [name, input[name]] as const)

export const routes = [
  route({
    method: 'GET',
    url: '/user_groups',
    params: { include_deactivated_groups: optional(Type.Boolean(), { default: false }) },
    handler: async (input, ctx) => {
      requireMemberOrAdmin(ctx)
      return { user_groups: await getUserGroups(ctx.prisma, ctx.realm.id, { includeDeactivated: input.include_deactivated_groups ?? false }) }
    },
  }),
  route({
    method: 'POST',
    url: '/user_groups/create',
    params: {
      name: Type.String(),
      description: Type.String(),
      members: json(Type.Array(Type.Integer(), { maxItems: MAX_USERS_PER_REQUEST })),
      subgroups: ids(),
      ...settingParams,
    },
    handler: async (input, ctx) => {
      const settings: GroupSettingInputs = Object.fromEntries(given(input).map(([name, raw]) => [name, parseGroupSettingValue(raw, name)]))
      const groupId = await createUserGroup(ctx, { name: input.name, description: input.description, members: input.members, subgroups: input.subgroups, settings })
      return { group_id: groupId }
    },
  }),
  route({
    method: 'PATCH',
    url: '/user_groups/:user_group_id',
    params: {
      user_group_id: Type.Integer(),
      name: optional(Type.String()),
      description: optional(Type.String()),
      ...settingParams,
    },
    handler: async (input, ctx) => {
      const settings: GroupSettingChanges = Object.fromEntries(given(input).map(([name, raw]) => [name, parseGroupSettingChange(raw, name)]))
      await updateUserGroup(ctx, input.user_group_id, { name: input.name, description: input.description, settings })
    },
  }),
  route({
    method: 'POST',
    url: '/user_groups/:user_group_id/deactivate',
    params: { user_group_id: Type.Integer() },
    handler: async (input, ctx) => {
      await deactivateUserGroup(ctx, input.user_group_id)
    },
  }),
  route({
    method: 'POST',
    url: '/user_groups/:user_group_id/members',
    params: { user_group_id: Type.Integer(), add: ids(), delete: ids(), add_subgroups: ids(), delete_subgroups: ids() },
    handler: async (input, ctx) => {
      await updateUserGroupMembers(ctx, input.user_group_id, {
        add: input.add,
        delete: input.delete,
        addSubgroups: input.add_subgroups,
        deleteSubgroups: input.delete_subgroups,
      })
    },
  }),
  route({
    method: 'GET',
    url: '/user_groups/:user_group_id/members',
    params: { user_group_id: Type.Integer(), direct_member_only: optional(Type.Boolean(), { default: false }) },
    handler: async (input, ctx) => {
      const group = await accessUserGroupForRead(ctx, input.user_group_id)
      return { members: await getGroupMemberIds(ctx.prisma, group.id, input.direct_member_only ?? false) }
    },
  }),
  route({
    method: 'GET',
    url: '/user_groups/:user_group_id/members/:user_id',
    params: { user_group_id: Type.Integer(), user_id: Type.Integer(), direct_member_only: optional(Type.Boolean(), { default: false }) },
    handler: async (input, ctx) => {
      const group = await accessUserGroupForRead(ctx, input.user_group_id)
      const user = await ctx.prisma.user.findFirst({ where: { id: input.user_id, realmId: ctx.realm.id } })
      if (!user) throw noSuchUser()
      const members = await getGroupMemberIds(ctx.prisma, group.id, input.direct_member_only ?? false)
      return { is_user_group_member: members.includes(user.id) }
    },
  }),
  route({
    method: 'POST',
    url: '/user_groups/:user_group_id/subgroups',
    params: { user_group_id: Type.Integer(), add: ids(), delete: ids() },
    handler: async (input, ctx) => {
      await updateUserGroupSubgroups(ctx, input.user_group_id, { add: input.add, delete: input.delete })
    },
  }),
  route({
    method: 'GET',
    url: '/user_groups/:user_group_id/subgroups',
    params: { user_group_id: Type.Integer(), direct_subgroup_only: optional(Type.Boolean(), { default: false }) },
    handler: async (input, ctx) => {
      const group = await accessUserGroupForRead(ctx, input.user_group_id)
      return { subgroups: await getSubgroupIds(ctx.prisma, group.id, input.direct_subgroup_only ?? false) }
    },
  }),
]
