// Every group permission setting Roost knows, with upstream's configuration
// (Realm.REALM_PERMISSION_GROUP_SETTINGS, Stream.stream_permission_group_settings,
// NamedUserGroup.GROUP_PERMISSION_SETTINGS as of feature level 372), and the
// deprecated integer policies the spec still names, derived from the group
// settings that replaced them (the policy whose system group is the setting's,
// else the closest superset, as upstream's get_corresponding_policy_value_for_group_setting).
import { permissionConfig, presentPermissionConfig, type GroupPermissionConfig } from './group-setting-value.js'
import { SYSTEM_GROUPS as G } from './system-groups.js'

export interface RealmPermissionSetting {
  config: GroupPermissionConfig
  /** Only organization owners may change it (upstream's update_realm). */
  ownerOnly?: boolean
  /** Roost has no such feature: the setting is stored and reported but grants nothing. */
  inert?: boolean
}

/** The pseudo group name of a default that is the channel's creator (upstream renamed it "channel_creator" at level 427). */
export const STREAM_CREATOR_OR_NOBODY = 'stream_creator_or_nobody'

const common = (defaultGroupName: string, allowNobodyGroup: boolean, allowEveryoneGroup: boolean, extra: Partial<GroupPermissionConfig> = {}) =>
  permissionConfig(defaultGroupName, { allowNobodyGroup, allowEveryoneGroup, ...extra })

export const REALM_PERMISSION_SETTINGS = {
  create_multiuse_invite_group: { config: common(G.administrators, true, false), ownerOnly: true },
  can_access_all_users_group: { config: common(G.everyone, false, true, { requireSystemGroup: true, allowedSystemGroups: [G.everyone, G.members] }) },
  can_add_custom_emoji_group: { config: common(G.members, true, false) },
  can_add_subscribers_group: { config: common(G.members, true, false) },
  can_create_bots_group: { config: common(G.members, true, false) },
  can_create_groups: { config: common(G.members, true, false), ownerOnly: true },
  can_create_private_channel_group: { config: common(G.members, true, false) },
  can_create_public_channel_group: { config: common(G.members, true, false) },
  can_create_web_public_channel_group: {
    config: common(G.owners, true, false, { requireSystemGroup: true, allowedSystemGroups: [G.moderators, G.administrators, G.owners, G.nobody] }),
  },
  can_create_write_only_bots_group: { config: common(G.members, true, false) },
  can_delete_any_message_group: { config: common(G.administrators, true, false) },
  can_delete_own_message_group: { config: common(G.everyone, true, true) },
  can_invite_users_group: { config: common(G.members, true, false), ownerOnly: true },
  can_manage_all_groups: { config: common(G.owners, false, false), ownerOnly: true },
  can_manage_billing_group: { config: common(G.administrators, false, false), ownerOnly: true, inert: true },
  can_mention_many_users_group: { config: common(G.administrators, true, true) },
  can_move_messages_between_channels_group: { config: common(G.members, true, false) },
  can_move_messages_between_topics_group: { config: common(G.everyone, true, true) },
  can_resolve_topics_group: { config: common(G.everyone, true, true) },
  can_summarize_topics_group: { config: common(G.everyone, true, true), inert: true },
  direct_message_initiator_group: { config: common(G.everyone, true, true) },
  direct_message_permission_group: { config: common(G.everyone, true, true) },
} as const satisfies Record<string, RealmPermissionSetting>

export type RealmPermissionSettingName = keyof typeof REALM_PERMISSION_SETTINGS
export const REALM_PERMISSION_SETTING_NAMES = Object.keys(REALM_PERMISSION_SETTINGS) as RealmPermissionSettingName[]
export const isRealmPermissionSetting = (name: string): name is RealmPermissionSettingName => Object.hasOwn(REALM_PERMISSION_SETTINGS, name)

/** The Realm column (Prisma field) holding a setting's group ID: can_x_group → canXGroupId. */
export function realmSettingColumn(name: RealmPermissionSettingName): string {
  return `${name.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase())}Id`
}

/**
 * Channel-level settings (upstream's Stream.stream_permission_group_settings at level 372).
 * can_administer_channel_group defaults to an anonymous group of the channel's creator
 * (role:nobody without one), which upstream names "stream_creator_or_nobody".
 */
export const STREAM_PERMISSION_SETTINGS = {
  can_add_subscribers_group: common(G.nobody, true, false),
  can_administer_channel_group: common(STREAM_CREATOR_OR_NOBODY, true, false),
  can_remove_subscribers_group: common(G.administrators, true, true),
  can_send_message_group: common(G.everyone, true, true),
  can_subscribe_group: common(G.nobody, true, false),
} as const satisfies Record<string, GroupPermissionConfig>

export type StreamPermissionSettingName = keyof typeof STREAM_PERMISSION_SETTINGS
export const STREAM_PERMISSION_SETTING_NAMES = Object.keys(STREAM_PERMISSION_SETTINGS) as StreamPermissionSettingName[]
export const isStreamPermissionSetting = (name: string): name is StreamPermissionSettingName => Object.hasOwn(STREAM_PERMISSION_SETTINGS, name)

