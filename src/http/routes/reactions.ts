// POST and DELETE /messages/{message_id}/reactions.
import { Type } from 'typebox'
import { route } from '../route.js'
import { optional } from '../params.js'
import { reactionTypeParam } from '../../domain/upstream-names.js'
import { addReaction, removeReaction } from '../../actions/reactions.js'
import { badRequest, emojiNameRequired } from '../../errors.js'

export const routes = [
  route({
    method: 'POST',
    url: '/messages/:message_id/reactions',
    params: {
      message_id: Type.Integer(),
      emoji_name: optional(Type.String()),
      emoji_code: optional(Type.String()),
      reaction_type: optional(Type.String()),
    },
    handler: async (input, ctx) => {
      // The spec lists a missing emoji name under BAD_REQUEST.
      if (input.emoji_name === undefined) {
        throw input.emoji_code !== undefined || input.reaction_type !== undefined ? emojiNameRequired() : badRequest("Missing 'emoji_name' argument")
      }
      await addReaction(ctx, { messageId: input.message_id, emojiName: input.emoji_name, emojiCode: input.emoji_code, reactionType: reactionTypeParam(input.reaction_type, ctx.config.upstreamNames) })
    },
  }),

  route({
    method: 'DELETE',
    url: '/messages/:message_id/reactions',
    params: {
      message_id: Type.Integer(),
      emoji_name: optional(Type.String()),
      emoji_code: optional(Type.String()),
      reaction_type: optional(Type.String(), { default: 'unicode_emoji' }),
    },
    handler: async (input, ctx) => {
      await removeReaction(ctx, {
        messageId: input.message_id,
        emojiName: input.emoji_name,
        emojiCode: input.emoji_code,
        reactionType: reactionTypeParam(input.reaction_type ?? 'unicode_emoji', ctx.config.upstreamNames),
      })
    },
  }),
]
