// POST /users/me/presence, GET /realm/presence, GET /users/{user_id_or_email}/presence.
import { Type } from 'typebox'
import { route } from '../route.js'
import { nullAsAbsent, optional } from '../params.js'
import { updatePresence } from '../../actions/update-presence.js'
import { getRealmPresence, getUserPresence } from '../../queries/presence.js'
import { accessUserByEmail, accessUserById } from '../../access/user.js'

export const routes = [
  route({
    method: 'POST',
    url: '/users/me/presence',
    params: {
      status: Type.String(),
      last_update_id: optional(Type.Integer()),
      ping_only: optional(Type.Boolean(), { default: false }),
      new_user_input: optional(Type.Boolean(), { default: false }),
      slim_presence: optional(Type.Boolean(), { default: false }),
      history_limit_days: optional(nullAsAbsent(Type.Integer())),
    },
    handler: async (input, ctx) => {
      await updatePresence(ctx, { status: input.status })
      if (input.ping_only) return { presence_last_update_id: input.last_update_id ?? -1 }
      const modern = input.last_update_id !== undefined || input.slim_presence === true
      const state = await getRealmPresence(ctx, { modern, lastUpdateId: input.last_update_id, historyLimitDays: input.history_limit_days })
      return { ...state, server_timestamp: ctx.now().getTime() / 1000 }
    },
  }),
  route({
    method: 'GET',
    url: '/realm/presence',
    handler: async (_input, ctx) => {
      const { presences } = await getRealmPresence(ctx, { modern: false })
      return { presences, server_timestamp: ctx.now().getTime() / 1000 }
    },
  }),
  route({
    method: 'GET',
    url: '/users/:user_id/presence',
    // Upstream also accepts an email here; an all-digit segment is a user ID.
    params: { user_id: Type.String() },
    handler: async (input, ctx) => {
      const key = input.user_id
      const target = /^\d+$/.test(key) ? await accessUserById(ctx, Number(key)) : await accessUserByEmail(ctx, key)
      return { presence: await getUserPresence(ctx, target) }
    },
  }),
]