/** The Stream column (Prisma field) holding a setting's group ID: can_x_group → canXGroupId. */
export function streamSettingColumn(name: StreamPermissionSettingName): `${string}GroupId` {
  return `${name.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase())}Id` as `${string}GroupId`
}

/** The system group an empty channel column stands for (channels made before the setting existed). */
export function streamSettingFallbackGroup(name: StreamPermissionSettingName): string {
  const group = STREAM_PERMISSION_SETTINGS[name].defaultGroupName
  return group === STREAM_CREATOR_OR_NOBODY ? G.nobody : group
}

/** The settings whose groups may see a private channel's metadata (level 349; 357 adds can_subscribe_group). */
export const STREAM_SETTINGS_GRANTING_METADATA: readonly StreamPermissionSettingName[] = ['can_add_subscribers_group', 'can_administer_channel_group', 'can_subscribe_group']
/** The settings whose groups may read a private channel's messages (level 354). */
export const STREAM_SETTINGS_GRANTING_CONTENT: readonly StreamPermissionSettingName[] = ['can_add_subscribers_group', 'can_subscribe_group']

/**
 * stream_post_policy, deprecated by level 333, derived from can_send_message_group as
 * upstream's get_stream_post_policy_value_based_on_group_setting: the policy of the
 * system group, else 1 (everyone), the closest superset.
 */
const STREAM_POST_POLICY_GROUPS: Record<number, string> = { 1: G.everyone, 2: G.administrators, 3: G.fullMembers, 4: G.moderators }
export const STREAM_POST_POLICY_ADMINS = 2
export function streamPostPolicyFor(systemGroupName: string | null): number {
  for (const [value, name] of Object.entries(STREAM_POST_POLICY_GROUPS)) if (name === systemGroupName) return Number(value)
  return 1
}
/** The system group a stream_post_policy value (still accepted on create and PATCH) stands for; undefined for an unknown value. */
export function streamPostPolicyGroup(policy: number): string | undefined {
  return STREAM_POST_POLICY_GROUPS[policy]
}

/** A group setting's default on a new group: an anonymous group of its creator (upstream's "group_creator"). */
export const GROUP_CREATOR = 'group_creator'

/** Group-level settings (NamedUserGroup.GROUP_PERMISSION_SETTINGS); every one defaults to role:nobody on system groups. */
export const GROUP_PERMISSION_SETTINGS = {
  can_add_members_group: common(GROUP_CREATOR, true, false, { defaultForSystemGroups: G.nobody }),
  can_join_group: common(G.nobody, true, false, { defaultForSystemGroups: G.nobody }),
  can_leave_group: common(G.everyone, true, true, { defaultForSystemGroups: G.nobody }),
  can_manage_group: common(GROUP_CREATOR, true, false, { defaultForSystemGroups: G.nobody }),
  can_mention_group: common(G.everyone, true, true, { defaultForSystemGroups: G.nobody }),
  can_remove_members_group: common(G.nobody, true, false, { defaultForSystemGroups: G.nobody }),
} as const satisfies Record<string, GroupPermissionConfig>

export type GroupPermissionSettingName = keyof typeof GROUP_PERMISSION_SETTINGS
export const GROUP_PERMISSION_SETTING_NAMES = Object.keys(GROUP_PERMISSION_SETTINGS) as GroupPermissionSettingName[]

/** The UserGroup column (Prisma field) holding a group setting: can_x_group → canXGroupId. */
export function groupSettingColumn(name: GroupPermissionSettingName): `${string}GroupId` {
  return `${name.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase())}Id` as `${string}GroupId`
}

/**
 * The system group standing for a setting a group does not store: the configured default
 * (role:nobody on system groups; for a group-creator default, which only a new group can
 * have, role:nobody).
 */
export function storedDefaultGroupName(name: GroupPermissionSettingName, isSystemGroup: boolean): string {
  const config: GroupPermissionConfig = GROUP_PERMISSION_SETTINGS[name]
  if (isSystemGroup && config.defaultForSystemGroups !== null) return config.defaultForSystemGroups
  return config.defaultGroupName === GROUP_CREATOR ? G.nobody : config.defaultGroupName
}

/** Register's server_supported_permission_settings (level 221; fields as of level 326). */
export function serverSupportedPermissionSettings(): Record<'realm' | 'stream' | 'group', Record<string, Record<string, unknown>>> {
  const present = (entries: [string, GroupPermissionConfig][]) => Object.fromEntries(entries.map(([name, config]) => [name, presentPermissionConfig(config)]))
  return {
    realm: present(Object.entries(REALM_PERMISSION_SETTINGS).map(([name, def]) => [name, def.config])),
    stream: present(Object.entries(STREAM_PERMISSION_SETTINGS)),
    group: present(Object.entries(GROUP_PERMISSION_SETTINGS)),
  }
}

