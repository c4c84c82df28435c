// POST /messages/flags and POST /messages/flags/narrow (spec "Update personal message flags", "…for a narrow").
import { Type } from 'typebox'
import { route } from '../route.js'
import { json, optional } from '../params.js'
import { updateMessageFlags } from '../../actions/update-message-flags.js'
import { updateFlagsForNarrow } from '../../actions/update-flags-for-narrow.js'
import { MAX_MESSAGE_IDS_PER_REQUEST, MAX_SMALL_LIST } from '../../domain/limits.js'

export const routes = [
  route({
    method: 'POST',
    url: '/messages/flags',
    params: {
      messages: json(Type.Array(Type.Integer(), { maxItems: MAX_MESSAGE_IDS_PER_REQUEST })),
      op: Type.String(),
      flag: Type.String(),
    },
    handler: async (input, ctx) => {
      const result = await updateMessageFlags(ctx, input)
      // Upstream echoes the request's ids (the event carries the ones that changed).
      const ignored = result.ignoredBecauseNotSubscribedChannels
      return { messages: input.messages, ...(ignored !== undefined ? { ignored_because_not_subscribed_channels: ignored } : {}) }
    },
  }),

  route({
    method: 'POST',
    url: '/messages/flags/narrow',
    params: {
      anchor: Type.String(),
      include_anchor: optional(Type.Boolean(), { default: true }),
      num_before: Type.Integer({ minimum: 0 }),
      num_after: Type.Integer({ minimum: 0 }),
      narrow: optional(json(Type.Array(Type.Unknown(), { maxItems: MAX_SMALL_LIST })), { default: [] }),
      op: Type.String(),
      flag: Type.String(),
    },
    handler: async (input, ctx) => {
      const result = await updateFlagsForNarrow(ctx, {
        anchor: input.anchor,
        includeAnchor: input.include_anchor ?? true,
        numBefore: input.num_before,
        numAfter: input.num_after,
        narrow: input.narrow ?? [],
        op: input.op,
        flag: input.flag,
      })
      return { ...result }
    },
  }),
]
