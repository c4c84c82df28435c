// Reads about messages: edit history, read receipts, which messages match a
// narrow, and a Markdown preview (POST /messages/render, rendered exactly as
// a message the user sends).
import { Type } from 'typebox'
import { route } from '../route.js'
import { json, optional } from '../params.js'
import { MAX_MESSAGE_LENGTH } from '../../domain/limits.js'
import { renderMessageContent } from '../../actions/message-render.js'
import { getMessageHistory } from '../../queries/message-history.js'
import { getReadReceipts } from '../../queries/read-receipts.js'
import { MAX_MATCH_IDS, messagesMatchingNarrow } from '../../queries/matches-narrow.js'

export const routes = [
  route({
    method: 'GET',
    url: '/messages/:message_id/history',
    params: { message_id: Type.Integer(), allow_empty_topic_name: optional(Type.Boolean(), { default: false }) },
    handler: async (input, ctx) => ({ message_history: await getMessageHistory(ctx, input.message_id, input.allow_empty_topic_name ?? false) }),
  }),

  route({
    method: 'GET',
    url: '/messages/:message_id/read_receipts',
    params: { message_id: Type.Integer() },
    handler: async (input, ctx) => ({ user_ids: await getReadReceipts(ctx, input.message_id) }),
  }),

  route({
    method: 'GET',
    url: '/messages/matches_narrow',
    params: {
      msg_ids: json(Type.Array(Type.Integer(), { maxItems: MAX_MATCH_IDS })),
      narrow: json(Type.Unknown()),
    },
    handler: async (input, ctx) => ({ messages: await messagesMatchingNarrow(ctx, input.msg_ids, input.narrow) }),
  }),

  route({
    method: 'POST',
    url: '/messages/render',
    params: { content: Type.String({ maxLength: MAX_MESSAGE_LENGTH }) },
    handler: async (input, ctx) => {
      const rendered = await renderMessageContent(ctx.prisma, ctx.realm, ctx.user, input.content, ctx.config)
      return { rendered: rendered.html }
    },
  }),
]
