// Channel events: stream create/delete/update and subscription
// add/remove/update/peer_add/peer_remove (upstream-behaviour §2 "subscription").
import { builder } from './built.js'
import { Type, type Static } from 'typebox'
import type { StreamNotificationDefaults } from '../../domain/stream-notifications.js'
import { FOR_ARCHIVING_FIELD, NOTIFICATION_DEFAULTS_FIELD } from './internal.js'
import { eventObject, GroupSettingValueSchema, StreamDict, SubscriptionDict } from './common.js'
import type { GroupSettingValue } from '../../domain/group-setting-value.js'

export const StreamEventSchema = Type.Union([
  eventObject({ type: Type.Literal('stream'), op: Type.Literal('create'), streams: Type.Array(StreamDict) }),
  // Level 343: stream_ids; the deprecated streams keeps its channel objects.
  eventObject({ type: Type.Literal('stream'), op: Type.Literal('delete'), streams: Type.Array(StreamDict), stream_ids: Type.Array(Type.Integer()) }),
  eventObject({
    type: Type.Literal('stream'),
    op: Type.Literal('update'),
    stream_id: Type.Integer(),
    name: Type.String(),
    property: Type.String(),
    value: Type.Union([Type.Boolean(), Type.Integer(), Type.String(), Type.Null(), GroupSettingValueSchema]),
    rendered_description: Type.Optional(Type.String()),
    history_public_to_subscribers: Type.Optional(Type.Boolean()),
    is_web_public: Type.Optional(Type.Boolean()),
  }),
])
export type StreamEvent =
  | Exclude<Static<typeof StreamEventSchema>, { op: 'delete' }>
  | (Extract<Static<typeof StreamEventSchema>, { op: 'delete' }> & { [FOR_ARCHIVING_FIELD]?: true })
export const streamCreateEvent = builder((streams: StreamDict[]): StreamEvent => ({ type: 'stream', op: 'create', streams }))
/**
 * `forArchiving`: the channels are being archived (upstream's for_archiving):
 * queues with the archived_channels capability do not receive it, they get
 * stream update is_archived instead (filter.ts).
 */
export const streamDeleteEvent = builder((streams: StreamDict[], opts: { forArchiving?: boolean } = {}): StreamEvent => ({
  type: 'stream',
  op: 'delete',
  streams,
  stream_ids: streams.map((s) => s.stream_id),
  ...(opts.forArchiving === true ? { [FOR_ARCHIVING_FIELD]: true as const } : {}),
}))
/** A property change; `extra` carries the companions upstream sends with some properties (rendered_description…). */
export const streamUpdateEvent = builder((
  stream: { id: number; name: string },
  property: string,
  value: boolean | number | string | null | GroupSettingValue,
  extra: { rendered_description?: string; history_public_to_subscribers?: boolean; is_web_public?: boolean } = {},
): StreamEvent => ({ type: 'stream', op: 'update', stream_id: stream.id, name: stream.name, property, value, ...extra }))

const SubscriptionValue = Type.Union([Type.Boolean(), Type.Integer(), Type.String(), Type.Null()])
export const SubscriptionEventSchema = Type.Union([
  eventObject({ type: Type.Literal('subscription'), op: Type.Literal('add'), subscriptions: Type.Array(SubscriptionDict) }),
  eventObject({
    type: Type.Literal('subscription'),
    op: Type.Literal('remove'),
    subscriptions: Type.Array(Type.Object({ name: Type.String(), stream_id: Type.Integer() }, { additionalProperties: false })),
  }),
  eventObject({ type: Type.Literal('subscription'), op: Type.Literal('update'), stream_id: Type.Integer(), property: Type.String(), value: SubscriptionValue }),
  eventObject({
    type: Type.Literal('subscription'),
    op: Type.Union([Type.Literal('peer_add'), Type.Literal('peer_remove')]),
    stream_ids: Type.Array(Type.Integer()),
    user_ids: Type.Array(Type.Integer()),
  }),
])
export type SubscriptionEvent =
  | {
      type: 'subscription'
      op: 'add'
      subscriptions: SubscriptionDict[]
      /** The recipient's global notification defaults, for queues that resolve null settings (events/queues/filter.ts). */
      [NOTIFICATION_DEFAULTS_FIELD]?: StreamNotificationDefaults
    }
  | { type: 'subscription'; op: 'remove'; subscriptions: { name: string; stream_id: number }[] }
  | { type: 'subscription'; op: 'update'; stream_id: number; property: string; value: Static<typeof SubscriptionValue> }
  | { type: 'subscription'; op: 'peer_add' | 'peer_remove'; stream_ids: number[]; user_ids: number[] }

export const subscriptionAddEvent = builder((subscriptions: SubscriptionDict[], defaults?: StreamNotificationDefaults): SubscriptionEvent => ({
  type: 'subscription',
  op: 'add',
  subscriptions,
  ...(defaults !== undefined ? { [NOTIFICATION_DEFAULTS_FIELD]: defaults } : {}),
}))
export const subscriptionRemoveEvent = builder((streams: { name: string; id: number }[]): SubscriptionEvent => ({
  type: 'subscription',
  op: 'remove',
  subscriptions: streams.map((s) => ({ name: s.name, stream_id: s.id })),
}))
export const subscriptionUpdateEvent = builder((streamId: number, property: string, value: Static<typeof SubscriptionValue>): SubscriptionEvent => ({
  type: 'subscription',
  op: 'update',
  stream_id: streamId,
  property,
  value,
}))
export const subscriptionPeerEvent = builder((op: 'peer_add' | 'peer_remove', streamIds: number[], userIds: number[]): SubscriptionEvent => ({
  type: 'subscription',
  op,
  stream_ids: streamIds,
  user_ids: userIds,
}))