// ---------------------------------------------------------------- deprecated policies

/** The integer policies of realm settings (upstream's COMMON_POLICY_TYPES and friends). */
const COMMON_POLICY_GROUPS: Record<number, string> = {
  1: G.members,
  2: G.administrators,
  3: G.fullMembers,
  4: G.moderators,
  5: G.everyone,
  6: G.nobody,
  7: G.owners,
}
/** wildcard_mention_policy numbers its values differently. */
const WILDCARD_POLICY_GROUPS: Record<number, string> = {
  1: G.everyone,
  2: G.members,
  3: G.fullMembers,
  5: G.administrators,
  6: G.nobody,
  7: G.moderators,
}

export interface LegacyPolicy {
  /** The group setting it stands for now. */
  setting: RealmPermissionSettingName
  /** Policy value → system group name, limited to the values the policy accepted. */
  groups: Record<number, string>
  /** The value reported when the setting holds no group the policy can name. */
  fallback: number
  /** Sent as `realm` `update_dict` rather than `update` (as upstream 9.0 did). */
  dict?: boolean
  ownerOnly?: boolean
}

const pick = (values: number[], table: Record<number, string> = COMMON_POLICY_GROUPS): Record<number, string> =>
  Object.fromEntries(values.map((v) => [v, table[v] as string]))

/** The spec's realm `*_policy` settings, each now a view of one group setting (bot_creation_policy is separate). */
export const LEGACY_POLICIES: Readonly<Record<string, LegacyPolicy>> = {
  edit_topic_policy: { setting: 'can_move_messages_between_topics_group', groups: pick([1, 2, 3, 4, 5, 6]), fallback: 5, dict: true },
  move_messages_between_streams_policy: { setting: 'can_move_messages_between_channels_group', groups: pick([1, 2, 3, 4, 6]), fallback: 1 },
  delete_own_message_policy: { setting: 'can_delete_own_message_group', groups: pick([1, 2, 3, 4, 5]), fallback: 5 },
  wildcard_mention_policy: { setting: 'can_mention_many_users_group', groups: WILDCARD_POLICY_GROUPS, fallback: 1 },
  invite_to_realm_policy: { setting: 'can_invite_users_group', groups: pick([1, 2, 3, 4, 6]), fallback: 1, ownerOnly: true },
  invite_to_stream_policy: { setting: 'can_add_subscribers_group', groups: pick([1, 2, 3, 4]), fallback: 1 },
  user_group_edit_policy: { setting: 'can_create_groups', groups: pick([1, 2, 3, 4]), fallback: 1 },
  add_custom_emoji_policy: { setting: 'can_add_custom_emoji_group', groups: pick([1, 2, 3, 4]), fallback: 1 },
  create_web_public_stream_policy: { setting: 'can_create_web_public_channel_group', groups: pick([2, 4, 6, 7]), fallback: 4 },
}

/** Register-only deprecated policies (levels 264–280): derived, never set. */
export const DERIVED_ONLY_POLICIES: Readonly<Record<string, LegacyPolicy>> = {
  create_public_stream_policy: { setting: 'can_create_public_channel_group', groups: pick([1, 2, 3, 4]), fallback: 1 },
  create_private_stream_policy: { setting: 'can_create_private_channel_group', groups: pick([1, 2, 3, 4]), fallback: 1 },
}

/** The policy value for the system group a setting holds (null: an anonymous or user-defined group). */
export function policyForGroup(policy: LegacyPolicy, systemGroupName: string | null): number {
  if (systemGroupName !== null) {
    for (const [value, name] of Object.entries(policy.groups)) if (name === systemGroupName) return Number(value)
  }
  return policy.fallback
}

/** bot_creation_policy: 1 everyone (members) creates any bot, 2 only generic bots, 3 administrators only. */
export const BOT_CREATION_POLICY = { EVERYONE: 1, LIMITED: 2, ADMINS_ONLY: 3 } as const
export function botCreationPolicyFor(botsGroup: string | null, writeOnlyGroup: string | null): number {
  const broad = (name: string | null) => name === G.members || name === G.everyone || name === G.fullMembers
  if (broad(botsGroup)) return BOT_CREATION_POLICY.EVERYONE
  if (broad(writeOnlyGroup)) return BOT_CREATION_POLICY.LIMITED
  return BOT_CREATION_POLICY.ADMINS_ONLY
}
/** The groups a bot_creation_policy value stands for. */
export function botCreationGroups(policy: number): { can_create_bots_group: string; can_create_write_only_bots_group: string } {
  if (policy === BOT_CREATION_POLICY.EVERYONE) return { can_create_bots_group: G.members, can_create_write_only_bots_group: G.members }
  if (policy === BOT_CREATION_POLICY.LIMITED) return { can_create_bots_group: G.administrators, can_create_write_only_bots_group: G.members }
  return { can_create_bots_group: G.administrators, can_create_write_only_bots_group: G.administrators }
}
