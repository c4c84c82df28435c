// Length limits and the truncation upstream applies instead of rejecting.

import { ApiError } from '../errors.js'

export const MAX_MESSAGE_LENGTH = 10000
/**
 * The most UTF-8 bytes a message's rendered HTML may take (docs/limits.md).
 * Content rendering to more is refused, never stored: a short source can
 * render to far more (an emoji character to about 100 bytes of HTML).
 */
export const MAX_RENDERED_CONTENT_BYTES = 256 * 1024
export const MAX_TOPIC_LENGTH = 60
/** A saved snippet's title (upstream SavedSnippet.MAX_TITLE_LENGTH); its content takes MAX_MESSAGE_LENGTH. */
export const MAX_SAVED_SNIPPET_TITLE_LENGTH = 60
/** Saved snippets one user may keep (upstream has no cap; Roost bounds what register sends). */
export const MAX_SAVED_SNIPPETS_PER_USER = 1000
/**
 * Drafts one user may keep: upstream has no cap but sends at most its
 * MAX_DRAFTS_IN_REGISTER_RESPONSE (1000) newest in register; at this cap
 * register always carries every draft.
 */
export const MAX_DRAFTS_PER_USER = 1000
/**
 * Scheduled messages one user may have waiting (not yet delivered, failed
 * ones included): upstream has no cap. Each carries its source and its
 * rendering, and register sends them all (docs/limits.md).
 */
export const MAX_SCHEDULED_MESSAGES_PER_USER = 100
/**
 * A message keeps at most this many edit-history entries (content edits and
 * moves), the newest; older ones are dropped as new ones come. Upstream keeps
 * every entry; Roost bounds what a message object and
 * GET /messages/{id}/history carry (docs/limits.md).
 */
export const MAX_EDIT_HISTORY_ENTRIES = 100
/** ...and at most this many bytes of them (each entry's stored JSON), the newest entry always kept. */
export const MAX_EDIT_HISTORY_BYTES = 1024 * 1024
export const MAX_STREAM_NAME_LENGTH = 60
export const MAX_STREAM_DESCRIPTION_LENGTH = 1024
/**
 * The most bytes of message JSON one GET /messages answer carries
 * (docs/limits.md): past it the window is cut on the side farthest from the
 * anchor, and found_oldest / found_newest say so. The message nearest the
 * anchor is always sent, whatever its size.
 */
export const MAX_MESSAGES_RESPONSE_BYTES = 8 * 1024 * 1024
export const MESSAGE_TRUNCATION_SUFFIX = '\n[message truncated]'
export const TOPIC_TRUNCATION_SUFFIX = '...'

/** Length in code points (as upstream counts), not UTF-16 units. */
export const codePointLength = (s: string): number => Array.from(s).length

/** Cuts `s` to `max` code points, the last of them being `suffix`, when longer than `max`. */
export function truncate(s: string, max: number, suffix: string): string {
  const chars = Array.from(s)
  if (chars.length <= max) return s
  return chars.slice(0, max - Array.from(suffix).length).join('') + suffix
}

/** Message content as stored: trailing whitespace and leading newlines dropped, truncated to the limit. */
export function normalizeMessageContent(content: string): string {
  const body = content.trimEnd().replace(/^\n+/, '')
  if (body.length === 0) throw new ApiError('Message must not be empty')
  if (body.includes('\u0000')) throw new ApiError('Message must not contain null bytes')
  return truncate(body, MAX_MESSAGE_LENGTH, MESSAGE_TRUNCATION_SUFFIX)
}

export function truncateTopic(topic: string): string {
  return truncate(topic, MAX_TOPIC_LENGTH, TOPIC_TRUNCATION_SUFFIX)
}

// Array parameters: the most elements one request may carry (docs/api.md "Request limits").
// Longer arrays are refused with a 400 naming the parameter before any work.
/** Channels named by one subscribe/unsubscribe request, or changed by one subscription-properties request. */
export const MAX_CHANNELS_PER_REQUEST = 500
/** Users named by `principals` (subscribe, unsubscribe). */
export const MAX_PRINCIPALS_PER_REQUEST = 1000
/** Subscriptions one subscribe/unsubscribe request may change (principals × channels). */
export const MAX_SUBSCRIPTION_CHANGES_PER_REQUEST = 20000
/** Alert words added or removed by one request (a user has at most MAX_ALERT_WORDS_PER_USER). */
export const MAX_ALERT_WORDS_PER_REQUEST = 1000
/** Message IDs of one flags request (upstream's most messages per fetch). */
export const MAX_MESSAGE_IDS_PER_REQUEST = 5000
/** Users of one group-membership change, group creation, typing notification or direct-message recipient list. */
export const MAX_USERS_PER_REQUEST = 1000
/** Drafts created by one request. */
export const MAX_DRAFTS_PER_REQUEST = 100
/** Small lists: custom profile fields (`order`, `profile_data`, `data`), event types, narrow terms. */
export const MAX_SMALL_LIST = 100

/** The latest UNIX timestamp a client-supplied time (a draft's `timestamp`) may name: the end of year 9999, as far as calendars in clients reach. */
export const MAX_CLIENT_TIMESTAMP_SECONDS = 253_402_300_799
