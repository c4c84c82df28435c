// PATCH /streams/{stream_id} (upstream 9.0 zerver/views/streams.py
// update_stream_backend and the do_change_stream_* actions): name,
// description, privacy, default status, retention, posting policy and
// can_remove_subscribers_group. Every check runs before anything is written
// and all changes share one transaction; `stream` update events (and
// create/delete for users who gain or lose sight of the channel) follow the
// commit, then the Notification Bot posts its notices in "channel events".
import { holdsRealmPermission } from '../queries/realm-permissions.js'
import { streamCreateEvent, streamDeleteEvent, streamUpdateEvent, subscriptionPeerEvent } from '../events/schemas/index.js'
import type { Stream } from '../db/index.js'
import type { ActionContext, Emit } from './context.js'
import { inTransaction } from './context.js'
import {
  defaultStreamCannotBePrivate,
  moderationChannelMustBePrivate,
  insufficientPermission,
  invalidParameters,
  invalidPolicyValue,
  invalidStreamId,
  mustBeOwner,
  streamAlreadyHasName,
  streamNameInUse,
  webPublicStreamsDisabled,
} from '../errors.js'
import { isOwner } from '../domain/roles.js'
import { canAccessStreamContent } from '../domain/stream-access.js'
import { accessStreamForUpdate, accessStreamSettingGroup, streamAudience, streamNameTaken, type AudienceUser } from '../access/stream-admin.js'
import { checkStreamName, parseMessageRetentionDays } from './create-streams.js'
import { renderPlainDescription } from './render-description.js'
import { emitDefaultStreams, setDefaultStream } from './default-streams.js'
import { presentStream, STREAM_POST_POLICY_ADMINS } from '../present/stream.js'
import { sendNotificationBotMessage } from './notification-bot.js'
import { CHANNEL_EVENTS_TOPIC } from './subscription-notifications.js'
import {
  descriptionChangedNotice,
  postPolicyChangedNotice,
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
  streamPostPolicy?: number
  isAnnouncementOnly?: boolean
  messageRetentionDays?: string | number
  canRemoveSubscribersGroup?: number
}

const POST_POLICIES = [1, 2, 3, 4]

type Changes = Partial<Pick<Stream, 'name' | 'description' | 'renderedDescription' | 'inviteOnly' | 'isWebPublic' | 'historyPublicToSubscribers' | 'streamPostPolicy' | 'messageRetentionDays' | 'canRemoveSubscribersGroupId'>>

export async function updateStream(ctx: ActionContext, input: UpdateStreamInput): Promise<void> {
  const notices: string[] = []
  const archived = await inTransaction(ctx, async (tx, emit) => {
    const { stream, subscription } = await accessStreamForUpdate(tx, ctx.user, input.streamId)
    const changes: Changes = {}
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
    if (input.isPrivate !== undefined && !canAccessStreamContent(ctx.user, stream, subscription !== null)) throw invalidStreamId()
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
    let postPolicy = input.streamPostPolicy
    if (postPolicy !== undefined && !POST_POLICIES.includes(postPolicy)) throw invalidPolicyValue('stream_post_policy')
    if (postPolicy === undefined && input.isAnnouncementOnly !== undefined) postPolicy = input.isAnnouncementOnly ? STREAM_POST_POLICY_ADMINS : 1
    if (postPolicy !== undefined) changes.streamPostPolicy = postPolicy
    if (input.canRemoveSubscribersGroup !== undefined && input.canRemoveSubscribersGroup !== stream.canRemoveSubscribersGroupId) {
      // Administrators may not change it for a private channel they are not in.
      if (subscription === null && stream.inviteOnly) throw invalidStreamId()
      changes.canRemoveSubscribersGroupId = await accessStreamSettingGroup(tx, ctx.realm.id, input.canRemoveSubscribersGroup, 'can_remove_subscribers_group')
    }

    const after = await tx.stream.update({ where: { id: stream.id }, data: changes })
    const users: AudienceUser[] = await tx.user.findMany({ where: { realmId: ctx.realm.id, isActive: true }, select: { id: true, role: true } })
    const subscribers = new Set(
      (await tx.subscription.findMany({ where: { streamId: stream.id, active: true }, select: { userId: true } })).map((s) => s.userId),
    )
    const audience = streamAudience(users, after, subscribers)
    const actor = ctx.user
    const update = (
      property: string,
      value: boolean | number | string | null,
      extra: { rendered_description?: string; history_public_to_subscribers?: boolean; is_web_public?: boolean } = {},
      to = audience,
    ) => emit(streamUpdateEvent({ id: stream.id, name: after.name }, property, value, extra), to)

    if (privacyAsked && (stream.inviteOnly !== inviteOnly || stream.isWebPublic !== isWebPublic || stream.historyPublicToSubscribers !== history)) {
      const created = emitVisibilityChanges(emit, { before: stream, after, users, subscribers })
      const others = audience.filter((id) => !created.has(id))
      update('invite_only', inviteOnly, { history_public_to_subscribers: history, is_web_public: isWebPublic }, others)
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
    if (changes.streamPostPolicy !== undefined && changes.streamPostPolicy !== stream.streamPostPolicy) {
      update('stream_post_policy', after.streamPostPolicy)
      // Legacy clients still read is_announcement_only.
      update('is_announcement_only', after.streamPostPolicy === STREAM_POST_POLICY_ADMINS)
      notices.push(postPolicyChangedNotice(actor, stream.streamPostPolicy, after.streamPostPolicy))
    }
    if (changes.canRemoveSubscribersGroupId !== undefined) update('can_remove_subscribers_group', after.canRemoveSubscribersGroupId)
    return stream.deactivated
  })
  // An archived channel still gets its notices (upstream archived_channel_notice).
  for (const content of notices) await sendNotificationBotMessage(ctx, { streamId: input.streamId, topic: CHANNEL_EVENTS_TOPIC, content, archivedChannelNotice: archived })
}

interface VisibilityChange {
  before: Stream
  after: Stream
  users: AudienceUser[]
  subscribers: ReadonlySet<number>
}

/**
 * Users who could not see the channel and now can get `stream create` (and
 * its subscribers as peer_add); users who could and no longer can get
 * `stream delete`. Returns who got the create event.
 */
function emitVisibilityChanges(emit: Emit, { before, after, users, subscribers }: VisibilityChange): Set<number> {
  const was = new Set(streamAudience(users, before, subscribers))
  const now = new Set(streamAudience(users, after, subscribers))
  const gained = [...now].filter((id) => !was.has(id))
  const lost = [...was].filter((id) => !now.has(id))
  if (gained.length > 0) {
    emit(streamCreateEvent([presentStream(after)]), gained)
    if (subscribers.size > 0) {
      emit(subscriptionPeerEvent('peer_add', [after.id], [...subscribers].sort((a, b) => a - b)), gained)
    }
  }
  if (lost.length > 0) emit(streamDeleteEvent([presentStream(before)]), lost)
  return new Set(gained)
}
