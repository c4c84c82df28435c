// A channel's group permission settings as the API shows them (pure): the
// group each stores (an empty column stands for the setting's default system
// group), their wire values, and the deprecated stream_post_policy derived
// from can_send_message_group. queries/stream-permissions.ts loads the context.
import type { Stream } from '../db/index.js'
import type { GroupSettingValue } from './group-setting-value.js'
import { streamPostPolicyFor, streamSettingColumn, streamSettingFallbackGroup, type StreamPermissionSettingName } from './permission-settings.js'
import type { GrantingGroups } from './stream-access.js'

export type StreamGroupColumns = Pick<
  Stream,
  'canRemoveSubscribersGroupId' | 'canSendMessageGroupId' | 'canAdministerChannelGroupId' | 'canAddSubscribersGroupId' | 'canSubscribeGroupId'
>

/** What presenting channels' settings needs: the realm's system groups and the wire value of every stored group. */
export interface StreamGroupContext {
  systemIds: ReadonlyMap<string, number>
  systemNames: ReadonlyMap<number, string>
  values: ReadonlyMap<number, GroupSettingValue>
}

/** The group ID a channel stores for a setting (null: the column is empty). */
export function storedStreamSettingGroupId(stream: StreamGroupColumns, name: StreamPermissionSettingName): number | null {
  const value = (stream as unknown as Record<string, unknown>)[streamSettingColumn(name)]
  return typeof value === 'number' ? value : null
}

/** The group a setting stands for: the stored one, else its default system group. */
export function streamSettingGroupId(ctx: { systemIds: ReadonlyMap<string, number> }, row: StreamGroupColumns, name: StreamPermissionSettingName): number {
  return storedStreamSettingGroupId(row, name) ?? ctx.systemIds.get(streamSettingFallbackGroup(name)) ?? 0
}

export interface StreamSettingsWire {
  can_add_subscribers_group: GroupSettingValue
  can_administer_channel_group: GroupSettingValue
  can_remove_subscribers_group: GroupSettingValue
  can_send_message_group: GroupSettingValue
  can_subscribe_group: GroupSettingValue
  stream_post_policy: number
}

/** The settings' wire values and the derived stream_post_policy of one channel. */
export function streamSettingsWire(ctx: StreamGroupContext, stream: StreamGroupColumns): StreamSettingsWire {
  const value = (name: StreamPermissionSettingName): GroupSettingValue => {
    const id = streamSettingGroupId(ctx, stream, name)
    return ctx.values.get(id) ?? id
  }
  return {
    can_add_subscribers_group: value('can_add_subscribers_group'),
    can_administer_channel_group: value('can_administer_channel_group'),
    can_remove_subscribers_group: value('can_remove_subscribers_group'),
    can_send_message_group: value('can_send_message_group'),
    can_subscribe_group: value('can_subscribe_group'),
    stream_post_policy: streamPostPolicyFor(ctx.systemNames.get(streamSettingGroupId(ctx, stream, 'can_send_message_group')) ?? null),
  }
}

/** The channel's granting groups with empty columns as role:nobody (which has no members). */
export function grantingGroups(stream: StreamGroupColumns): GrantingGroups {
  return {
    canAdministerChannelGroupId: stream.canAdministerChannelGroupId,
    canAddSubscribersGroupId: stream.canAddSubscribersGroupId,
    canSubscribeGroupId: stream.canSubscribeGroupId,
  }
}

