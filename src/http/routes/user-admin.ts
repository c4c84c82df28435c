// User administration: PATCH /users/{user_id} (and /users/{email}), DELETE /users/{user_id},
// POST /users/{user_id}/reactivate, DELETE /users/me, POST and DELETE
// /users/me/avatar, PATCH /bots/{bot_id}; and the uploaded avatar files at
// /user_avatars/{realm_id}/{hash}.png (outside /api/v1, as avatar_url names them).
import { Type } from 'typebox'
import { route } from '../route.js'
import { json, optional } from '../params.js'
import { updateUser } from '../../actions/update-user.js'
import { accessUserByEmail } from '../../access/user.js'
import { deactivateOwnUser, deactivateUser, reactivateUser } from '../../actions/deactivate-user.js'
import { readAvatar, removeAvatar, uploadAvatar } from '../../actions/avatar.js'
import { updateBot } from '../../actions/change-bot-owner.js'
import { fileNotFound } from '../../errors.js'
import { MAX_SMALL_LIST, MAX_USERS_PER_REQUEST } from '../../domain/limits.js'

const profileEntry = Type.Object({
  id: Type.Integer(),
  value: Type.Union([Type.String(), Type.Array(Type.Integer(), { maxItems: MAX_USERS_PER_REQUEST }), Type.Null()]),
})

export const routes = [
  route({
    method: 'PATCH',
    url: '/users/:user_id',
    // Also PATCH /users/{email} (upstream level 313): an all-digit segment is a user ID, anything else an email as GET /users/{email} takes it.
    params: {
      user_id: Type.String(),
      full_name: optional(Type.String()),
      role: optional(Type.Integer()),
      profile_data: optional(json(Type.Array(profileEntry, { maxItems: MAX_SMALL_LIST }))),
      new_email: optional(Type.String()),
    },
    handler: async (input, ctx) => {
      const key = input.user_id
      const userId = /^\d+$/.test(key) ? Number(key) : (await accessUserByEmail(ctx, key)).id
      await updateUser(ctx, userId, { fullName: input.full_name, role: input.role, profileData: input.profile_data, newEmail: input.new_email })
    },
  }),
  route({
    method: 'DELETE',
    url: '/users/:user_id',
    params: { user_id: Type.Integer() },
    handler: async (input, ctx) => {
      await deactivateUser(ctx, input.user_id)
    },
  }),
  route({
    method: 'POST',
    url: '/users/:user_id/reactivate',
    params: { user_id: Type.Integer() },
    handler: async (input, ctx) => {
      await reactivateUser(ctx, input.user_id)
    },
  }),
  route({
    method: 'DELETE',
    url: '/users/me',
    handler: async (_input, ctx) => {
      await deactivateOwnUser(ctx)
    },
  }),
  route({
    method: 'POST',
    url: '/users/me/avatar',
    handler: async (_input, ctx) => uploadAvatar(ctx, ctx.files),
  }),
  route({
    method: 'DELETE',
    url: '/users/me/avatar',
    handler: async (_input, ctx) => removeAvatar(ctx),
  }),
  route({
    method: 'PATCH',
    url: '/bots/:bot_id',
    params: {
      bot_id: Type.Integer(),
      full_name: optional(Type.String()),
      role: optional(Type.Integer()),
      bot_owner_id: optional(Type.Integer()),
    },
    handler: async (input, ctx) => updateBot(ctx, input.bot_id, { fullName: input.full_name, role: input.role, botOwnerId: input.bot_owner_id }),
  }),
  route({
    method: 'GET',
    url: '/user_avatars/:realm_id/:file',
    outsideApi: true,
    raw: true,
    auth: 'none',
    params: { realm_id: Type.String(), file: Type.String() },
    handler: async (input, ctx) => {
      const file = input.realm_id === String(ctx.realm.id) ? await readAvatar(ctx, input.file) : null
      if (!file) throw fileNotFound()
      ctx.reply
        .header('Content-Type', file.contentType)
        .header('Cache-Control', 'public, max-age=31536000, immutable')
        .header('X-Content-Type-Options', 'nosniff')
        .send(file.data)
    },
  }),
]
