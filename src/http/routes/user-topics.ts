// POST /user_topics (spec "Update personal preferences for a topic").
import { Type } from 'typebox'
import { route } from '../route.js'
import { setTopicVisibility } from '../../actions/set-topic-visibility.js'
import { MAX_TOPIC_LENGTH } from '../../domain/limits.js'

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
]
