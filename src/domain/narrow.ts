// Narrows: parsing and validating the wire form, and matching one message
// against a narrow (for event filtering; queries build their own SQL).

import { ApiError, tooManyItems } from '../errors.js'
import { MAX_SMALL_LIST } from './limits.js'
import { inInt32Range } from './int-range.js'
import { FLAG_BITS, MENTION_MASK } from './flags.js'
import { isResolved, topicFromClient } from './topics.js'

export const NARROW_OPERATORS = [
  'channel',
  'channels',
  'topic',
  'sender',
  'dm',
  'dm-including',
  'group-pm-with',
  'is',
  'in',
  'has',
  'near',
  'id',
  'with',
  'search',
] as const
export type NarrowOperator = (typeof NARROW_OPERATORS)[number]

export const IS_OPERANDS = ['dm', 'starred', 'unread', 'mentioned', 'alerted', 'resolved', 'followed', 'muted'] as const
export const HAS_OPERANDS = ['link', 'attachment', 'image', 'reaction'] as const
export const IN_OPERANDS = ['home', 'all'] as const
export const CHANNELS_OPERANDS = ['public', 'web-public'] as const

/**
 * Legacy names. Upstream's NarrowBuilder accepts exactly these besides the
 * operators above (`stream`, `streams`, `pm-with`, `group-pm-with`, and the
 * underscore spellings `pm_with` and `group_pm_with` that older clients such
 * as the terminal client send); `subject`, an old name of `topic`, is kept too.
 */
const OPERATOR_ALIASES: Readonly<Record<string, NarrowOperator>> = {
  stream: 'channel',
  streams: 'channels',
  'pm-with': 'dm',
  pm_with: 'dm',
  group_pm_with: 'group-pm-with',
  subject: 'topic',
}
/** Upstream validates these spellings' operands as plain strings (emails), not IDs. */
const STRING_OPERAND_ALIASES: ReadonlySet<string> = new Set(['pm_with', 'group_pm_with'])
const IS_ALIASES: Readonly<Record<string, string>> = { private: 'dm' }

export type NarrowOperand = string | number | number[]

export interface NarrowTerm {
  operator: NarrowOperator
  operand: NarrowOperand
  negated: boolean
}

/** Operators whose operand may be an id as well as a string. */
const ID_OPERATORS: readonly NarrowOperator[] = ['channel', 'sender', 'dm-including', 'group-pm-with', 'id', 'near', 'with']

export function badNarrow(desc: string): ApiError {
  return new ApiError(`Invalid narrow operator: ${desc}`, 'BAD_NARROW', 400, { desc })
}

const invalidShape = (why: string): ApiError => new ApiError(`Invalid narrow: ${why}`)

const isInt = (v: unknown): v is number => typeof v === 'number' && Number.isInteger(v)
const isOneOf = <T extends string>(list: readonly T[], v: unknown): v is T => typeof v === 'string' && (list as readonly string[]).includes(v)

function checkOperand(operator: NarrowOperator, operand: unknown): NarrowOperand {
  if (operator === 'dm') {
    if (typeof operand === 'string') return operand
    if (isInt(operand)) return [operand]
    if (Array.isArray(operand) && operand.every(isInt)) return operand
    throw invalidShape('operand of dm must be a string or a list of user ids')
  }
  if (ID_OPERATORS.includes(operator)) {
    if (typeof operand === 'string' || isInt(operand)) return operand
    throw invalidShape(`operand of ${operator} must be a string or an integer`)
  }
  if (typeof operand !== 'string') throw invalidShape(`operand of ${operator} must be a string`)
  if (operator === 'search' && operand.trim() === '') throw invalidShape('operand of search must not be empty')
  return operand
}

