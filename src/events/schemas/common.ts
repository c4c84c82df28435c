// Building blocks of the event schemas: the strict event object and the
// nested API objects several events carry (upstream-openapi.yaml's
// components). Nested objects list the fields Roost sends and allow more
// (clients ignore unknown keys, and presenters grow); an event's own keys are
// closed, so a stray or misspelt top-level key fails the schema check.
//
// Each schema's name is also its wire type (`Static<typeof X>`): present/
// returns these types, so the object a presenter builds and the schema an
// event is checked against are one definition.
import { Type, type Static, type TProperties } from 'typebox'

/** An event object: `type` and its fields, nothing else (the queue adds `id`). */
export const eventObject = <P extends TProperties>(properties: P) => Type.Object(properties, { additionalProperties: false })

const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(schema: T) => Type.Union([schema, Type.Null()])


/** A group-setting value: a named group's ID or an anonymous group. */
export const GroupSettingValueSchema = Type.Union([
  Type.Integer(),
  Type.Object({ direct_members: Type.Array(Type.Integer()), direct_subgroups: Type.Array(Type.Integer()) }, { additionalProperties: false }),
])

export const StreamDict = Type.Object({
  stream_id: Type.Integer(),
  name: Type.String(),
  description: Type.String(),
  rendered_description: Type.String(),
  date_created: Type.Integer(),
  creator_id: Nullable(Type.Integer()),
  invite_only: Type.Boolean(),
  is_web_public: Type.Boolean(),
  stream_post_policy: Type.Integer(),
  is_announcement_only: Type.Boolean(),
  message_retention_days: Nullable(Type.Integer()),
  history_public_to_subscribers: Type.Boolean(),
  first_message_id: Nullable(Type.Integer()),
  // Group-setting values (levels 320, 325, 333, 342, 357).
  can_add_subscribers_group: GroupSettingValueSchema,
  can_administer_channel_group: GroupSettingValueSchema,
  can_remove_subscribers_group: GroupSettingValueSchema,
  can_send_message_group: GroupSettingValueSchema,
  can_subscribe_group: GroupSettingValueSchema,
  is_archived: Type.Boolean(),
  is_recently_active: Type.Boolean(),
  stream_weekly_traffic: Nullable(Type.Integer()),
  subscribers: Type.Optional(Type.Array(Type.Integer())),
  is_default: Type.Optional(Type.Boolean()),
})
export type StreamDict = Static<typeof StreamDict>

export const SubscriptionDict = Type.Intersect([
  StreamDict,
  Type.Object({
    color: Type.String(),
    is_muted: Type.Boolean(),
    in_home_view: Type.Boolean(),
    pin_to_top: Type.Boolean(),
    desktop_notifications: Nullable(Type.Boolean()),
    audible_notifications: Nullable(Type.Boolean()),
    push_notifications: Nullable(Type.Boolean()),
    email_notifications: Nullable(Type.Boolean()),
    wildcard_mentions_notify: Nullable(Type.Boolean()),
  }),
])
export type SubscriptionDict = Static<typeof SubscriptionDict>

export const ProfileValue = Type.Object({ value: Type.String(), rendered_value: Type.Optional(Type.String()) }, { additionalProperties: false })
export type ProfileValue = Static<typeof ProfileValue>

/** The `person` of realm_user add (upstream's user dict, with is_active). */
export const UserDict = Type.Object({
  email: Type.String(),
  user_id: Type.Integer(),
  avatar_version: Type.Integer(),
  is_admin: Type.Boolean(),
  is_owner: Type.Boolean(),
  is_guest: Type.Boolean(),
  is_billing_admin: Type.Boolean(),
  role: Type.Integer(),
  is_bot: Type.Boolean(),
  full_name: Type.String(),
  timezone: Type.String(),
  is_active: Type.Boolean(),
  date_joined: Type.String(),
  delivery_email: Nullable(Type.String()),
  avatar_url: Nullable(Type.String()),
  /** null for non-bots (the spec's User table). */
  bot_type: Nullable(Type.Integer()),
  bot_owner_id: Type.Optional(Nullable(Type.Integer())),
  profile_data: Type.Optional(Type.Record(Type.String(), ProfileValue)),
})
export type UserDict = Static<typeof UserDict>

