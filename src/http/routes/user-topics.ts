// POST /user_topics (spec "Update personal preferences for a topic").
import { Type } from 'typebox'
import { route } from '../route.js'
import { setTopicVisibility } from '../../actions/set-topic-visibility.js'
import { updateMutedTopic } from '../../actions/update-muted-topic.js'
import { optional } from '../params.js'
import { MAX_STREAM_NAME_LENGTH, MAX_TOPIC_LENGTH } from '../../domain/limits.js'

export const routes = [
  route({
    method: 'POST',
    url: '/user_topics',
    params: {
      stream_id: Type.Integer(),
      topic: Type.String({ maxLength: MAX_TOPIC_LENGTH }),
      visibility_policy: Type.Union([0, 1, 2, 3].map((v) => Type.Literal(v))),
    },
    handler: async (input, ctx) => {
      await setTopicVisibility(ctx, input)
      return {}
    },
  }),

  // The legacy form (deprecated at feature level 170).
  route({
    method: 'PATCH',
    url: '/users/me/subscriptions/muted_topics',
    params: {
      stream_id: optional(Type.Integer()),
      stream: optional(Type.String({ maxLength: MAX_STREAM_NAME_LENGTH })),
      topic: Type.String({ maxLength: MAX_TOPIC_LENGTH }),
      op: Type.Union([Type.Literal('add'), Type.Literal('remove')]),
    },
    handler: async (input, ctx) => {
      await updateMutedTopic(ctx, { op: input.op, topic: input.topic, streamId: input.stream_id, streamName: input.stream })
      return {}
    },
  }),
]
