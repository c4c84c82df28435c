// The user's own state: user_settings and its legacy forms, alert_words,
// user_topic, muted_topics, drafts, saved_snippets, scheduled_messages.
import { builder } from './built.js'
import { Type, type Static } from 'typebox'
import { INHERITING_STREAMS_FIELD } from './internal.js'
import { DraftDict, eventObject, SavedSnippetDict, ScheduledMessageDict } from './common.js'

const SettingValue = Type.Union([Type.Boolean(), Type.Integer(), Type.String()])
export type SettingValue = Static<typeof SettingValue>

export const UserSettingsEventSchema = eventObject({
  type: Type.Literal('user_settings'),
  op: Type.Literal('update'),
  property: Type.String(),
  value: SettingValue,
  language_name: Type.Optional(Type.String()),
})
export type UserSettingsEvent = Static<typeof UserSettingsEventSchema> & {
  /** For a global default of channel notifications: the user's channels inheriting it (events/queues/filter.ts). */
  [INHERITING_STREAMS_FIELD]?: number[]
}
/** `{type: user_settings, op: update, property, value}` (+ language_name for default_language). */
export const userSettingsEvent = builder((property: string, value: SettingValue, languageName?: string): UserSettingsEvent => ({
  type: 'user_settings',
  op: 'update',
  property,
  value,
  ...(languageName !== undefined ? { language_name: languageName } : {}),
}))
export const withInheritingStreams = builder((event: UserSettingsEvent, streamIds: number[] | undefined): UserSettingsEvent =>
  streamIds === undefined ? event : { ...event, [INHERITING_STREAMS_FIELD]: streamIds })

/** Legacy, for queues without user_settings_object; derived per queue from user_settings. */
export const UpdateDisplaySettingsEventSchema = eventObject({
  type: Type.Literal('update_display_settings'),
  user: Type.String(),
  setting_name: Type.String(),
  setting: SettingValue,
  language_name: Type.Optional(Type.String()),
})
export type UpdateDisplaySettingsEvent = Static<typeof UpdateDisplaySettingsEventSchema>
export const updateDisplaySettingsEvent = builder((email: string, name: string, value: SettingValue, languageName?: string): UpdateDisplaySettingsEvent => ({
  type: 'update_display_settings',
  user: email,
  setting_name: name,
  setting: value,
  ...(languageName !== undefined ? { language_name: languageName } : {}),
}))

export const UpdateGlobalNotificationsEventSchema = eventObject({
  type: Type.Literal('update_global_notifications'),
  user: Type.String(),
  notification_name: Type.String(),
  setting: SettingValue,
})
export type UpdateGlobalNotificationsEvent = Static<typeof UpdateGlobalNotificationsEventSchema>
export const updateGlobalNotificationsEvent = builder((email: string, name: string, value: SettingValue): UpdateGlobalNotificationsEvent => ({
  type: 'update_global_notifications',
  user: email,
  notification_name: name,
  setting: value,
}))

export const AlertWordsEventSchema = eventObject({ type: Type.Literal('alert_words'), alert_words: Type.Array(Type.String()) })
export type AlertWordsEvent = Static<typeof AlertWordsEventSchema>
/** The user's whole list. */
export const alertWordsEvent = builder((words: string[]): AlertWordsEvent => ({ type: 'alert_words', alert_words: words }))

export const UserTopicEventSchema = eventObject({
  type: Type.Literal('user_topic'),
  stream_id: Type.Integer(),
  topic_name: Type.String(),
  last_updated: Type.Integer(),
  visibility_policy: Type.Integer(),
})
export type UserTopicEvent = Static<typeof UserTopicEventSchema>
export const userTopicEvent = builder((streamId: number, topic: string, policy: number, at: Date): UserTopicEvent => ({
  type: 'user_topic',
  stream_id: streamId,
  topic_name: topic,
  last_updated: Math.floor(at.getTime() / 1000),
  visibility_policy: policy,
}))

