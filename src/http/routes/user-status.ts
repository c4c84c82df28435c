// POST /users/me/status and GET /users/{user_id}/status.
import { Type } from 'typebox'
import { route } from '../route.js'
import { optional } from '../params.js'
import { reactionTypeParam } from '../../domain/upstream-names.js'
import { updateUserStatus } from '../../actions/update-user-status.js'
import { getUserStatus } from '../../queries/user-status.js'
import { accessUserById } from '../../access/user.js'

export const routes = [
  route({
    method: 'POST',
    url: '/users/me/status',
    params: {
      status_text: optional(Type.String()),
      emoji_name: optional(Type.String()),
      emoji_code: optional(Type.String()),
      reaction_type: optional(Type.String()),
      away: optional(Type.Boolean()),
    },
    handler: async (input, ctx) => {
      await updateUserStatus(ctx, {
        statusText: input.status_text,
        emojiName: input.emoji_name,
        emojiCode: input.emoji_code,
        reactionType: reactionTypeParam(input.reaction_type, ctx.config.upstreamNames),
        away: input.away,
      })
    },
  }),
  route({
    method: 'GET',
    url: '/users/:user_id/status',
    params: { user_id: Type.Integer() },
    handler: async (input, ctx) => ({ status: await getUserStatus(ctx.prisma, await accessUserById(ctx, input.user_id)) }),
  }),
]
