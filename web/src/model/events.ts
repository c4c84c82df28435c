// The events a queue delivers, typed from the server's TypeBox schemas
// (src/events/schemas): one definition for both sides.
import type { Static } from 'typebox'
import type {
  AlertWordsEventSchema,
  DeleteMessageEventSchema,
  DraftsEventSchema,
  HeartbeatEventSchema,
  MessageEventSchema,
  MutedUsersEventSchema,
  ScheduledMessagesEventSchema,
  PresenceEventSchema,
  ReactionEventSchema,
  RealmEmojiEventSchema,
  RealmEventSchema,
  RealmUserEventSchema,
  StreamEventSchema,
  SubscriptionEventSchema,
  TypingEventSchema,
  UpdateMessageEventSchema,
  UpdateMessageFlagsEventSchema,
  UserSettingsEventSchema,
  UserStatusEventSchema,
  UserGroupEventSchema,
  UserTopicEventSchema,
} from '../../../src/events/schemas/index.js'
import type { DraftDict, MessageDict, ScheduledMessageDict, SubscriptionDict, UserDict } from '../../../src/events/schemas/common.js'

export type MessageEvent = Static<typeof MessageEventSchema>
export type UpdateMessageEvent = Static<typeof UpdateMessageEventSchema>
export type DeleteMessageEvent = Static<typeof DeleteMessageEventSchema>
export type FlagsEvent = Static<typeof UpdateMessageFlagsEventSchema>
export type ReactionEvent = Static<typeof ReactionEventSchema>
export type RealmEmojiEvent = Static<typeof RealmEmojiEventSchema>
export type TypingEvent = Static<typeof TypingEventSchema>
export type StreamEvent = Static<typeof StreamEventSchema>
export type SubscriptionEvent = Static<typeof SubscriptionEventSchema>
export type RealmUserEvent = Static<typeof RealmUserEventSchema>
export type UserStatusEvent = Static<typeof UserStatusEventSchema>
export type PresenceEvent = Static<typeof PresenceEventSchema>
export type UserSettingsEvent = Static<typeof UserSettingsEventSchema>
export type UserTopicEvent = Static<typeof UserTopicEventSchema>
export type DraftsEvent = Static<typeof DraftsEventSchema>
export type AlertWordsEvent = Static<typeof AlertWordsEventSchema>
export type MutedUsersEvent = Static<typeof MutedUsersEventSchema>
export type RealmEvent = Static<typeof RealmEventSchema>
export type UserGroupEvent = Static<typeof UserGroupEventSchema>
export type ScheduledMessagesEvent = Static<typeof ScheduledMessagesEventSchema>
export type HeartbeatEvent = Static<typeof HeartbeatEventSchema>

/** The events the app registers for (REGISTERED_EVENT_TYPES) and applies. */
export type AppEvent =
  | MessageEvent
  | UpdateMessageEvent
  | DeleteMessageEvent
  | FlagsEvent
  | ReactionEvent
  | RealmEmojiEvent
  | TypingEvent
  | StreamEvent
  | SubscriptionEvent
  | RealmUserEvent
  | UserStatusEvent
  | PresenceEvent
  | UserSettingsEvent
  | UserTopicEvent
  | DraftsEvent
  | AlertWordsEvent
  | MutedUsersEvent
  | RealmEvent
  | UserGroupEvent
  | ScheduledMessagesEvent
  | HeartbeatEvent

export const REGISTERED_EVENT_TYPES: AppEvent['type'][] = [
  'message',
  'update_message',
  'delete_message',
  'update_message_flags',
  'reaction',
  'realm_emoji',
  'typing',
  'stream',
  'subscription',
  'realm_user',
  'user_status',
  'presence',
  'user_settings',
  'user_topic',
  'drafts',
  'alert_words',
  'muted_users',
  'realm',
  'user_group',
  'scheduled_messages',
  'heartbeat',
]

/**
 * What the app asks register for: its event types' state, the user groups
 * (fetched as realm_user_groups, kept by user_group events) and the recent
 * direct conversations (no event type of their own; kept by message events).
 */
export const FETCH_EVENT_TYPES: string[] = [...REGISTERED_EVENT_TYPES, 'realm_user_groups', 'recent_private_conversations']

/** The register keys the app reads (fetch_event_types = REGISTERED_EVENT_TYPES). */
export type WireMessage = Static<typeof MessageDict> & { flags: string[]; last_edit_timestamp?: number; last_moved_timestamp?: number }
export type WireSubscription = Static<typeof SubscriptionDict>
export type WireUser = Static<typeof UserDict>
export type WireDraft = Static<typeof DraftDict>
export type WireScheduledMessage = Static<typeof ScheduledMessageDict>
/** A custom emoji of the organization (register's `realm_emoji`, by ID; deactivated ones too). */
export type WireRealmEmoji = RealmEmojiEvent['realm_emoji'][string]
export interface WireReaction { emoji_name: string; emoji_code: string; reaction_type: string; user_id: number }
