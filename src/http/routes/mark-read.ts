// POST /mark_all_as_read, /mark_stream_as_read, /mark_topic_as_read
// (deprecated upstream in favour of /messages/flags/narrow; still used by
// real clients).
import { Type } from 'typebox'
import { route } from '../route.js'
import { MAX_TOPIC_LENGTH } from '../../domain/limits.js'
import { markAllAsRead, markStreamAsRead, markTopicAsRead } from '../../actions/mark-as-read.js'

export const routes = [
  route({
    method: 'POST',
    url: '/mark_all_as_read',
    handler: async (_input, ctx) => {
      const { complete } = await markAllAsRead(ctx)
      return { complete }
    },
  }),

  route({
    method: 'POST',
    url: '/mark_stream_as_read',
    params: { stream_id: Type.Integer() },
    handler: async (input, ctx) => {
      await markStreamAsRead(ctx, input.stream_id)
      return {}
    },
  }),

  route({
    method: 'POST',
    url: '/mark_topic_as_read',
    params: { stream_id: Type.Integer(), topic_name: Type.String({ maxLength: MAX_TOPIC_LENGTH }) },
    handler: async (input, ctx) => {
      await markTopicAsRead(ctx, input.stream_id, input.topic_name)
      return {}
    },
  }),
]
