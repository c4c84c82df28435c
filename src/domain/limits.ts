// Length limits and the truncation upstream applies instead of rejecting.

import { ApiError } from '../errors.js'

export const MAX_MESSAGE_LENGTH = 10000
export const MAX_TOPIC_LENGTH = 60
export const MAX_STREAM_NAME_LENGTH = 60
export const MAX_STREAM_DESCRIPTION_LENGTH = 1024
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
