// PATCH /streams/{stream_id} (upstream zerver/views/streams.py
// update_stream_backend and the do_change_stream_* actions, level 372):
// name, description, privacy, default status, retention and the group
// settings (levels 320–357; `{new, old}` values; stream_post_policy and
// is_announcement_only still set can_send_message_group). Organization and
// channel administrators may change it. Every check runs before anything is
// written and all changes share one transaction; `stream` update events (and
// create/delete for users who gain or lose sight of the channel) follow the
// commit, then the Notification Bot posts its notices in "channel events".
import { holdsRealmPermission } from '../queries/realm-permissions.js'
import { streamCreateEvent, streamDeleteEvent, streamUpdateEvent, subscriptionPeerEvent } from '../events/schemas/index.js'
import type { Stream, Tx } from '../db/index.js'
import type { ActionContext, Emit } from './context.js'
import { inTransaction } from './context.js'
import {
  defaultStreamCannotBePrivate,
  moderationChannelMustBePrivate,
  insufficientPermission,
  invalidParameters,
  mustBeAdmin,
  invalidPolicyValue,
  invalidStreamId,
  mustBeOwner,
  streamAlreadyHasName,
  streamNameInUse,
  webPublicStreamsDisabled,
} from '../errors.js'
import { isAdmin, isOwner } from '../domain/roles.js'
import { canAccessStreamContent } from '../domain/stream-access.js'
import { checkGroupSettingChange, parseGroupSettingChange, type GroupSettingChange, type GroupSettingValue } from '../domain/group-setting-value.js'
import {
  STREAM_PERMISSION_SETTING_NAMES,
  STREAM_PERMISSION_SETTINGS,
  STREAM_POST_POLICY_ADMINS,
  STREAM_SETTINGS_GRANTING_CONTENT,
  streamPostPolicyGroup,
  streamSettingColumn,
  type StreamPermissionSettingName,
} from '../domain/permission-settings.js'
import { getStreamGroupContext, metadataGranteesByStream, storedStreamSettingGroupId, streamSettingsWire, type StreamGroupContext } from '../queries/stream-permissions.js'
import { dropReplacedAnonymousGroups, storeGroupSettingValue } from './group-setting-values.js'
import { accessStreamForUpdate, streamAudience, streamNameTaken, type AudienceUser } from '../access/stream-admin.js'
import { checkStreamName, parseMessageRetentionDays } from './create-streams.js'
import { renderPlainDescription } from './render-description.js'
import { emitDefaultStreams, setDefaultStream } from './default-streams.js'
import { presentStream } from '../present/stream.js'
import { sendNotificationBotMessage } from './notification-bot.js'
import { CHANNEL_EVENTS_TOPIC } from './subscription-notifications.js'
import {
  descriptionChangedNotice,
  postingPermissionChangedNotice,
  type SettingHolders,
  privacyChangedNotice,
  renamedNotice,
  retentionChangedNotice,
} from '../domain/stream-notices.js'

export interface UpdateStreamInput {
  streamId: number
  newName?: string
  description?: string
  isPrivate?: boolean
  isWebPublic?: boolean
  historyPublicToSubscribers?: boolean
  isDefaultStream?: boolean
  /** Deprecated by level 333: set can_send_message_group's system group. */
  streamPostPolicy?: number
  isAnnouncementOnly?: boolean
  messageRetentionDays?: string | number
  /** The group settings' raw values (`{new, old?}` or a bare value), parsed here. */
  groupSettings?: Partial<Record<StreamPermissionSettingName, unknown>>
}

type Changes = Partial<Pick<Stream, 'name' | 'description' | 'renderedDescription' | 'inviteOnly' | 'isWebPublic' | 'historyPublicToSubscribers' | 'messageRetentionDays' | StreamGroupColumn>>
type StreamGroupColumn = 'canRemoveSubscribersGroupId' | 'canSendMessageGroupId' | 'canAdministerChannelGroupId' | 'canAddSubscribersGroupId' | 'canSubscribeGroupId'

/** The group-setting changes a request asks for: explicit ones, then stream_post_policy / is_announcement_only. */
function groupChangesOf(input: UpdateStreamInput, systemIds: ReadonlyMap<string, number>): Map<StreamPermissionSettingName, GroupSettingChange> {
  const out = new Map<StreamPermissionSettingName, GroupSettingChange>()
  for (const name of STREAM_PERMISSION_SETTING_NAMES) {
    const raw = input.groupSettings?.[name]
    if (raw !== undefined) out.set(name, parseGroupSettingChange(raw, name))
  }
  let policy = input.streamPostPolicy
  if (policy !== undefined && streamPostPolicyGroup(policy) === undefined) throw invalidPolicyValue('stream_post_policy')
  if (policy === undefined && input.isAnnouncementOnly !== undefined) policy = input.isAnnouncementOnly ? STREAM_POST_POLICY_ADMINS : 1
  if (policy !== undefined && !out.has('can_send_message_group')) {
    out.set('can_send_message_group', { new: systemIds.get(streamPostPolicyGroup(policy) as string) ?? 0 })
  }
  return out
}

