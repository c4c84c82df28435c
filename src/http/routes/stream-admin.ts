// Channel administration and membership reads: PATCH/DELETE /streams/{stream_id},
// GET /streams/{stream_id}/members, GET /users/{user_id}/subscriptions/{stream_id},
// and the default channels (/default_streams).
import { Type } from 'typebox'
import { route } from '../route.js'
import { json, optional } from '../params.js'
import { STREAM_PERMISSION_SETTING_NAMES } from '../../domain/permission-settings.js'
import { MAX_STREAM_DESCRIPTION_LENGTH } from '../../domain/limits.js'
import { updateStream } from '../../actions/update-stream.js'
import { deactivateStream } from '../../actions/deactivate-stream.js'
import { addDefaultStream, getDefaultStreams, removeDefaultStream } from '../../actions/default-streams.js'
import { getIsSubscribed, getStreamMembers } from '../../queries/stream-members.js'

export const routes = [
  route({
    method: 'GET',
    url: '/streams/:stream_id/members',
    params: { stream_id: Type.Integer() },
    handler: async (input, ctx) => ({ subscribers: await getStreamMembers(ctx, input.stream_id) }),
  }),
  route({
    method: 'GET',
    url: '/users/:user_id/subscriptions/:stream_id',
    params: { user_id: Type.Integer(), stream_id: Type.Integer() },
    handler: async (input, ctx) => ({ is_subscribed: await getIsSubscribed(ctx, input.user_id, input.stream_id) }),
  }),
  route({
    method: 'PATCH',
    url: '/streams/:stream_id',
    params: {
      stream_id: Type.Integer(),
      new_name: optional(Type.String({ maxLength: 1000 })),
      description: optional(Type.String({ maxLength: MAX_STREAM_DESCRIPTION_LENGTH })),
      is_private: optional(Type.Boolean()),
      is_web_public: optional(Type.Boolean()),
      history_public_to_subscribers: optional(Type.Boolean()),
      is_default_stream: optional(Type.Boolean()),
      is_announcement_only: optional(Type.Boolean()),
      // Deprecated by level 333 (can_send_message_group), still accepted.
      stream_post_policy: optional(Type.Integer()),
      message_retention_days: optional(Type.Union([Type.String({ maxLength: 100 }), Type.Integer()])),
      // Group-setting values, `{new, old}` or bare (levels 320–357).
      ...Object.fromEntries(STREAM_PERMISSION_SETTING_NAMES.map((n) => [n, optional(json(Type.Unknown()))])),
    },
    handler: async (input, ctx) => {
      await updateStream(ctx, {
        streamId: input.stream_id,
        newName: input.new_name,
        description: input.description,
        isPrivate: input.is_private,
        isWebPublic: input.is_web_public,
        historyPublicToSubscribers: input.history_public_to_subscribers,
        isDefaultStream: input.is_default_stream,
        isAnnouncementOnly: input.is_announcement_only,
        streamPostPolicy: input.stream_post_policy,
        messageRetentionDays: input.message_retention_days,
        groupSettings: Object.fromEntries(STREAM_PERMISSION_SETTING_NAMES.map((n) => [n, (input as Record<string, unknown>)[n]])),
      })
      return {}
    },
  }),
  route({
    method: 'DELETE',
    url: '/streams/:stream_id',
    params: { stream_id: Type.Integer() },
    handler: async (input, ctx) => {
      await deactivateStream(ctx, input.stream_id)
      return {}
    },
  }),
  route({
    method: 'GET',
    url: '/default_streams',
    handler: async (_input, ctx) => ({ default_streams: await getDefaultStreams(ctx.prisma, ctx.realm.id) }),
  }),
  route({
    method: 'POST',
    url: '/default_streams',
    params: { stream_id: Type.Integer() },
    handler: async (input, ctx) => {
      await addDefaultStream(ctx, input.stream_id)
      return {}
    },
  }),
  route({
    method: 'DELETE',
    url: '/default_streams',
    params: { stream_id: Type.Integer() },
    handler: async (input, ctx) => {
      await removeDefaultStream(ctx, input.stream_id)
      return {}
    },
  }),
]
