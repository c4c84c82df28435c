// PATCH /users/me/subscriptions/muted_topics, the legacy form of POST
// /user_topics (upstream views/user_topics.py update_muted_topic, 9.0): the
// channel by `stream_id` or by name (`stream`), exactly one of them; `add`
// sets the topic's visibility policy to muted, `remove` back to inherit.
// Since feature level 170 neither is an error when nothing changes (then
// no event is sent). Removing needs only a channel of the organization,
// accessible or not ("Topic is not muted" otherwise), as upstream.
import type { ActionContext } from './context.js'
import { inTransaction } from './context.js'
import type { Stream } from '../db/index.js'
import { ApiError, incompatibleParameters, invalidStreamName, missingOneOf, topicNotMuted } from '../errors.js'
import { accessStreamById, findStreamByName } from '../access/stream.js'
import { fetchMutedTopics } from '../queries/user-topics.js'
import { mutedTopicsEvent } from '../events/schemas/index.js'
import { VISIBILITY_POLICY, saveTopicPolicy, userTopicEvent } from './set-topic-visibility.js'

export interface UpdateMutedTopicInput {
  op: 'add' | 'remove'
  topic: string
  streamId?: number
  streamName?: string
}

async function channelToMute(ctx: ActionContext, input: UpdateMutedTopicInput): Promise<Stream> {
  if (input.streamId !== undefined) return (await accessStreamById(ctx, input.streamId)).stream
  const name = input.streamName ?? ''
  const found = await findStreamByName(ctx.prisma, ctx.realm.id, name)
  if (!found) throw invalidStreamName(name)
  try {
    return (await accessStreamById(ctx, found.id)).stream
  } catch (err) {
    if (err instanceof ApiError) throw invalidStreamName(name)
    throw err
  }
}

async function channelToUnmute(ctx: ActionContext, input: UpdateMutedTopicInput): Promise<Stream> {
  const stream =
    input.streamId !== undefined
      ? await ctx.prisma.stream.findFirst({ where: { id: input.streamId, realmId: ctx.realm.id } })
      : await findStreamByName(ctx.prisma, ctx.realm.id, input.streamName ?? '')
  if (!stream) throw topicNotMuted()
  return stream
}

export async function updateMutedTopic(ctx: ActionContext, input: UpdateMutedTopicInput): Promise<void> {
  if (input.streamId === undefined && input.streamName === undefined) throw missingOneOf('stream_id')
  if (input.streamId !== undefined && input.streamName !== undefined) throw incompatibleParameters(['stream_id', 'stream'])
  const adding = input.op === 'add'
  const stream = adding ? await channelToMute(ctx, input) : await channelToUnmute(ctx, input)
  const policy = adding ? VISIBILITY_POLICY.MUTED : VISIBILITY_POLICY.INHERIT
  const topic = input.topic.trim()
  const now = ctx.now()
  await inTransaction(ctx, async (tx, emit) => {
    const changed = await saveTopicPolicy(tx, { userId: ctx.user.id, streamId: stream.id, topic, policy, now })
    if (!changed) return
    emit(mutedTopicsEvent(await fetchMutedTopics(tx, ctx.user.id)), [ctx.user.id])
    emit(userTopicEvent(stream.id, topic, policy, now), [ctx.user.id])
  })
}