/** One raw term (`{operator, operand, negated?}` or `[operator, operand]`) → a validated, normalized term. */
export function parseNarrowTerm(raw: unknown): NarrowTerm {
  let operatorRaw: unknown
  let operandRaw: unknown
  let negated: unknown = false
  if (Array.isArray(raw)) {
    if (raw.length !== 2 || typeof raw[0] !== 'string' || typeof raw[1] !== 'string') {
      throw invalidShape('element is not a string pair')
    }
    ;[operatorRaw, operandRaw] = raw
  } else if (raw !== null && typeof raw === 'object') {
    const o = raw as Record<string, unknown>
    if (typeof o.operator !== 'string' || o.operator === '') throw invalidShape("element is missing 'operator' key")
    if (!('operand' in o)) throw invalidShape("element is missing 'operand' key")
    operatorRaw = o.operator
    operandRaw = o.operand
    negated = o.negated ?? false
    if (typeof negated !== 'boolean') throw invalidShape('negated is not a boolean')
  } else {
    throw invalidShape('element is not a dictionary')
  }

  const name = String(operatorRaw)
  const operator = OPERATOR_ALIASES[name] ?? name
  if (!isOneOf(NARROW_OPERATORS, operator)) throw badNarrow(`unknown operator ${name}`)
  if (STRING_OPERAND_ALIASES.has(name) && typeof operandRaw !== 'string') throw invalidShape(`operand of ${name} must be a string`)
  let operand = checkOperand(operator, operandRaw)

  switch (operator) {
    case 'is':
      operand = IS_ALIASES[operand as string] ?? operand
      if (!isOneOf(IS_OPERANDS, operand)) throw badNarrow(`unknown 'is' operand ${String(operandRaw)}`)
      break
    case 'has':
      if (!isOneOf(HAS_OPERANDS, operand)) throw badNarrow(`unknown 'has' operand ${String(operand)}`)
      break
    case 'in':
      if (!isOneOf(IN_OPERANDS, operand)) throw badNarrow(`unknown 'in' operand ${String(operand)}`)
      break
    case 'topic':
      // Clients without the empty topic name it by its display name (upstream update_narrow_terms_containing_empty_topic_fallback_name).
      if (typeof operand === 'string') operand = topicFromClient(operand)
      break
    case 'channels':
      if (!isOneOf(CHANNELS_OPERANDS, operand)) throw badNarrow(`unknown channels operand ${String(operand)}`)
      break
    case 'id':
    case 'near':
    case 'with':
      if (!/^\d+$/.test(String(operand)) || !inInt32Range(Number(operand))) throw badNarrow('Invalid message ID')
      operand = Number(operand)
      break
    default:
      break
  }
  return { operator, operand, negated: negated === true }
}

const isChannelTerm = (t: NarrowTerm): boolean =>
  (!t.negated && (t.operator === 'channel' || t.operator === 'channels' || t.operator === 'topic')) ||
  (t.negated && t.operator === 'is' && t.operand === 'dm')
const isDmTerm = (t: NarrowTerm): boolean =>
  !t.negated &&
  (t.operator === 'dm' || t.operator === 'dm-including' || t.operator === 'group-pm-with' || (t.operator === 'is' && t.operand === 'dm'))

/** The whole `narrow` parameter (already JSON-decoded). */
/** Terms of one `narrow` parameter (GET /messages, matches_narrow, flags for a narrow). */
export const MAX_NARROW_TERMS = MAX_SMALL_LIST

export function parseNarrow(raw: unknown): NarrowTerm[] {
  if (raw === undefined || raw === null) return []
  if (!Array.isArray(raw)) throw invalidShape('argument is not a list')
  if (raw.length > MAX_NARROW_TERMS) throw tooManyItems('narrow', MAX_NARROW_TERMS)
  const terms = raw.map(parseNarrowTerm)
  if (terms.some(isChannelTerm) && terms.some(isDmTerm)) {
    throw badNarrow('No message can be both a channel message and direct message')
  }
  return terms
}

// ---------------------------------------------------------------------------
// Matching

export interface NarrowableMessage {
  id: number
  type: 'stream' | 'private'
  streamId?: number | null
  streamName?: string | null
  streamIsPublic?: boolean
  streamIsWebPublic?: boolean
  topic?: string | null
  senderId: number
  senderEmail: string
  /** Every participant of a direct message, the sender included. */
  dmUsers?: { id: number; email: string }[]
  /** The viewer's flag bitmask for this message. */
  flags: number
  content: string
  renderedContent?: string
  hasLink?: boolean
  hasImage?: boolean
  hasAttachment?: boolean
  hasReaction?: boolean
}

export interface NarrowViewer {
  userId: number
  email?: string
  isTopicFollowed?: (streamId: number, topic: string) => boolean
  /** Muted topic, or muted channel without the topic unmuted. */
  isTopicMuted?: (streamId: number, topic: string) => boolean
}

const lower = (s: string): string => s.toLowerCase()

