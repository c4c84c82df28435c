// Per-channel notification settings: a subscription's property when set, else
// the user's setting it inherits (null in register with the
// notification_settings_null capability), as upstream's settings show them.
import type { MessageEvent, WireSubscription } from './events.js'
import { isUserMuted } from './muted-users.js'
import type { State } from './state.js'
import { isTopicMuted } from './unread.js'

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

/**
 * Whether a new message gets a desktop notification while the app is open
 * (the browser's permission and the window's focus aside, lib/notify.ts):
 * never one's own or a muted sender's; a direct message unless
 * enable_desktop_notifications is off, a mention, or a message in a channel
 * whose desktop notifications are on, unless the channel or topic is muted.
 */
export function notifiesDesktop(state: State, e: Pick<MessageEvent, 'message' | 'flags'>): boolean {
  if (e.message.sender_id === state.selfId || isUserMuted(state, e.message.sender_id)) return false
  const direct = e.message.type === 'private'
  if (direct && state.settings.enable_desktop_notifications === false) return false
  const sub = e.message.type === 'stream' && e.message.stream_id !== undefined ? state.subscriptions.get(e.message.stream_id) : undefined
  const channelOn = sub !== undefined && !sub.is_muted && !isTopicMuted(state, sub.stream_id, e.message.subject) && effectiveNotification(state, sub, 'desktop_notifications')
  return direct || e.flags.includes('mentioned') || channelOn
}
