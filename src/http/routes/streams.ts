// /streams, /streams/{stream_id}, /get_stream_id: channel reads.
import { Type } from 'typebox'
import { route } from '../route.js'
import { alias, optional } from '../params.js'
import { getStreamById, getStreamIdByName, getStreams } from '../../queries/streams.js'

export const routes = [
  route({
    method: 'GET',
    url: '/streams',
    params: {
      include_public: optional(Type.Boolean(), { default: true }),
      include_web_public: optional(Type.Boolean(), { default: false }),
      include_subscribed: optional(Type.Boolean(), { default: true }),
      // Level 356: include_all, for everyone; include_all_active its former name.
      include_all: optional(alias(Type.Boolean(), 'include_all_active'), { default: false }),
      include_default: optional(Type.Boolean(), { default: false }),
      include_owner_subscribed: optional(Type.Boolean(), { default: false }),
      include_can_access_content: optional(Type.Boolean(), { default: false }),
      exclude_archived: optional(Type.Boolean(), { default: true }),
    },
    handler: async (input, ctx) => ({
      streams: await getStreams(ctx, {
        includePublic: input.include_public ?? true,
        includeWebPublic: input.include_web_public ?? false,
        includeSubscribed: input.include_subscribed ?? true,
        includeAll: input.include_all ?? false,
        includeDefault: input.include_default ?? false,
        includeOwnerSubscribed: input.include_owner_subscribed ?? false,
        includeCanAccessContent: input.include_can_access_content ?? false,
        excludeArchived: input.exclude_archived ?? true,
      }),
    }),
  }),
  route({
    method: 'GET',
    url: '/streams/:stream_id',
    params: { stream_id: Type.Integer() },
    handler: async (input, ctx) => ({ stream: await getStreamById(ctx, input.stream_id) }),
  }),
  route({
    method: 'GET',
    url: '/get_stream_id',
    params: { stream: Type.String() },
    handler: async (input, ctx) => ({ stream_id: await getStreamIdByName(ctx, input.stream) }),
  }),
]
