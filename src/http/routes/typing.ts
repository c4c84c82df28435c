import { Type } from 'typebox'
import { route } from '../route.js'
import { json, optional } from '../params.js'
import { sendTypingNotification } from '../../actions/send-typing-notification.js'
import { sendEditTypingNotification } from '../../actions/send-edit-typing-notification.js'
import { badRequest, missingArgument } from '../../errors.js'
import { MAX_USERS_PER_REQUEST } from '../../domain/limits.js'

const TYPING_OP = Type.Union([Type.Literal('start'), Type.Literal('stop')])

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

  // Someone is editing a message: upstream level 361's path, and level 351's, which named the message in the body.
  ...['/messages/:message_id/typing', '/message_edit_typing'].map((url) =>
    route({
      method: 'POST',
      url,
      params: { message_id: Type.Integer(), op: TYPING_OP },
      handler: async (input, ctx) => {
        await sendEditTypingNotification(ctx, { messageId: input.message_id, op: input.op })
        return {}
      },
    }),
  ),
]
