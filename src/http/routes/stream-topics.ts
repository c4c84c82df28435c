// GET /users/me/{stream_id}/topics: a channel's topics, newest first.
import { Type } from 'typebox'
import { route } from '../route.js'
import { optional } from '../params.js'
import { getStreamTopics } from '../../queries/stream-topics.js'

export const routes = [
  route({
    method: 'GET',
    url: '/users/me/:stream_id/topics',
    params: { stream_id: Type.Integer(), allow_empty_topic_name: optional(Type.Boolean(), { default: false }) },
    handler: async (input, ctx) => ({ topics: await getStreamTopics(ctx, input.stream_id, input.allow_empty_topic_name ?? false) }),
  }),
]
