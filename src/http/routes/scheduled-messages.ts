// Scheduled messages: GET/POST /scheduled_messages, PATCH/DELETE /scheduled_messages/{id}.
import { Type } from 'typebox'
import { route } from '../route.js'
import { json, optional } from '../params.js'
import { createScheduledMessage, deleteScheduledMessage, editScheduledMessage } from '../../actions/scheduled-messages.js'
import { fetchScheduledMessages } from '../../queries/scheduled-messages.js'
import { MAX_USERS_PER_REQUEST } from '../../domain/limits.js'

const messageType = Type.Union([Type.Literal('direct'), Type.Literal('channel'), Type.Literal('stream'), Type.Literal('private')])
/** A channel ID, or a list of user IDs (a one-element list also names a channel). */
const recipient = json(Type.Union([Type.Integer(), Type.Array(Type.Integer(), { maxItems: MAX_USERS_PER_REQUEST })]))

export const routes = [
  route({
    method: 'GET',
    url: '/scheduled_messages',
    handler: async (_input, ctx) => ({ scheduled_messages: await fetchScheduledMessages(ctx.prisma, ctx.user.id) }),
  }),
  route({
    method: 'POST',
    url: '/scheduled_messages',
    params: {
      type: messageType,
      to: recipient,
      content: Type.String(),
      topic: optional(Type.String()),
      scheduled_delivery_timestamp: Type.Integer(),
      read_by_sender: optional(Type.Boolean()),
    },
    handler: async (input, ctx) => ({
      scheduled_message_id: await createScheduledMessage(ctx, {
        type: input.type,
        to: input.to,
        content: input.content,
        topic: input.topic,
        scheduledDeliveryTimestamp: input.scheduled_delivery_timestamp,
        readBySender: input.read_by_sender,
      }),
    }),
  }),
  route({
    method: 'PATCH',
    url: '/scheduled_messages/:scheduled_message_id',
    params: {
      scheduled_message_id: Type.Integer(),
      type: optional(messageType),
      to: optional(recipient),
      content: optional(Type.String()),
      topic: optional(Type.String()),
      scheduled_delivery_timestamp: optional(Type.Integer()),
    },
    handler: async (input, ctx) => {
      await editScheduledMessage(ctx, input.scheduled_message_id, {
        type: input.type,
        to: input.to,
        content: input.content,
        topic: input.topic,
        scheduledDeliveryTimestamp: input.scheduled_delivery_timestamp,
      })
    },
  }),
  route({
    method: 'DELETE',
    url: '/scheduled_messages/:scheduled_message_id',
    params: { scheduled_message_id: Type.Integer() },
    handler: async (input, ctx) => {
      await deleteScheduledMessage(ctx, input.scheduled_message_id)
    },
  }),
]
