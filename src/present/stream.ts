// Channel and subscription rows → the API's channel object and subscription
// dict (spec "Channel object", upstream §2 "subscription" add payload). No I/O:
// callers load subscribers and traffic and pass them in.
import type { Stream, Subscription } from '../db/index.js'
import type { StreamDict, SubscriptionDict } from '../events/schemas/common.js'
import { STREAM_POST_POLICY_ADMINS } from '../domain/permission-settings.js'
import { streamSettingsWire, type StreamGroupContext } from '../domain/stream-settings.js'

export type { StreamGroupContext }

/** The channel object and the subscription dict, defined by their schemas in events/schemas/common.ts. */
export type StreamObject = StreamDict
export type SubscriptionObject = SubscriptionDict

export interface PresentStreamOptions {
  /** Subscriber user IDs; the key is present only when given. */
  subscribers?: number[]
  /** Estimated messages per week; null (unknown) by default. */
  weeklyTraffic?: number | null
  /** Adds `is_default` (GET /streams with include_default). */
  isDefault?: boolean
}

export const toUnixSeconds = (date: Date): number => Math.floor(date.getTime() / 1000)

/** `groups` (queries/stream-permissions.ts getStreamGroupContext) presents the group settings. */
export function presentStream(stream: Stream, groups: StreamGroupContext, options: PresentStreamOptions = {}): StreamObject {
  const settings = streamSettingsWire(groups, stream)
  const out: StreamObject = {
    stream_id: stream.id,
    name: stream.name,
    description: stream.description,
    rendered_description: stream.renderedDescription,
    date_created: toUnixSeconds(stream.dateCreated),
    creator_id: stream.creatorId,
    invite_only: stream.inviteOnly,
    is_web_public: stream.isWebPublic,
    // Deprecated by level 333: derived from can_send_message_group.
    stream_post_policy: settings.stream_post_policy,
    is_announcement_only: settings.stream_post_policy === STREAM_POST_POLICY_ADMINS,
    message_retention_days: stream.messageRetentionDays,
    history_public_to_subscribers: stream.historyPublicToSubscribers,
    first_message_id: stream.firstMessageId,
    can_add_subscribers_group: settings.can_add_subscribers_group,
    can_administer_channel_group: settings.can_administer_channel_group,
    can_remove_subscribers_group: settings.can_remove_subscribers_group,
    can_send_message_group: settings.can_send_message_group,
    can_subscribe_group: settings.can_subscribe_group,
    // Level 315.
    is_archived: stream.deactivated,
    // Level 323.
    is_recently_active: stream.isRecentlyActive,
    stream_weekly_traffic: options.weeklyTraffic ?? null,
  }
  if (options.subscribers !== undefined) out.subscribers = [...options.subscribers]
  if (options.isDefault !== undefined) out.is_default = options.isDefault
  return out
}

/** The user's subscription to `stream` as in the `subscription add` event and GET /users/me/subscriptions. */
export function presentSubscription(sub: Subscription, stream: Stream, groups: StreamGroupContext, options: Omit<PresentStreamOptions, 'isDefault'> = {}): SubscriptionObject {
  return {
    ...presentStream(stream, groups, options),
    color: sub.color,
    is_muted: sub.isMuted,
    in_home_view: !sub.isMuted,
    pin_to_top: sub.pinToTop,
    desktop_notifications: sub.desktopNotifications,
    audible_notifications: sub.audibleNotifications,
    push_notifications: sub.pushNotifications,
    email_notifications: sub.emailNotifications,
    wildcard_mentions_notify: sub.wildcardMentionsNotify,
  }
}

/** Sorts channel or subscription objects by name (code-point order, as upstream). */
export function sortByName<T extends { name: string }>(items: T[]): T[] {
  return items.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
}