export async function updateStream(ctx: ActionContext, input: UpdateStreamInput): Promise<void> {
  const notices: string[] = []
  const archived = await inTransaction(ctx, async (tx, emit) => {
    const { stream, subscription, grants } = await accessStreamForUpdate(tx, ctx.user, input.streamId)
    const contentAccess = canAccessStreamContent(ctx.user, stream, subscription !== null, grants)
    const changes: Changes = {}
    if (input.isDefaultStream !== undefined && !isAdmin(ctx.user.role)) throw mustBeAdmin()
    const isDefault = input.isDefaultStream ?? (await tx.defaultStream.count({ where: { streamId: stream.id } })) > 0

    // Privacy: the proposed combination must be one upstream allows.
    const privacyAsked = input.isPrivate !== undefined || input.isWebPublic !== undefined || input.historyPublicToSubscribers !== undefined
    const inviteOnly = input.isPrivate ?? stream.inviteOnly
    const isWebPublic = input.isWebPublic ?? stream.isWebPublic
    const history = input.historyPublicToSubscribers ?? (input.isPrivate !== undefined ? !input.isPrivate : stream.historyPublicToSubscribers)
    if (isWebPublic && (!history || inviteOnly)) throw invalidParameters()
    if (!inviteOnly && !history) throw invalidParameters()
    if (inviteOnly && isDefault) throw defaultStreamCannotBePrivate()
    if (!inviteOnly && ctx.realm.moderationRequestChannelId === stream.id) throw moderationChannelMustBePrivate()
    // Making a private channel public needs content access, even for administrators.
    if (input.isPrivate !== undefined && !contentAccess) throw invalidStreamId()
    if (input.isWebPublic === true) {
      if (!ctx.realm.webPublicAccessEnabled) throw webPublicStreamsDisabled()
      if (!(await holdsRealmPermission(tx, ctx.realm, ctx.user, 'can_create_web_public_channel_group', ctx.now()))) throw insufficientPermission()
    }
    if (privacyAsked) Object.assign(changes, { inviteOnly, isWebPublic, historyPublicToSubscribers: history })

    if (input.messageRetentionDays !== undefined) {
      if (!isOwner(ctx.user.role)) throw mustBeOwner()
      changes.messageRetentionDays = parseMessageRetentionDays(input.messageRetentionDays)
    }
    if (input.description !== undefined) {
      const description = input.description.replace(/\r?\n/g, ' ')
      Object.assign(changes, { description, renderedDescription: renderPlainDescription(description) })
    }
    if (input.newName !== undefined) {
      const name = input.newName.trim()
      if (name === stream.name) throw streamAlreadyHasName()
      checkStreamName(name)
      // Changing only the case of the name keeps it.
      if (name.toLowerCase() !== stream.name.toLowerCase() && (await streamNameTaken(tx, ctx.realm.id, name, stream.id))) throw streamNameInUse()
      changes.name = name
    }
    const groupsBefore = await getStreamGroupContext(tx, ctx.realm.id, [stream])
    // Read before any anonymous group is rewritten in place.
    const granteesBefore = (await metadataGranteesByStream(tx, ctx.realm.id, [stream])).get(stream.id)
    const groupChanges = groupChangesOf(input, groupsBefore.systemIds)
    const groupEvents: [StreamPermissionSettingName, GroupSettingValue][] = []
    for (const [name, change] of groupChanges) {
      const current = streamSettingsWire(groupsBefore, stream)[name]
      if (!checkGroupSettingChange(current, change)) continue
      // Settings that grant content access need it (upstream: Invalid channel ID).
      if (STREAM_SETTINGS_GRANTING_CONTENT.includes(name) && !contentAccess) throw invalidStreamId()
      const column = streamSettingColumn(name) as StreamGroupColumn
      changes[column] = await storeGroupSettingValue(tx, {
        realmId: ctx.realm.id,
        setting: name,
        config: STREAM_PERMISSION_SETTINGS[name],
        value: change.new,
        currentGroupId: storedStreamSettingGroupId(stream, name),
      })
      groupEvents.push([name, change.new])
    }

    const after = await tx.stream.update({ where: { id: stream.id }, data: changes })
    await dropReplacedAnonymousGroups(
      tx,
      groupEvents.map(([name]) => storedStreamSettingGroupId(stream, name)),
      STREAM_PERMISSION_SETTING_NAMES.map((name) => storedStreamSettingGroupId(after, name)).filter((id): id is number => id !== null),
    )
    const users: AudienceUser[] = await tx.user.findMany({ where: { realmId: ctx.realm.id, isActive: true }, select: { id: true, role: true } })
    const subscribers = new Set(
      (await tx.subscription.findMany({ where: { streamId: stream.id, active: true }, select: { userId: true } })).map((s) => s.userId),
    )
    const granteesAfter = (await metadataGranteesByStream(tx, ctx.realm.id, [after])).get(stream.id)
    const groupsAfter = await getStreamGroupContext(tx, ctx.realm.id, [after])
    // Users who gain sight of the channel get `stream create` with its new state; those who lose it `stream delete`.
    const created = emitVisibilityChanges(emit, {
      before: { stream, audience: streamAudience(users, stream, subscribers, granteesBefore), groups: groupsBefore },
      after: { stream: after, audience: streamAudience(users, after, subscribers, granteesAfter), groups: groupsAfter },
      subscribers,
    })
    const audience = streamAudience(users, after, subscribers, granteesAfter).filter((id) => !created.has(id))
    const actor = ctx.user
    const update = (
      property: string,
      value: boolean | number | string | null | GroupSettingValue,
      extra: { rendered_description?: string; history_public_to_subscribers?: boolean; is_web_public?: boolean } = {},
    ) => emit(streamUpdateEvent({ id: stream.id, name: after.name }, property, value, extra), audience)

    if (privacyAsked && (stream.inviteOnly !== inviteOnly || stream.isWebPublic !== isWebPublic || stream.historyPublicToSubscribers !== history)) {
      update('invite_only', inviteOnly, { history_public_to_subscribers: history, is_web_public: isWebPublic })
      notices.push(privacyChangedNotice(actor, stream, after))
    }
    if (input.isDefaultStream !== undefined && (await setDefaultStream(tx, ctx.realm, after, input.isDefaultStream))) await emitDefaultStreams(tx, emit, ctx.realm)
    if (changes.messageRetentionDays !== undefined && changes.messageRetentionDays !== stream.messageRetentionDays) {
      update('message_retention_days', changes.messageRetentionDays)
      notices.push(retentionChangedNotice(actor, stream.messageRetentionDays, changes.messageRetentionDays, ctx.realm.messageRetentionDays))
    }
    if (changes.description !== undefined && changes.description !== stream.description) {
      update('description', after.description, { rendered_description: after.renderedDescription })
      notices.push(descriptionChangedNotice(actor, stream.description, after.description))
    }
    if (changes.name !== undefined) {
      emit(streamUpdateEvent(stream, 'name', after.name), audience)
      notices.push(renamedNotice(actor, stream.name, after.name))
    }
    const wireBefore = streamSettingsWire(groupsBefore, stream)
    const wireAfter = streamSettingsWire(groupsAfter, after)
    for (const [name] of groupEvents) {
      update(name, wireAfter[name])
      if (name !== 'can_send_message_group') continue
      if (wireAfter.stream_post_policy !== wireBefore.stream_post_policy) {
        update('stream_post_policy', wireAfter.stream_post_policy)
        // Legacy clients still read is_announcement_only.
        update('is_announcement_only', wireAfter.stream_post_policy === STREAM_POST_POLICY_ADMINS)
      }
      const [old, now] = await settingHolders(tx, [wireBefore.can_send_message_group, wireAfter.can_send_message_group])
      notices.push(postingPermissionChangedNotice(actor, old as SettingHolders, now as SettingHolders))
    }
    return stream.deactivated
  })
  // An archived channel still gets its notices (upstream archived_channel_notice).
  for (const content of notices) await sendNotificationBotMessage(ctx, { streamId: input.streamId, topic: CHANNEL_EVENTS_TOPIC, content, archivedChannelNotice: archived })
}