/** Legacy: the whole list of muted topics as [channel name, topic, last_updated]. */
export const MutedTopicsEventSchema = eventObject({
  type: Type.Literal('muted_topics'),
  muted_topics: Type.Array(Type.Tuple([Type.String(), Type.String(), Type.Integer()])),
})
export type MutedTopicsEvent = Static<typeof MutedTopicsEventSchema>
export const mutedTopicsEvent = builder((mutedTopics: [string, string, number][]): MutedTopicsEvent => ({ type: 'muted_topics', muted_topics: mutedTopics }))

export const DraftsEventSchema = Type.Union([
  eventObject({ type: Type.Literal('drafts'), op: Type.Literal('add'), drafts: Type.Array(DraftDict) }),
  eventObject({ type: Type.Literal('drafts'), op: Type.Literal('update'), draft: DraftDict }),
  eventObject({ type: Type.Literal('drafts'), op: Type.Literal('remove'), draft_id: Type.Integer() }),
])
export type DraftsEvent = Static<typeof DraftsEventSchema>
export const draftsAddEvent = builder((drafts: DraftDict[]): DraftsEvent => ({ type: 'drafts', op: 'add', drafts }))
export const draftsUpdateEvent = builder((draft: DraftDict): DraftsEvent => ({ type: 'drafts', op: 'update', draft }))
export const draftsRemoveEvent = builder((draftId: number): DraftsEvent => ({ type: 'drafts', op: 'remove', draft_id: draftId }))

// Upstream zerver/actions/saved_snippets.py: to the user's own clients.
export const SavedSnippetsEventSchema = Type.Union([
  eventObject({ type: Type.Literal('saved_snippets'), op: Type.Literal('add'), saved_snippet: SavedSnippetDict }),
  eventObject({ type: Type.Literal('saved_snippets'), op: Type.Literal('update'), saved_snippet: SavedSnippetDict }),
  eventObject({ type: Type.Literal('saved_snippets'), op: Type.Literal('remove'), saved_snippet_id: Type.Integer() }),
])
export type SavedSnippetsEvent = Static<typeof SavedSnippetsEventSchema>
export const savedSnippetsAddEvent = builder((snippet: SavedSnippetDict): SavedSnippetsEvent => ({ type: 'saved_snippets', op: 'add', saved_snippet: snippet }))
export const savedSnippetsUpdateEvent = builder((snippet: SavedSnippetDict): SavedSnippetsEvent => ({ type: 'saved_snippets', op: 'update', saved_snippet: snippet }))
export const savedSnippetsRemoveEvent = builder((id: number): SavedSnippetsEvent => ({ type: 'saved_snippets', op: 'remove', saved_snippet_id: id }))

export const ScheduledMessagesEventSchema = Type.Union([
  eventObject({ type: Type.Literal('scheduled_messages'), op: Type.Literal('add'), scheduled_messages: Type.Array(ScheduledMessageDict) }),
  eventObject({ type: Type.Literal('scheduled_messages'), op: Type.Literal('update'), scheduled_message: ScheduledMessageDict }),
  eventObject({ type: Type.Literal('scheduled_messages'), op: Type.Literal('remove'), scheduled_message_id: Type.Integer() }),
])
export type ScheduledMessagesEvent = Static<typeof ScheduledMessagesEventSchema>
export const scheduledMessagesAddEvent = builder((messages: ScheduledMessageDict[]): ScheduledMessagesEvent => ({ type: 'scheduled_messages', op: 'add', scheduled_messages: messages }))
export const scheduledMessagesUpdateEvent = builder((message: ScheduledMessageDict): ScheduledMessagesEvent => ({ type: 'scheduled_messages', op: 'update', scheduled_message: message }))
export const scheduledMessagesRemoveEvent = builder((id: number): ScheduledMessagesEvent => ({ type: 'scheduled_messages', op: 'remove', scheduled_message_id: id }))

export const MutedUsersEventSchema = eventObject({
  type: Type.Literal('muted_users'),
  muted_users: Type.Array(Type.Object({ id: Type.Integer(), timestamp: Type.Integer() }, { additionalProperties: false })),
})
export type MutedUsersEvent = Static<typeof MutedUsersEventSchema>
export const mutedUsersEvent = builder((mutedUsers: MutedUsersEvent['muted_users']): MutedUsersEvent => ({ type: 'muted_users', muted_users: mutedUsers }))
