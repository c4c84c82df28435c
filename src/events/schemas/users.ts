// User events: realm_user add/update/remove, user_status, presence,
// custom_profile_fields, invites_changed, user_group, realm_emoji.
import { builder } from './built.js'
import { Type, type Static } from 'typebox'
import type { StatusChange } from '../../domain/user-status.js'
import { DEACTIVATED_GROUP_FIELD, INACCESSIBLE_USER_FIELD } from './internal.js'
import { CustomProfileFieldDict, eventObject, GroupSettingValueSchema, Nullable, UserDict, UserGroupDict } from './common.js'

const person = <P extends Parameters<typeof Type.Object>[0]>(properties: P) => Type.Object({ user_id: Type.Integer(), ...properties }, { additionalProperties: false })

/** The forms of realm_user update's `person` (upstream-openapi realm_user op:update). */
const PersonUpdate = Type.Union([
  person({ full_name: Type.String() }),
  person({ avatar_source: Type.String(), avatar_url: Nullable(Type.String()), avatar_url_medium: Nullable(Type.String()), avatar_version: Type.Integer() }),
  person({ email: Type.String(), timezone: Type.String() }),
  person({ bot_owner_id: Type.Integer() }),
  person({ role: Type.Integer() }),
  person({ is_billing_admin: Type.Boolean() }),
  person({ delivery_email: Nullable(Type.String()) }),
  person({ new_email: Type.String() }),
  person({ is_active: Type.Boolean() }),
  person({
    custom_profile_field: Type.Object(
      { id: Type.Integer(), value: Nullable(Type.String()), rendered_value: Type.Optional(Type.String()) },
      { additionalProperties: false },
    ),
  }),
])
export type PersonUpdate = Static<typeof PersonUpdate>

export const RealmUserEventSchema = Type.Union([
  eventObject({ type: Type.Literal('realm_user'), op: Type.Literal('add'), person: UserDict }),
  eventObject({ type: Type.Literal('realm_user'), op: Type.Literal('update'), person: PersonUpdate }),
  eventObject({
    type: Type.Literal('realm_user'),
    op: Type.Literal('remove'),
    person: Type.Object({ user_id: Type.Integer(), full_name: Type.String() }, { additionalProperties: false }),
  }),
])
export type RealmUserEvent =
  | {
      type: 'realm_user'
      op: 'add'
      person: UserDict
      /** Set on the "Unknown user" placeholder: queues with user_list_incomplete do not receive it (events/queues/filter.ts). */
      [INACCESSIBLE_USER_FIELD]?: true
    }
  | { type: 'realm_user'; op: 'update'; person: PersonUpdate }
  | { type: 'realm_user'; op: 'remove'; person: { user_id: number; full_name: string } }

export const realmUserAddEvent = builder((person: UserDict, options: { inaccessible?: boolean } = {}): RealmUserEvent => ({
  type: 'realm_user',
  op: 'add',
  person: { ...person },
  ...(options.inaccessible ? { [INACCESSIBLE_USER_FIELD]: true as const } : {}),
}))
export const realmUserUpdateEvent = builder((person: PersonUpdate): RealmUserEvent => ({ type: 'realm_user', op: 'update', person }))
export const realmUserRemoveEvent = builder((userId: number, fullName: string): RealmUserEvent => ({
  type: 'realm_user',
  op: 'remove',
  person: { user_id: userId, full_name: fullName },
}))

export const UserStatusEventSchema = eventObject({
  type: Type.Literal('user_status'),
  user_id: Type.Integer(),
  away: Type.Optional(Type.Boolean()),
  status_text: Type.Optional(Type.String()),
  emoji_name: Type.Optional(Type.String()),
  emoji_code: Type.Optional(Type.String()),
  reaction_type: Type.Optional(Type.String()),
})
export type UserStatusEvent = Static<typeof UserStatusEventSchema>
/** Only the keys the request passed (`emoji_*` all three together). */
export const userStatusEvent = builder((userId: number, change: StatusChange): UserStatusEvent => ({
  type: 'user_status',
  user_id: userId,
  ...(change.away !== undefined ? { away: change.away } : {}),
  ...(change.statusText !== undefined ? { status_text: change.statusText } : {}),
  ...(change.emoji ? { emoji_name: change.emoji.emojiName, emoji_code: change.emoji.emojiCode, reaction_type: change.emoji.reactionType } : {}),
}))

const LegacyPresence = Type.Object(
  {
    client: Type.String(),
    status: Type.Union([Type.Literal('active'), Type.Literal('idle')]),
    timestamp: Type.Integer(),
    pushable: Type.Boolean(),
  },
  { additionalProperties: false },
)
/** The legacy presence event; queues with slim_presence drop `email`. */
export const PresenceEventSchema = eventObject({
  type: Type.Literal('presence'),
  user_id: Type.Integer(),
  email: Type.Optional(Type.String()),
  server_timestamp: Type.Number(),
  presence: Type.Record(Type.String(), LegacyPresence),
})
export type PresenceEvent = Static<typeof PresenceEventSchema>
export const presenceEvent = builder((user: { id: number; email: string }, presence: PresenceEvent['presence'], serverTimestamp: number): PresenceEvent => ({
  type: 'presence',
  user_id: user.id,
  email: user.email,
  server_timestamp: serverTimestamp,
  presence,
}))

