// GET /users/me/{stream_id}/topics: a channel's topics, newest first.
import { Type } from 'typebox'
import { route } from '../route.js'
import { getStreamTopics } from '../../queries/stream-topics.js'

export const routes = [
  route({
    method: 'GET',
    url: '/users/me/:stream_id/topics',
    params: { stream_id: Type.Integer() },
    handler: async (input, ctx) => ({ topics: await getStreamTopics(ctx, input.stream_id) }),
  }),
]
