// Every event Roost sends, in one place: a TypeBox schema of what a queue
// receives (upstream's shapes: upstream-behaviour §2, upstream-openapi.yaml
// GET /events) and a typed builder per event type. Actions build events only
// with these builders: Emit and Emission (actions/context.ts) take
// BuiltEvent, which only a builder's result is (built.ts), so an object
// literal in an action does not compile. `ChatEvent`, the union of the
// builders' types, is what the bus carries (events/bus.ts), and
// test/support/events.ts checks every captured event against EVENT_SCHEMAS.
//
// Adding an event type:
//   1. In the file of its family (messages, channels, users, personal; or a
//      new file), declare `FooEventSchema = eventObject({ type:
//      Type.Literal('foo'), … })` (a Type.Union of eventObjects for several
//      ops), its type (`Static<typeof FooEventSchema>`, or a hand-written
//      type when the bus item differs from what a queue receives, e.g. it
//      carries an internal field that events/queues/filter.ts strips) and a
//      builder `fooEvent = builder((…): FooEvent => ({ … }))`.
//   2. Here: add the type to `ChatEvent` and the schema to EVENT_SCHEMAS.
//   3. Teach the client model test/support/apply-event.ts to apply it (a
//      no-op when register returns no state for it) and test the action
//      with checkStateAfter (test/support/state-check.ts), naming the event
//      in expectTypes as `type` or `type/op`:
//      test/events/state-check-coverage.test.ts fails until every type and
//      op of EVENT_SCHEMAS is named there.
import { Type, type Static, type TSchema } from 'typebox'
import Value from 'typebox/value'
import type { AttachmentEvent, DeleteMessageEvent, MessageEvent, ReactionEvent, TypingEditMessageEvent, TypingEvent, UpdateMessageEvent, UpdateMessageFlagsEvent } from './messages.js'
import {
  AttachmentEventSchema,
  DeleteMessageEventSchema,
  MessageEventSchema,
  ReactionEventSchema,
  TypingEditMessageEventSchema,
  TypingEventSchema,
  UpdateMessageEventSchema,
  UpdateMessageFlagsEventSchema,
} from './messages.js'
import { StreamEventSchema, SubscriptionEventSchema, type StreamEvent, type SubscriptionEvent } from './channels.js'
import {
  CustomProfileFieldsEventSchema,
  InvitesChangedEventSchema,
  PresenceEventSchema,
  RealmEmojiEventSchema,
  RealmUserEventSchema,
  UserGroupEventSchema,
  UserStatusEventSchema,
  type CustomProfileFieldsEvent,
  type InvitesChangedEvent,
  type PresenceEvent,
  type RealmEmojiEvent,
  type RealmUserEvent,
  type UserGroupEvent,
  type UserStatusEvent,
} from './users.js'
import {
  AlertWordsEventSchema,
  DraftsEventSchema,
  MutedTopicsEventSchema,
  SavedSnippetsEventSchema,
  ScheduledMessagesEventSchema,
  UpdateDisplaySettingsEventSchema,
  UpdateGlobalNotificationsEventSchema,
  UserSettingsEventSchema,
  UserTopicEventSchema,
  MutedUsersEventSchema,
  type MutedUsersEvent,
  type AlertWordsEvent,
  type DraftsEvent,
  type MutedTopicsEvent,
  type SavedSnippetsEvent,
  type ScheduledMessagesEvent,
  type UpdateDisplaySettingsEvent,
  type UpdateGlobalNotificationsEvent,
  type UserSettingsEvent,
  type UserTopicEvent,
} from './personal.js'
import { eventObject } from './common.js'
import { builder, type Built } from './built.js'
import {
  DefaultStreamsEventSchema,
  RealmEventSchema,
  RealmFiltersEventSchema,
  RealmLinkifiersEventSchema,
  type DefaultStreamsEvent,
  type RealmEvent,
  type RealmFiltersEvent,
  type RealmLinkifiersEvent,
} from './realm.js'

export * from './messages.js'
export * from './channels.js'
export * from './users.js'
export * from './personal.js'
export * from './realm.js'

