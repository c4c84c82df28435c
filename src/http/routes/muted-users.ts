// POST and DELETE /users/me/muted_users/{muted_user_id}.
import { Type } from 'typebox'
import { route } from '../route.js'
import { muteUser, unmuteUser } from '../../actions/mute-user.js'

export const routes = [
  route({
    method: 'POST',
    url: '/users/me/muted_users/:muted_user_id',
    params: { muted_user_id: Type.Integer() },
    handler: async (input, ctx) => {
      await muteUser(ctx, input.muted_user_id)
      return {}
    },
  }),

  route({
    method: 'DELETE',
    url: '/users/me/muted_users/:muted_user_id',
    params: { muted_user_id: Type.Integer() },
    handler: async (input, ctx) => {
      await unmuteUser(ctx, input.muted_user_id)
      return {}
    },
  }),
]
