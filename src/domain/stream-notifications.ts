// Per-subscription notification settings that may be null ("inherit the
// user's global setting for channel messages") and what clients without the
// notification_settings_null capability see instead: the inherited value.
//
// Upstream resolves exactly these four (its handle_stream_notifications_
// compatibility); wildcard_mentions_notify stays null for every client, since
// it arrived together with null values and no client knowing it predates them.
import type { UserSettings } from '../db/index.js'

export const INHERITED_STREAM_NOTIFICATIONS = [
  // property: subscription wire name and Subscription column; setting: global wire name and UserSettings column.
  { property: 'desktop_notifications', subscriptionColumn: 'desktopNotifications', setting: 'enable_stream_desktop_notifications', column: 'enableStreamDesktopNotifications' },
  { property: 'audible_notifications', subscriptionColumn: 'audibleNotifications', setting: 'enable_stream_audible_notifications', column: 'enableStreamAudibleNotifications' },
  { property: 'push_notifications', subscriptionColumn: 'pushNotifications', setting: 'enable_stream_push_notifications', column: 'enableStreamPushNotifications' },
  { property: 'email_notifications', subscriptionColumn: 'emailNotifications', setting: 'enable_stream_email_notifications', column: 'enableStreamEmailNotifications' },
] as const

export type InheritedProperty = (typeof INHERITED_STREAM_NOTIFICATIONS)[number]['property']

/** The value each inheriting property takes when a subscription leaves it null. */
export type StreamNotificationDefaults = Record<InheritedProperty, boolean>

type DefaultsColumns = Pick<UserSettings, (typeof INHERITED_STREAM_NOTIFICATIONS)[number]['column']>

/** The user's global defaults (all false without a settings row, as upstream for a missing user). */
export function streamNotificationDefaults(settings: DefaultsColumns | null | undefined): StreamNotificationDefaults {
  const out = {} as StreamNotificationDefaults
  for (const { property, column } of INHERITED_STREAM_NOTIFICATIONS) out[property] = settings?.[column] ?? false
  return out
}

export const isInheritedProperty = (property: unknown): property is InheritedProperty =>
  INHERITED_STREAM_NOTIFICATIONS.some((n) => n.property === property)

/** The inheriting property a global setting name feeds, if any. */
export function propertyInheritingFrom(setting: string): (typeof INHERITED_STREAM_NOTIFICATIONS)[number] | undefined {
  return INHERITED_STREAM_NOTIFICATIONS.find((n) => n.setting === setting)
}

/** A copy of a subscription object with its null inheriting properties replaced by the defaults. */
export function withInheritedNotifications<T extends object>(sub: T, defaults: StreamNotificationDefaults): T {
  const out = { ...sub } as Record<string, unknown>
  for (const { property } of INHERITED_STREAM_NOTIFICATIONS) if (out[property] === null) out[property] = defaults[property]
  return out as T
}
