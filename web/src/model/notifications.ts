// Notification settings and which new message alerts the user: per-channel
// settings (a subscription's property when set, else the user's setting it
// inherits, null in register with the notification_settings_null capability),
// and one decision for every way of alerting while the app is open (a sound,
// a desktop notification), as upstream's web app makes it.
import type { MessageEvent, WireSubscription } from './events.js'
import { isUserMuted } from './muted-users.js'
import { topicKey, type State } from './state.js'
import { VISIBILITY_FOLLOWED, VISIBILITY_MUTED, VISIBILITY_UNMUTED } from './unread.js'

export const CHANNEL_NOTIFICATION_PROPERTIES = ['desktop_notifications', 'audible_notifications', 'push_notifications', 'email_notifications', 'wildcard_mentions_notify'] as const
export type ChannelNotification = (typeof CHANNEL_NOTIFICATION_PROPERTIES)[number]

/** The user setting each property falls back to. */
export const INHERITS_FROM: Record<ChannelNotification, string> = {
  desktop_notifications: 'enable_stream_desktop_notifications',
  audible_notifications: 'enable_stream_audible_notifications',
  push_notifications: 'enable_stream_push_notifications',
  email_notifications: 'enable_stream_email_notifications',
  wildcard_mentions_notify: 'wildcard_mentions_notify',
}

export function effectiveNotification(state: State, sub: WireSubscription, property: ChannelNotification): boolean {
  const own = (sub as unknown as Record<string, unknown>)[property]
  return typeof own === 'boolean' ? own : state.settings[INHERITS_FROM[property]] === true
}

/** A way the open app alerts the user of a new message. */
export type Alert = 'audible' | 'desktop'

/** For each way: the subscription property (and the user setting it inherits), the followed-topic setting, and the setting covering direct messages, mentions and alert words. */
const ALERT_SETTINGS: Record<Alert, { channel: ChannelNotification; followed: string; personal: string }> = {
  audible: { channel: 'audible_notifications', followed: 'enable_followed_topic_audible_notifications', personal: 'enable_sounds' },
  desktop: { channel: 'desktop_notifications', followed: 'enable_followed_topic_desktop_notifications', personal: 'enable_desktop_notifications' },
}

const WILDCARD_FLAGS = ['stream_wildcard_mentioned', 'topic_wildcard_mentioned', 'wildcard_mentioned']

/**
 * Whether a new message alerts the user this way, as upstream's web app
 * decides: never for one's own messages, a muted sender's, or a message
 * already read; a direct mention or a followed topic overrides muting, a
 * muted topic or channel (unless the topic is unmuted) alerts of nothing but an @all
 * mention in a channel notifying of them. Then a channel whose setting for
 * this way is on (the subscription's, else the user's channel default), a
 * followed topic with the followed-topic setting, and, with the personal
 * setting (`enable_sounds`, `enable_desktop_notifications`, on when
 * missing), direct messages, mentions (personal and group), alert words and
 * @all mentions where the channel's or the followed topics' wildcard
 * setting is on.
 */
export function alerts(state: State, event: Pick<MessageEvent, 'message' | 'flags'>, how: Alert): boolean {
  const { message, flags } = event
  if (message.sender_id === state.selfId || isUserMuted(state, message.sender_id) || flags.includes('read')) return false
  const direct = flags.includes('mentioned') || flags.includes('group_mentioned')
  const wildcard = flags.some((f) => WILDCARD_FLAGS.includes(f))
  const sub = message.type === 'stream' && message.stream_id !== undefined ? state.subscriptions.get(message.stream_id) : undefined
  const policy = sub ? state.userTopics.get(topicKey(sub.stream_id, message.subject)) : undefined
  const followed = policy === VISIBILITY_FOLLOWED
  if (sub && !direct && !followed) {
    if (policy === VISIBILITY_MUTED) return false
    if (sub.is_muted && policy !== VISIBILITY_UNMUTED && !(wildcard && sub.wildcard_mentions_notify === true)) return false
  }
  const settings = state.settings
  const setting = ALERT_SETTINGS[how]
  if (sub && effectiveNotification(state, sub, setting.channel)) return true
  if (followed && settings[setting.followed] === true) return true
  if (settings[setting.personal] === false) return false
  if (message.type === 'private' || direct || flags.includes('has_alert_word')) return true
  if (sub && wildcard && effectiveNotification(state, sub, 'wildcard_mentions_notify')) return true
  if (followed && wildcard && settings.enable_followed_topic_wildcard_mentions_notify === true) return true
  return false
}
