// Channel and subscription rows → the API's channel object and subscription
// dict (spec "Channel object", upstream §2 "subscription" add payload). No I/O:
// callers load subscribers and traffic and pass them in.
import type { Stream, Subscription } from '../db/index.js'

/** stream_post_policy value that marks a channel as announcement-only (administrators post). */
export const STREAM_POST_POLICY_ADMINS = 2

export interface StreamObject {
  stream_id: number
  name: string
  description: string
  rendered_description: string
  date_created: number
  creator_id: number | null
  invite_only: boolean
  is_web_public: boolean
  stream_post_policy: number
  is_announcement_only: boolean
  message_retention_days: number | null
  history_public_to_subscribers: boolean
  first_message_id: number | null
  can_remove_subscribers_group: number
  stream_weekly_traffic: number | null
  subscribers?: number[]
  is_default?: boolean
}

export interface SubscriptionObject extends StreamObject {
  color: string
  is_muted: boolean
  in_home_view: boolean
  pin_to_top: boolean
  desktop_notifications: boolean | null
  audible_notifications: boolean | null
  push_notifications: boolean | null
  email_notifications: boolean | null
  wildcard_mentions_notify: boolean | null
}

export interface PresentStreamOptions {
  /** Subscriber user IDs; the key is present only when given. */
  subscribers?: number[]
  /** Estimated messages per week; null (unknown) by default. */
  weeklyTraffic?: number | null
  /** Adds `is_default` (GET /streams with include_default). */
  isDefault?: boolean
}

export const toUnixSeconds = (date: Date): number => Math.floor(date.getTime() / 1000)

export function presentStream(stream: Stream, options: PresentStreamOptions = {}): StreamObject {
  const out: StreamObject = {
    stream_id: stream.id,
    name: stream.name,
    description: stream.description,
    rendered_description: stream.renderedDescription,
    date_created: toUnixSeconds(stream.dateCreated),
    creator_id: stream.creatorId,
    invite_only: stream.inviteOnly,
    is_web_public: stream.isWebPublic,
    stream_post_policy: stream.streamPostPolicy,
    is_announcement_only: stream.streamPostPolicy === STREAM_POST_POLICY_ADMINS,
    message_retention_days: stream.messageRetentionDays,
    history_public_to_subscribers: stream.historyPublicToSubscribers,
    first_message_id: stream.firstMessageId,
    can_remove_subscribers_group: stream.canRemoveSubscribersGroupId,
    stream_weekly_traffic: options.weeklyTraffic ?? null,
  }
  if (options.subscribers !== undefined) out.subscribers = [...options.subscribers]
  if (options.isDefault !== undefined) out.is_default = options.isDefault
  return out
}

/** The user's subscription to `stream` as in the `subscription add` event and GET /users/me/subscriptions. */
export function presentSubscription(sub: Subscription, stream: Stream, options: Omit<PresentStreamOptions, 'isDefault'> = {}): SubscriptionObject {
  return {
    ...presentStream(stream, options),
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
