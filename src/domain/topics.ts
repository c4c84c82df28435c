// Topic names: normalization, validation and the resolved-topic prefix.

import { ApiError } from '../errors.js'
import { truncateTopic } from './limits.js'

/** U+2714 HEAVY CHECK MARK and a space. */
export const RESOLVED_TOPIC_PREFIX = '✔ '

export function isResolved(topic: string): boolean {
  return topic.startsWith(RESOLVED_TOPIC_PREFIX)
}

export function resolveTopic(topic: string): string {
  return isResolved(topic) ? topic : RESOLVED_TOPIC_PREFIX + topic
}

/** Strips every leading `✔` and space, as upstream's `lstrip("✔ ")`. */
export function unresolveTopic(topic: string): string {
  return topic.replace(/^[✔ ]+/, '')
}

export type TopicResolution = 'resolved' | 'unresolved' | null

/** Whether a topic-only rename is a resolve or unresolve (compared before truncation). */
export function topicResolutionChange(oldTopic: string, newTopic: string): TopicResolution {
  if (isResolved(newTopic) && !isResolved(oldTopic) && newTopic.slice(RESOLVED_TOPIC_PREFIX.length) === oldTopic) {
    return 'resolved'
  }
  if (isResolved(oldTopic) && !isResolved(newTopic) && unresolveTopic(oldTopic) === newTopic) return 'unresolved'
  return null
}

/** Position (1-based) of the first control, surrogate or unassigned character, or null. */
export function firstUnprintablePosition(s: string): number | null {
  let i = 0
  for (const ch of s) {
    i++
    if (/[\p{Cc}\p{Cs}\p{Cn}]/u.test(ch)) return i
  }
  return null
}

/**
 * What clients that cannot show the empty topic (no `empty_topic_name`
 * capability, or `allow_empty_topic_name` false) get in its place: upstream's
 * `realm_empty_topic_display_name` (level 334) in its default language.
 */
export const EMPTY_TOPIC_DISPLAY_NAME = 'general chat'

/** What clients before level 334 sent for a message without a topic; since level 370 it names the empty topic. */
export const NO_TOPIC_NAME = '(no topic)'

/** A channel message's topic as a client gets it: the display name for the empty topic unless it accepts "". */
export function topicForClient(topic: string, allowEmpty: boolean): string {
  return topic === '' && !allowEmpty ? EMPTY_TOPIC_DISPLAY_NAME : topic
}

/** A topic named by a client: the display name of the empty topic names it (upstream maybe_rename_general_chat_to_empty_topic). */
export function topicFromClient(topic: string): string {
  return topic === EMPTY_TOPIC_DISPLAY_NAME ? '' : topic
}

export interface NormalizeTopicOptions {
  /** "(no topic)" names the empty topic too (sending and scheduling since level 370, typing since 372). */
  noTopicIsEmpty?: boolean
}

/**
 * Topic as sent → topic as stored: trimmed, checked, truncated to 60 with
 * `...`. The empty topic is valid (level 334); its display name, and with
 * `noTopicIsEmpty` "(no topic)", stand for it.
 */
export function normalizeTopic(topic: string, options: NormalizeTopicOptions = {}): string {
  const trimmed = topicFromClient(topic.trim())
  if (trimmed === '' || (options.noTopicIsEmpty === true && trimmed === NO_TOPIC_NAME)) return ''
  const bad = firstUnprintablePosition(trimmed)
  if (bad !== null) throw new ApiError(`Invalid character in topic, at position ${bad}!`)
  return truncateTopic(trimmed)
}

/** Topics compare case-insensitively. */
export function topicKey(topic: string): string {
  return topic.toLowerCase()
}

export function sameTopic(a: string, b: string): boolean {
  return topicKey(a) === topicKey(b)
}
