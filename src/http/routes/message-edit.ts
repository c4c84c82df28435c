// PATCH /messages/{message_id} (spec "Edit a message") and DELETE /messages/{message_id}.
import { Type } from 'typebox'
import { route } from '../route.js'
import { alias, optional } from '../params.js'
import { editMessage } from '../../actions/edit-message.js'
import { deleteMessage } from '../../actions/delete-message.js'
import { PROPAGATE_MODES } from '../../domain/message-edit.js'

export const routes = [
  route({
    method: 'PATCH',
    url: '/messages/:message_id',
    params: {
      message_id: Type.Integer(),
      topic: optional(alias(Type.String(), 'subject')),
      propagate_mode: optional(Type.Union(PROPAGATE_MODES.map((m) => Type.Literal(m))), { default: 'change_one' }),
      send_notification_to_old_thread: optional(Type.Boolean(), { default: false }),
      send_notification_to_new_thread: optional(Type.Boolean(), { default: true }),
      content: optional(Type.String()),
      stream_id: optional(Type.Integer()),
    },
    handler: async (input, ctx) =>
      editMessage(ctx, {
        messageId: input.message_id,
        content: input.content,
        topic: input.topic,
        streamId: input.stream_id,
        propagateMode: input.propagate_mode ?? 'change_one',
        sendNotificationToOldThread: input.send_notification_to_old_thread ?? false,
        sendNotificationToNewThread: input.send_notification_to_new_thread ?? true,
      }),
  }),

  route({
    method: 'DELETE',
    url: '/messages/:message_id',
    params: { message_id: Type.Integer() },
    handler: async (input, ctx) => {
      await deleteMessage(ctx, input.message_id)
    },
  }),
]
