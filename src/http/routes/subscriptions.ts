// /users/me/subscriptions: list, subscribe (creating channels), unsubscribe, properties.
import { Type } from 'typebox'
import { route } from '../route.js'
import { json, optional } from '../params.js'
import { MAX_STREAM_DESCRIPTION_LENGTH } from '../../domain/limits.js'
import { subscribeToStreams } from '../../actions/subscribe.js'
import { unsubscribeFromStreams } from '../../actions/unsubscribe.js'
import { updateSubscriptionProperties } from '../../actions/update-subscription-properties.js'
import { getSubscriptions } from '../../queries/streams.js'
import { MAX_CHANNELS_PER_REQUEST, MAX_PRINCIPALS_PER_REQUEST } from '../../domain/limits.js'
import { STREAM_PERMISSION_SETTING_NAMES } from '../../domain/permission-settings.js'
import { parseStreamGroupSettings } from '../../actions/create-streams.js'

const principals = optional(
  json(Type.Union([Type.Array(Type.Integer(), { maxItems: MAX_PRINCIPALS_PER_REQUEST }), Type.Array(Type.String(), { maxItems: MAX_PRINCIPALS_PER_REQUEST })])),
)

export const routes = [
  route({
    method: 'GET',
    url: '/users/me/subscriptions',
    params: { include_subscribers: optional(Type.Boolean(), { default: false }) },
    handler: async (input, ctx) => ({ subscriptions: await getSubscriptions(ctx, { includeSubscribers: input.include_subscribers === true }) }),
  }),
  route({
    method: 'POST',
    url: '/users/me/subscriptions',
    params: {
      subscriptions: json(
        Type.Array(
          Type.Object({
            name: Type.String(),
            description: Type.Optional(Type.String({ maxLength: MAX_STREAM_DESCRIPTION_LENGTH })),
            color: Type.Optional(Type.String()),
          }),
          { maxItems: MAX_CHANNELS_PER_REQUEST },
        ),
      ),
      principals,
      authorization_errors_fatal: optional(Type.Boolean(), { default: true }),
      announce: optional(Type.Boolean(), { default: false }),
      invite_only: optional(Type.Boolean(), { default: false }),
      is_web_public: optional(Type.Boolean(), { default: false }),
      is_default_stream: optional(Type.Boolean(), { default: false }),
      history_public_to_subscribers: optional(Type.Boolean()),
      // Deprecated by level 333 (can_send_message_group), still accepted.
      stream_post_policy: optional(Type.Union([1, 2, 3, 4].map((v) => Type.Literal(v)))),
      message_retention_days: optional(Type.Union([Type.String(), Type.Integer()]), { default: 'realm_default' }),
      ...Object.fromEntries(STREAM_PERMISSION_SETTING_NAMES.map((n) => [n, optional(json(Type.Unknown()))])),
    },
    handler: async (input, ctx) =>
      ({
        ...(await subscribeToStreams(ctx, {
          subscriptions: input.subscriptions,
          principals: input.principals,
          authorizationErrorsFatal: input.authorization_errors_fatal ?? true,
          announce: input.announce ?? false,
          inviteOnly: input.invite_only ?? false,
          isWebPublic: input.is_web_public ?? false,
          isDefaultStream: input.is_default_stream ?? false,
          historyPublicToSubscribers: input.history_public_to_subscribers,
          streamPostPolicy: input.stream_post_policy,
          messageRetentionDays: input.message_retention_days ?? 'realm_default',
          groupSettings: parseStreamGroupSettings(input),
        })),
      }),
  }),
  route({
    method: 'DELETE',
    url: '/users/me/subscriptions',
    params: { subscriptions: json(Type.Array(Type.String(), { maxItems: MAX_CHANNELS_PER_REQUEST })), principals },
    handler: async (input, ctx) => ({ ...(await unsubscribeFromStreams(ctx, input)) }),
  }),
  route({
    method: 'POST',
    url: '/users/me/subscriptions/properties',
    params: {
      subscription_data: json(
        Type.Array(
          Type.Object({
            stream_id: Type.Integer(),
            property: Type.String(),
            value: Type.Union([Type.Boolean(), Type.String()]),
          }),
          { maxItems: MAX_CHANNELS_PER_REQUEST },
        ),
      ),
    },
    handler: async (input, ctx) => {
      await updateSubscriptionProperties(ctx, input.subscription_data)
      return {}
    },
  }),
]