interface AudienceState {
  stream: Stream
  audience: number[]
  groups: StreamGroupContext
}
interface VisibilityChange {
  before: AudienceState
  after: AudienceState
  subscribers: ReadonlySet<number>
}

/**
 * Users who could not see the channel and now can get `stream create` (and
 * its subscribers as peer_add); users who could and no longer can get
 * `stream delete`. Returns who got the create event.
 */
function emitVisibilityChanges(emit: Emit, { before, after, subscribers }: VisibilityChange): Set<number> {
  const was = new Set(before.audience)
  const now = new Set(after.audience)
  const gained = [...now].filter((id) => !was.has(id))
  const lost = [...was].filter((id) => !now.has(id))
  if (gained.length > 0) {
    emit(streamCreateEvent([presentStream(after.stream, after.groups)]), gained)
    if (subscribers.size > 0) {
      emit(subscriptionPeerEvent('peer_add', [after.stream.id], [...subscribers].sort((a, b) => a - b)), gained)
    }
  }
  if (lost.length > 0) emit(streamDeleteEvent([presentStream(before.stream, before.groups)]), lost)
  return new Set(gained)
}

/** The groups and users of group-setting values, for notices. */
async function settingHolders(tx: Tx, values: GroupSettingValue[]): Promise<SettingHolders[]> {
  const groupIds = values.flatMap((v) => (typeof v === 'number' ? [v] : v.direct_subgroups))
  const userIds = values.flatMap((v) => (typeof v === 'number' ? [] : v.direct_members))
  const [groups, users] = await Promise.all([
    tx.userGroup.findMany({ where: { id: { in: groupIds } }, select: { id: true, name: true } }),
    tx.user.findMany({ where: { id: { in: userIds } }, select: { id: true, fullName: true } }),
  ])
  return values.map((v) => ({
    groups: groups.filter((g) => (typeof v === 'number' ? g.id === v : v.direct_subgroups.includes(g.id))),
    users: typeof v === 'number' ? [] : users.filter((u) => v.direct_members.includes(u.id)),
  }))
}