export const MessageDict = Type.Object({
  id: Type.Integer(),
  sender_id: Type.Integer(),
  content: Type.String(),
  content_type: Type.Union([Type.Literal('text/html'), Type.Literal('text/x-markdown')]),
  recipient_id: Type.Integer(),
  timestamp: Type.Integer(),
  client: Type.String(),
  subject: Type.String(),
  topic_links: Type.Array(Type.Unknown()),
  is_me_message: Type.Boolean(),
  reactions: Type.Array(Type.Unknown()),
  submessages: Type.Array(Type.Unknown()),
  sender_full_name: Type.String(),
  sender_email: Type.String(),
  sender_realm_str: Type.String(),
  display_recipient: Type.Union([
    Type.String(),
    Type.Array(Type.Object({ id: Type.Integer(), email: Type.String(), full_name: Type.String(), is_mirror_dummy: Type.Boolean() })),
  ]),
  type: Type.Union([Type.Literal('stream'), Type.Literal('private')]),
  stream_id: Type.Optional(Type.Integer()),
  avatar_url: Nullable(Type.String()),
})
export type MessageDict = Static<typeof MessageDict>

export const UserGroupDict = Type.Object({
  id: Type.Integer(),
  name: Type.String(),
  description: Type.String(),
  members: Type.Array(Type.Integer()),
  direct_subgroup_ids: Type.Array(Type.Integer()),
  /** Level 292: who created the group (null for system groups and unknown creators). */
  creator_id: Nullable(Type.Integer()),
  /** Level 292: UNIX seconds, null when unknown. */
  date_created: Nullable(Type.Integer()),
  is_system_group: Type.Boolean(),
  /** Levels 283–324: the group's permission settings, group-setting values. */
  can_add_members_group: GroupSettingValueSchema,
  can_join_group: GroupSettingValueSchema,
  can_leave_group: GroupSettingValueSchema,
  can_manage_group: GroupSettingValueSchema,
  can_mention_group: GroupSettingValueSchema,
  can_remove_members_group: GroupSettingValueSchema,
  /** Level 290. */
  deactivated: Type.Boolean(),
})
export type UserGroupDict = Static<typeof UserGroupDict>

export const DraftDict = Type.Object(
  {
    id: Type.Integer(),
    type: Type.Union([Type.Literal(''), Type.Literal('stream'), Type.Literal('private')]),
    to: Type.Array(Type.Integer()),
    topic: Type.String(),
    content: Type.String(),
    timestamp: Type.Integer(),
  },
  { additionalProperties: false },
)
export type DraftDict = Static<typeof DraftDict>

export const SavedSnippetDict = Type.Object(
  {
    id: Type.Integer(),
    title: Type.String(),
    content: Type.String(),
    date_created: Type.Integer(),
  },
  { additionalProperties: false },
)
export type SavedSnippetDict = Static<typeof SavedSnippetDict>

export const ScheduledMessageDict = Type.Object(
  {
    scheduled_message_id: Type.Integer(),
    type: Type.Union([Type.Literal('stream'), Type.Literal('private')]),
    to: Type.Union([Type.Integer(), Type.Array(Type.Integer())]),
    topic: Type.Optional(Type.String()),
    content: Type.String(),
    rendered_content: Type.String(),
    scheduled_delivery_timestamp: Type.Integer(),
    failed: Type.Boolean(),
  },
  { additionalProperties: false },
)
export type ScheduledMessageDict = Static<typeof ScheduledMessageDict>

export const CustomProfileFieldDict = Type.Object({
  id: Type.Integer(),
  type: Type.Integer(),
  order: Type.Integer(),
  name: Type.String(),
  hint: Type.String(),
  field_data: Type.String(),
  display_in_profile_summary: Type.Optional(Type.Literal(true)),
  required: Type.Boolean(),
  /** Level 296. */
  editable_by_user: Type.Boolean(),
})
export type CustomProfileFieldDict = Static<typeof CustomProfileFieldDict>

export { Nullable }
