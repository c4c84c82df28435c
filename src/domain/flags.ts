// Per-recipient message flags, stored as one integer bitmask. Bit order is the
// wire-independent storage order; API output lists flags by name.

import { ApiError } from '../errors.js'

export const FLAG_NAMES = [
  'read',
  'starred',
  'collapsed',
  'mentioned',
  'stream_wildcard_mentioned',
  'topic_wildcard_mentioned',
  'group_mentioned',
  'force_expand',
  'force_collapse',
  'has_alert_word',
  'historical',
  'is_private',
  'active_mobile_push_notification',
] as const
export type FlagName = (typeof FLAG_NAMES)[number]

export const FLAG_BITS: Readonly<Record<FlagName, number>> = Object.fromEntries(
  FLAG_NAMES.map((name, i) => [name, 1 << i]),
) as Record<FlagName, number>

export const USER_SETTABLE_FLAGS = ['read', 'starred', 'collapsed'] as const
export type UserSettableFlag = (typeof USER_SETTABLE_FLAGS)[number]

/** Never shown to clients. */
const HIDDEN_FLAGS: readonly FlagName[] = ['is_private', 'active_mobile_push_notification']
/** Any mention of the recipient (what `is:mentioned` matches). */
export const MENTION_MASK =
  FLAG_BITS.mentioned | FLAG_BITS.stream_wildcard_mentioned | FLAG_BITS.topic_wildcard_mentioned | FLAG_BITS.group_mentioned
export const WILDCARD_MASK = FLAG_BITS.stream_wildcard_mentioned | FLAG_BITS.topic_wildcard_mentioned

export const isFlagName = (s: string): s is FlagName => (FLAG_NAMES as readonly string[]).includes(s)

export function hasFlag(mask: number, flag: FlagName): boolean {
  return (mask & FLAG_BITS[flag]) !== 0
}

/** API list: storage order, hidden flags dropped, `wildcard_mentioned` appended when either wildcard bit is set. */
export function flagsToList(mask: number): string[] {
  const out: string[] = FLAG_NAMES.filter((f) => hasFlag(mask, f) && !HIDDEN_FLAGS.includes(f))
  if ((mask & WILDCARD_MASK) !== 0) out.push('wildcard_mentioned')
  return out
}

/** Inverse of flagsToList; `wildcard_mentioned` maps to the stream wildcard bit. Unknown names throw. */
export function listToFlags(flags: readonly string[]): number {
  let mask = 0
  for (const f of flags) {
    if (f === 'wildcard_mentioned') mask |= FLAG_BITS.stream_wildcard_mentioned
    else if (isFlagName(f)) mask |= FLAG_BITS[f]
    else throw new ApiError(`Invalid flag: '${f}'`)
  }
  return mask
}

export interface FlagOperation {
  flag: UserSettableFlag
  op: 'add' | 'remove'
  bit: number
}

/** Validates `POST /messages/flags` arguments with upstream's messages. */
export function parseFlagOperation(flag: string, op: string): FlagOperation {
  if (!isFlagName(flag)) throw new ApiError(`Invalid flag: '${flag}'`)
  if (!(USER_SETTABLE_FLAGS as readonly string[]).includes(flag)) throw new ApiError(`Flag not editable: '${flag}'`)
  if (op !== 'add' && op !== 'remove') throw new ApiError(`Invalid message flag operation: '${op}'`)
  return { flag: flag as UserSettableFlag, op, bit: FLAG_BITS[flag] }
}

export function applyFlagOperation(mask: number, operation: Pick<FlagOperation, 'op' | 'bit'>): number {
  return operation.op === 'add' ? mask | operation.bit : mask & ~operation.bit
}

export interface RecipientFlagInput {
  isSender: boolean
  /** Mentioned directly or through a mentioned group (not silently). */
  mentioned: boolean
  streamWildcard: boolean
  topicWildcard: boolean
  /** Has sent to (or reacted in) the topic; topic wildcards only reach participants. */
  topicParticipant: boolean
  alertWord: boolean
  isPrivate: boolean
  /** The sender's copy starts read (the `read_by_sender` decision). */
  readBySender: boolean
  /** Starts read for other reasons (muted the sender, outside the unread set). */
  markRead?: boolean
}

/** Initial flags of one recipient's copy of a new message. */
export function recipientFlags(r: RecipientFlagInput): number {
  let mask = 0
  if ((r.isSender && r.readBySender) || r.markRead) mask |= FLAG_BITS.read
  if (r.mentioned) mask |= FLAG_BITS.mentioned
  if (r.streamWildcard) mask |= FLAG_BITS.stream_wildcard_mentioned
  if (r.topicWildcard && r.topicParticipant) mask |= FLAG_BITS.topic_wildcard_mentioned
  if (r.alertWord) mask |= FLAG_BITS.has_alert_word
  if (r.isPrivate) mask |= FLAG_BITS.is_private
  return mask
}

/** Flags of a copy created on demand for a message the user can see but never received. */
export const HISTORICAL_FLAGS = FLAG_BITS.read | FLAG_BITS.historical
