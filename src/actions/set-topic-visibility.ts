// POST /user_topics: a user's visibility policy for one topic (spec "Topic
// visibility policy"; upstream-behaviour §5): 0 inherit (the row goes),
// 1 muted, 2 unmuted, 3 followed. Topics compare case-insensitively. Events
// only when something changed: the legacy muted_topics list, then user_topic.
import type { ActionContext } from './context.js'
import { inTransaction } from './context.js'
import type { Tx } from '../db/index.js'
import { idsMatchingLower } from '../db/exact-match.js'
import { accessStreamById } from '../access/stream.js'
import { topicFromClient } from '../domain/topics.js'
import { fetchMutedTopics } from '../queries/user-topics.js'
import { mutedTopicsEvent, userTopicEvent } from '../events/schemas/index.js'

export const VISIBILITY_POLICY = { INHERIT: 0, MUTED: 1, UNMUTED: 2, FOLLOWED: 3 } as const

export interface SetTopicVisibilityInput {
  stream_id: number
  topic: string
  visibility_policy: number
}

export { userTopicEvent }

/** Stores the policy; true when the stored state changed. */
export async function saveTopicPolicy(tx: Tx, o: { userId: number; streamId: number; topic: string; policy: number; now: Date }): Promise<boolean> {
  const ids = (await idsMatchingLower(tx, 'user_topic_name', { stream_id: o.streamId }, [o.topic])).map((r) => r.id)
  const where = { userId: o.userId, id: { in: ids } }
  if (o.policy === VISIBILITY_POLICY.INHERIT) return (await tx.userTopic.deleteMany({ where })).count > 0
  const row = await tx.userTopic.findFirst({ where })
  if (!row) {
    await tx.userTopic.create({ data: { userId: o.userId, streamId: o.streamId, topicName: o.topic, visibilityPolicy: o.policy, lastUpdated: o.now } })
    return true
  }
  if (row.visibilityPolicy === o.policy) return false
  await tx.userTopic.update({ where: { id: row.id }, data: { visibilityPolicy: o.policy, lastUpdated: o.now } })
  return true
}

export async function setTopicVisibility(ctx: ActionContext, input: SetTopicVisibilityInput): Promise<void> {
  const topic = topicFromClient(input.topic.trim())
  const now = ctx.now()
  // Removing a policy works on a channel the user lost access to, as long as there is one to remove.
  const existing =
    input.visibility_policy === VISIBILITY_POLICY.INHERIT
      ? await ctx.prisma.userTopic.count({
          where: { userId: ctx.user.id, id: { in: (await idsMatchingLower(ctx.prisma, 'user_topic_name', { stream_id: input.stream_id }, [topic])).map((r) => r.id) } },
        })
      : 0
  if (existing === 0) await accessStreamById(ctx, input.stream_id)
  await inTransaction(ctx, async (tx, emit) => {
    const changed = await saveTopicPolicy(tx, { userId: ctx.user.id, streamId: input.stream_id, topic, policy: input.visibility_policy, now })
    if (!changed) return
    emit(mutedTopicsEvent(await fetchMutedTopics(tx, ctx.user.id)), [ctx.user.id])
    emit(userTopicEvent(input.stream_id, topic, input.visibility_policy, now), [ctx.user.id])
  })
}
