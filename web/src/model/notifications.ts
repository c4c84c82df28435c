// Per-channel notification settings: a subscription's property when set, else
// the user's setting it inherits (null in register with the
// notification_settings_null capability), as upstream's settings show them.
import type { WireSubscription } from './events.js'
import type { State } from './state.js'

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
