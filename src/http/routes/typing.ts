import { Type } from 'typebox'
import { route } from '../route.js'
import { json, optional } from '../params.js'
import { sendTypingNotification } from '../../actions/send-typing-notification.js'
import { badRequest, missingArgument } from '../../errors.js'
import { MAX_USERS_PER_REQUEST } from '../../domain/limits.js'

export const routes = [
  route({
    method: 'POST',
    url: '/typing',
    params: {
      type: optional(Type.Union([Type.Literal('direct'), Type.Literal('private'), Type.Literal('stream'), Type.Literal('channel')]), { default: 'direct' }),
      op: Type.Union([Type.Literal('start'), Type.Literal('stop')]),
      to: optional(json(Type.Array(Type.Integer(), { maxItems: MAX_USERS_PER_REQUEST }))),
      stream_id: optional(Type.Integer()),
      topic: optional(Type.String()),
    },
    handler: async (input, ctx) => {
      if (input.type === 'stream' || input.type === 'channel') {
        if (input.stream_id === undefined) throw missingArgument('stream_id')
        if (input.topic === undefined) throw badRequest('Missing topic')
        await sendTypingNotification(ctx, { kind: 'stream', op: input.op, streamId: input.stream_id, topic: input.topic })
      } else {
        if (input.to === undefined) throw missingArgument('to')
        await sendTypingNotification(ctx, { kind: 'direct', op: input.op, to: input.to })
      }
      return {}
    },
  }),
]