function userMatches(operand: NarrowOperand, id: number, email: string): boolean {
  if (typeof operand === 'string') return lower(operand) === lower(email)
  return Array.isArray(operand) ? operand.includes(id) : operand === id
}

function dmParticipantIds(m: NarrowableMessage): Set<number> {
  return new Set((m.dmUsers ?? []).map((u) => u.id))
}

function dmMatches(m: NarrowableMessage, operand: NarrowOperand, viewer: NarrowViewer | undefined): boolean {
  if (m.type !== 'private') return false
  const users = m.dmUsers ?? []
  let wanted: number[]
  if (typeof operand === 'string') {
    const ids: number[] = []
    for (const email of operand.split(',').map((e) => lower(e.trim())).filter((e) => e)) {
      const u = users.find((x) => lower(x.email) === email)
      if (!u) return false
      ids.push(u.id)
    }
    wanted = ids
  } else wanted = typeof operand === 'number' ? [operand] : operand
  const want = new Set(wanted)
  const have = dmParticipantIds(m)
  if (viewer) {
    want.add(viewer.userId)
    have.add(viewer.userId)
  }
  return want.size === have.size && [...want].every((id) => have.has(id))
}

function termMatches(m: NarrowableMessage, t: NarrowTerm, viewer: NarrowViewer | undefined): boolean {
  const { operand } = t
  const inStream = m.type === 'stream'
  switch (t.operator) {
    case 'channel':
      return (
        inStream &&
        (typeof operand === 'number' ? m.streamId === operand : lower(m.streamName ?? '') === lower(String(operand)))
      )
    case 'channels':
      return inStream && (operand === 'public' ? m.streamIsPublic === true : m.streamIsWebPublic === true)
    case 'topic':
      return inStream && lower(m.topic ?? '') === lower(String(operand))
    case 'sender':
      return userMatches(operand, m.senderId, m.senderEmail)
    case 'dm':
      return dmMatches(m, operand, viewer)
    case 'dm-including':
      return m.type === 'private' && (m.dmUsers ?? []).some((u) => userMatches(operand, u.id, u.email))
    case 'group-pm-with':
      return (
        m.type === 'private' &&
        dmParticipantIds(m).size >= 3 &&
        (m.dmUsers ?? []).some((u) => userMatches(operand, u.id, u.email))
      )
    case 'is':
      switch (operand) {
        case 'dm':
          return m.type === 'private'
        case 'starred':
          return (m.flags & FLAG_BITS.starred) !== 0
        case 'unread':
          return (m.flags & FLAG_BITS.read) === 0
        case 'mentioned':
          return (m.flags & MENTION_MASK) !== 0
        case 'alerted':
          return (m.flags & FLAG_BITS.has_alert_word) !== 0
        case 'resolved':
          return inStream && isResolved(m.topic ?? '')
        case 'followed':
          return inStream && m.streamId != null && (viewer?.isTopicFollowed?.(m.streamId, m.topic ?? '') ?? false)
        case 'muted':
          // Without the viewer's muting (an event queue's narrow), upstream's event predicate lets every message through.
          if (viewer?.isTopicMuted === undefined) return true
          return inStream && m.streamId != null && viewer.isTopicMuted(m.streamId, m.topic ?? '')
        default:
          return false
      }
    case 'in':
      if (operand === 'all') return true
      return !(inStream && m.streamId != null && (viewer?.isTopicMuted?.(m.streamId, m.topic ?? '') ?? false))
    case 'has':
      switch (operand) {
        case 'link':
          return m.hasLink === true
        case 'attachment':
          return m.hasAttachment === true
        case 'image':
          return m.hasImage === true
        case 'reaction':
          return m.hasReaction === true
        default:
          return false
      }
    case 'id':
      return m.id === Number(operand)
    case 'near':
    case 'with':
      // Anchoring hints for the fetch, not filters.
      return true
    case 'search': {
      const text = lower(m.content)
      const topic = lower(m.topic ?? '')
      return String(operand)
        .split(/\s+/)
        .filter((w) => w)
        .every((w) => text.includes(lower(w)) || topic.includes(lower(w)))
    }
  }
}

/** Does the message satisfy every term (negated terms inverted)? An empty narrow matches all. */
export function matchesNarrow(message: NarrowableMessage, narrow: readonly NarrowTerm[], viewer?: NarrowViewer): boolean {
  return narrow.every((t) => termMatches(message, t, viewer) !== t.negated)
}
