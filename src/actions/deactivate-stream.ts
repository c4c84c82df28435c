// DELETE /streams/{stream_id}: archive a channel as upstream's
// do_deactivate_stream does since 10.0 (levels 315, 362, 378). The channel
// keeps its name, its subscribers and who may see it; it leaves the default
// channels and the organization's announcement and moderation-request
// channels (realm update_dict, each set to -1), takes no more messages (send-message.ts) and its messages can no
// longer be edited, deleted or reacted to (access/message.ts), while its
// history stays readable. Everyone who could see it is told twice, and each
// queue keeps one of the two (events/queues/filter.ts): stream update
// {is_archived: true} for clients with the archived_channels capability, stream
// delete for the others. Then the notification bot posts the archive notice
// in the channel, read by everyone.
import type { ActionContext } from './context.js'
import { inTransaction } from './context.js'
import { accessStreamForUpdate, streamAudience, type AudienceUser } from '../access/stream-admin.js'
import { streamAlreadyDeactivated } from '../errors.js'
import { presentStream } from '../present/stream.js'
import { getStreamGroupContext, metadataGranteesByStream } from '../queries/stream-permissions.js'
import { realmUpdateDictEvent, streamDeleteEvent, streamUpdateEvent } from '../events/schemas/index.js'
import { emitDefaultStreams, setDefaultStream } from './default-streams.js'
import { sendNotificationBotMessage } from './notification-bot.js'
import { CHANNEL_EVENTS_TOPIC } from './subscription-notifications.js'

/** The organization's settings that name a channel, by wire name and column. */
const REALM_CHANNELS = [
  ['moderation_request_channel_id', 'moderationRequestChannelId'],
  ['new_stream_announcements_stream_id', 'newStreamAnnouncementsStreamId'],
  ['signup_announcements_stream_id', 'signupAnnouncementsStreamId'],
] as const

export async function deactivateStream(ctx: ActionContext, streamId: number): Promise<void> {
  const stream = await inTransaction(ctx, async (tx, emit) => {
    const { stream } = await accessStreamForUpdate(tx, ctx.user, streamId)
    // Archived once; a concurrent request waits on the row and then finds it archived.
    const [locked] = await tx.$queryRaw<{ deactivated: boolean }[]>`SELECT deactivated FROM stream WHERE id = ${stream.id} FOR UPDATE`
    if (locked?.deactivated !== false) throw streamAlreadyDeactivated()
    const users: AudienceUser[] = await tx.user.findMany({ where: { realmId: ctx.realm.id, isActive: true }, select: { id: true, role: true } })
    const subscribers = await tx.subscription.findMany({ where: { streamId: stream.id, active: true }, select: { userId: true } })
    const groups = await getStreamGroupContext(tx, ctx.realm.id, [stream])
    const grantees = (await metadataGranteesByStream(tx, ctx.realm.id, [stream])).get(stream.id)
    const audience = streamAudience(users, stream, new Set(subscribers.map((s) => s.userId)), grantees)

    const archived = await tx.stream.update({ where: { id: stream.id }, data: { deactivated: true } })
    if (await setDefaultStream(tx, ctx.realm, stream, false)) await emitDefaultStreams(tx, emit, ctx.realm)
    // Upstream's maybe_set_moderation_or_announcement_channels_none.
    const realm = await tx.realm.findUniqueOrThrow({ where: { id: ctx.realm.id } })
    const cleared = REALM_CHANNELS.filter(([, column]) => realm[column] === stream.id)
    if (cleared.length > 0) {
      await tx.realm.update({ where: { id: realm.id }, data: Object.fromEntries(cleared.map(([, column]) => [column, null])) })
      emit(realmUpdateDictEvent(Object.fromEntries(cleared.map(([name]) => [name, -1]))), users.map((u) => u.id))
    }
    emit(streamUpdateEvent(archived, 'is_archived', true), audience)
    emit(streamDeleteEvent([presentStream(archived, groups)], { forArchiving: true }), audience)
    return archived
  })
  await sendNotificationBotMessage(ctx, {
    streamId: stream.id,
    topic: CHANNEL_EVENTS_TOPIC,
    content: `Channel #**${stream.name}** has been archived.`,
    unreadUserIds: [],
    archivedChannelNotice: true,
  })
}