export const HeartbeatEventSchema = eventObject({ type: Type.Literal('heartbeat') })
export type HeartbeatEvent = Static<typeof HeartbeatEventSchema>
export const heartbeatEvent = builder((): HeartbeatEvent => ({ type: 'heartbeat' }))

/** An event as an action builds it and the bus carries it. */
export type ChatEvent =
  | MessageEvent
  | UpdateMessageEvent
  | DeleteMessageEvent
  | UpdateMessageFlagsEvent
  | ReactionEvent
  | TypingEvent
  | TypingEditMessageEvent
  | AttachmentEvent
  | StreamEvent
  | SubscriptionEvent
  | RealmUserEvent
  | UserStatusEvent
  | PresenceEvent
  | CustomProfileFieldsEvent
  | InvitesChangedEvent
  | UserGroupEvent
  | RealmEmojiEvent
  | UserSettingsEvent
  | UpdateDisplaySettingsEvent
  | UpdateGlobalNotificationsEvent
  | AlertWordsEvent
  | UserTopicEvent
  | MutedTopicsEvent
  | DraftsEvent
  | SavedSnippetsEvent
  | ScheduledMessagesEvent
  | HeartbeatEvent
  | RealmEvent
  | DefaultStreamsEvent
  | RealmLinkifiersEvent
  | RealmFiltersEvent
  | MutedUsersEvent

export type ChatEventType = ChatEvent['type']

/** An event made by a builder here: what actions publish (actions/context.ts). */
export type BuiltEvent = Built<ChatEvent>
export type { Built }

/** What a queue may receive for each event type (without the `id` the queue adds). */
export const EVENT_SCHEMAS: Record<ChatEventType, TSchema> = {
  message: MessageEventSchema,
  update_message: UpdateMessageEventSchema,
  delete_message: DeleteMessageEventSchema,
  update_message_flags: UpdateMessageFlagsEventSchema,
  reaction: ReactionEventSchema,
  typing: TypingEventSchema,
  typing_edit_message: TypingEditMessageEventSchema,
  attachment: AttachmentEventSchema,
  stream: StreamEventSchema,
  subscription: SubscriptionEventSchema,
  realm_user: RealmUserEventSchema,
  user_status: UserStatusEventSchema,
  presence: PresenceEventSchema,
  custom_profile_fields: CustomProfileFieldsEventSchema,
  invites_changed: InvitesChangedEventSchema,
  user_group: UserGroupEventSchema,
  realm_emoji: RealmEmojiEventSchema,
  user_settings: UserSettingsEventSchema,
  update_display_settings: UpdateDisplaySettingsEventSchema,
  update_global_notifications: UpdateGlobalNotificationsEventSchema,
  alert_words: AlertWordsEventSchema,
  user_topic: UserTopicEventSchema,
  muted_topics: MutedTopicsEventSchema,
  drafts: DraftsEventSchema,
  saved_snippets: SavedSnippetsEventSchema,
  scheduled_messages: ScheduledMessagesEventSchema,
  heartbeat: HeartbeatEventSchema,
  realm: RealmEventSchema,
  default_streams: DefaultStreamsEventSchema,
  realm_linkifiers: RealmLinkifiersEventSchema,
  realm_filters: RealmFiltersEventSchema,
  muted_users: MutedUsersEventSchema,
}

/**
 * Why a delivered event (with or without its `id`) does not match its
 * schema: an empty list when it does. Unknown types are an error too.
 */
export function eventSchemaErrors(event: { type?: unknown; [key: string]: unknown }): string[] {
  const { id: _id, ...rest } = event
  const type = typeof rest.type === 'string' ? rest.type : ''
  const schema = (EVENT_SCHEMAS as Record<string, TSchema | undefined>)[type]
  if (schema === undefined) return [`no schema for event type '${type}'`]
  if (Value.Check(schema, rest)) return []
  const errors = [...Value.Errors(schema, rest)].map((e) => `${e.instancePath || '/'} ${e.message}`)
  return errors.length > 0 ? errors : ['does not match its schema']
}
