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

/** Topic as sent → topic as stored: trimmed, checked, truncated to 60 with `...`. */
export function normalizeTopic(topic: string): string {
  const trimmed = topic.trim()
  if (trimmed === '') throw new ApiError("Topic can't be empty!")
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
