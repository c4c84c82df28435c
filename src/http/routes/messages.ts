import { Type } from 'typebox'
import { route } from '../route.js'
import { alias, json, optional, upstreamAlias } from '../params.js'
import { sendMessage } from '../../actions/send-message.js'
import type { MessageType } from '../../actions/message-recipients.js'
import { getMessage, getMessages } from '../../queries/messages.js'
import { badRequest } from '../../errors.js'

const MESSAGE_TYPES: readonly string[] = ['direct', 'private', 'channel', 'stream']
const isMessageType = (s: string): s is MessageType => MESSAGE_TYPES.includes(s)

export const routes = [
  route({
    method: 'POST',
    url: '/messages',
    params: {
      type: Type.String(),
      to: optional(Type.String()),
      topic: optional(alias(Type.String(), 'subject')),
      content: Type.String(),
      read_by_sender: optional(Type.Boolean()),
      queue_id: optional(Type.String()),
      local_id: optional(Type.String()),
    },
    handler: async (input, ctx) => {
      if (!isMessageType(input.type)) throw badRequest('Invalid message type')
      return sendMessage(ctx, {
        type: input.type,
        to: input.to,
        topic: input.topic,
        content: input.content,
        readBySender: input.read_by_sender,
        queueId: input.queue_id,
        localId: input.local_id,
      })
    },
  }),

  route({
    method: 'GET',
    url: '/messages',
    params: {
      anchor: optional(Type.String()),
      use_first_unread_anchor: optional(Type.Boolean(), { default: false }),
      num_before: optional(Type.Integer({ minimum: 0 }), { default: 0 }),
      num_after: optional(Type.Integer({ minimum: 0 }), { default: 0 }),
      include_anchor: optional(Type.Boolean(), { default: true }),
      narrow: optional(json(Type.Unknown()), { default: [] }),
      apply_markdown: optional(Type.Boolean(), { default: true }),
      client_extavatar: optional(upstreamAlias(Type.Boolean(), 'client_gravatar'), { default: true }),
      // At most MAX_MESSAGES_PER_FETCH, checked with upstream's error after the parameter combination.
      message_ids: optional(json(Type.Array(Type.Integer({ minimum: 0 })))),
      allow_empty_topic_name: optional(Type.Boolean(), { default: false }),
    },
    handler: async (input, ctx) => {
      const result = await getMessages(ctx, {
        messageIds: input.message_ids,
        anchor: input.anchor,
        useFirstUnreadAnchor: input.use_first_unread_anchor,
        numBefore: input.num_before ?? 0,
        numAfter: input.num_after ?? 0,
        includeAnchor: input.include_anchor ?? true,
        narrow: input.narrow,
        applyMarkdown: input.apply_markdown ?? true,
        clientExtavatar: input.client_extavatar ?? true,
        allowEmptyTopicName: input.allow_empty_topic_name ?? false,
      })
      return { ...result }
    },
  }),

  route({
    method: 'GET',
    url: '/messages/:message_id',
    params: {
      message_id: Type.Integer(),
      apply_markdown: optional(Type.Boolean(), { default: true }),
      allow_empty_topic_name: optional(Type.Boolean(), { default: false }),
    },
    handler: async (input, ctx) =>
      getMessage(ctx, input.message_id, { applyMarkdown: input.apply_markdown ?? true, allowEmptyTopicName: input.allow_empty_topic_name ?? false }),
  }),
]
