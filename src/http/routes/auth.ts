// POST /fetch_api_key: email and password → the API key (upstream-behaviour §12.2).
import { Type } from 'typebox'
import { route } from '../route.js'
import { accessUserByPassword } from '../../access/user.js'

export const routes = [
  route({
    method: 'POST',
    url: '/fetch_api_key',
    auth: 'none',
    params: { username: Type.String(), password: Type.String() },
    handler: async (input, ctx) => {
      const user = await accessUserByPassword(ctx, input.username, input.password, ctx.request.ip)
      return { api_key: user.apiKey, email: user.deliveryEmail, user_id: user.id }
    },
  }),
]