export const CustomProfileFieldsEventSchema = eventObject({ type: Type.Literal('custom_profile_fields'), fields: Type.Array(CustomProfileFieldDict) })
export type CustomProfileFieldsEvent = Static<typeof CustomProfileFieldsEventSchema>
export const customProfileFieldsEvent = builder((fields: CustomProfileFieldDict[]): CustomProfileFieldsEvent => ({ type: 'custom_profile_fields', fields }))

export const InvitesChangedEventSchema = eventObject({ type: Type.Literal('invites_changed') })
export type InvitesChangedEvent = Static<typeof InvitesChangedEventSchema>
export const invitesChangedEvent = builder((): InvitesChangedEvent => ({ type: 'invites_changed' }))

const GroupData = Type.Object(
  {
    name: Type.Optional(Type.String()),
    description: Type.Optional(Type.String()),
    can_add_members_group: Type.Optional(GroupSettingValueSchema),
    can_join_group: Type.Optional(GroupSettingValueSchema),
    can_leave_group: Type.Optional(GroupSettingValueSchema),
    can_manage_group: Type.Optional(GroupSettingValueSchema),
    can_mention_group: Type.Optional(GroupSettingValueSchema),
    can_remove_members_group: Type.Optional(GroupSettingValueSchema),
    deactivated: Type.Optional(Type.Literal(true)),
  },
  { additionalProperties: false },
)
export const UserGroupEventSchema = Type.Union([
  eventObject({ type: Type.Literal('user_group'), op: Type.Literal('add'), group: UserGroupDict }),
  eventObject({ type: Type.Literal('user_group'), op: Type.Literal('update'), group_id: Type.Integer(), data: GroupData }),
  eventObject({ type: Type.Literal('user_group'), op: Type.Literal('remove'), group_id: Type.Integer() }),
  eventObject({
    type: Type.Literal('user_group'),
    op: Type.Union([Type.Literal('add_members'), Type.Literal('remove_members')]),
    group_id: Type.Integer(),
    user_ids: Type.Array(Type.Integer()),
  }),
  eventObject({
    type: Type.Literal('user_group'),
    op: Type.Union([Type.Literal('add_subgroups'), Type.Literal('remove_subgroups')]),
    group_id: Type.Integer(),
    direct_subgroup_ids: Type.Array(Type.Integer()),
  }),
])
export type UserGroupData = Static<typeof GroupData>
export type UserGroupEvent =
  | Exclude<Static<typeof UserGroupEventSchema>, { op: 'update' }>
  | (Extract<Static<typeof UserGroupEventSchema>, { op: 'update' }> & { [DEACTIVATED_GROUP_FIELD]?: true })
export const userGroupAddEvent = builder((group: UserGroupDict): UserGroupEvent => ({ type: 'user_group', op: 'add', group }))
/**
 * A name change of a deactivated group carries DEACTIVATED_GROUP_FIELD:
 * queues without include_deactivated_groups do not receive it (filter.ts).
 */
export const userGroupUpdateEvent = builder(
  (groupId: number, data: UserGroupData, opts: { groupDeactivated?: boolean } = {}): UserGroupEvent => ({
    type: 'user_group',
    op: 'update',
    group_id: groupId,
    data,
    ...(opts.groupDeactivated && data.name !== undefined ? { [DEACTIVATED_GROUP_FIELD]: true as const } : {}),
  }),
)
export const userGroupRemoveEvent = builder((groupId: number): UserGroupEvent => ({ type: 'user_group', op: 'remove', group_id: groupId }))
export const userGroupMembersEvent = builder((op: 'add_members' | 'remove_members', groupId: number, userIds: number[]): UserGroupEvent => ({
  type: 'user_group',
  op,
  group_id: groupId,
  user_ids: userIds,
}))
export const userGroupSubgroupsEvent = builder((op: 'add_subgroups' | 'remove_subgroups', groupId: number, subgroupIds: number[]): UserGroupEvent => ({
  type: 'user_group',
  op,
  group_id: groupId,
  direct_subgroup_ids: subgroupIds,
}))

const RealmEmojiDict = Type.Object({
  id: Type.String(),
  name: Type.String(),
  source_url: Type.String(),
  deactivated: Type.Boolean(),
  author_id: Nullable(Type.Integer()),
})
export const RealmEmojiEventSchema = eventObject({ type: Type.Literal('realm_emoji'), op: Type.Literal('update'), realm_emoji: Type.Record(Type.String(), RealmEmojiDict) })
export type RealmEmojiEvent = Static<typeof RealmEmojiEventSchema>
/** The realm's whole custom emoji set, keyed by ID (as register's realm_emoji). */
export const realmEmojiUpdateEvent = builder((realmEmoji: RealmEmojiEvent['realm_emoji']): RealmEmojiEvent => ({ type: 'realm_emoji', op: 'update', realm_emoji: realmEmoji }))
