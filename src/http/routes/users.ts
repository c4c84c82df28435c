// The user directory: GET /users, GET /users/me, GET /users/{user_id_or_email}, POST /users.
import { Type } from 'typebox'
import { route } from '../route.js'
import { optional, upstreamAlias } from '../params.js'
import { createUser } from '../../actions/create-user.js'
import { getOwnUser, getUser, getUsers } from '../../queries/users.js'
import { accessUserByEmail, accessUserById } from '../../access/user.js'

const listParams = {
  client_extavatar: optional(upstreamAlias(Type.Boolean(), 'client_gravatar'), { default: true }),
  include_custom_profile_fields: optional(Type.Boolean(), { default: false }),
}

export const routes = [
  route({
    method: 'GET',
    url: '/users',
    params: listParams,
    handler: async (input, ctx) => ({
      members: await getUsers(ctx, {
        clientExtavatar: input.client_extavatar ?? true,
        includeCustomProfileFields: input.include_custom_profile_fields ?? false,
      }),
    }),
  }),
  route({
    method: 'GET',
    url: '/users/me',
    handler: async (_input, ctx) => getOwnUser(ctx),
  }),
  route({
    method: 'GET',
    url: '/users/:user_id',
    // Upstream also answers GET /users/{email}; an all-digit segment is a user ID.
    params: { user_id: Type.String(), ...listParams },
    handler: async (input, ctx) => {
      const key = input.user_id
      const target = /^\d+$/.test(key) ? await accessUserById(ctx, Number(key)) : await accessUserByEmail(ctx, key)
      const user = await getUser(ctx, target, {
        clientExtavatar: input.client_extavatar ?? true,
        includeCustomProfileFields: input.include_custom_profile_fields ?? false,
      })
      return { user }
    },
  }),
  route({
    method: 'POST',
    url: '/users',
    params: { email: Type.String(), password: Type.String(), full_name: Type.String() },
    handler: async (input, ctx) => {
      const user = await createUser(ctx, { email: input.email, password: input.password, fullName: input.full_name })
      return { user_id: user.id }
    },
  }),
]
