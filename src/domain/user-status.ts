// User status rules (spec "User status", upstream-behaviour §10.3): text
// limits, emoji resolution and checks against the emoji dataset, the realm's
// custom emoji and the service's extra emoji, and the wire form. Pure; the
// same emoji check serves reactions.
import { emojiCodeForName, isValidEmojiCode, SERVICE_EXTRA_EMOJI, type ReactionType } from './emoji.js'
import {
  customEmojiDeactivated,
  emojiDoesNotExist,
  emojiNameRequired,
  invalidCustomEmoji,
  invalidCustomEmojiName,
  invalidEmojiCode,
  invalidEmojiName,
  invalidEmojiType,
  noNewStatusValues,
  textTooLong,
} from '../errors.js'

export const MAX_STATUS_TEXT_LENGTH = 60
export const REACTION_TYPES: readonly ReactionType[] = ['unicode_emoji', 'realm_emoji', 'service_extra_emoji']

export interface CustomEmoji {
  id: number
  name: string
  deactivated: boolean
}

export interface StatusEmoji {
  emojiName: string
  emojiCode: string
  reactionType: ReactionType
}

/** Upstream check_emoji_request: does (name, code, type) name one real emoji? */
export function checkEmoji(emoji: { emojiName: string; emojiCode: string; reactionType: string }, realmEmoji: readonly CustomEmoji[]): StatusEmoji {
  const { emojiName: name, emojiCode: code, reactionType: type } = emoji
  switch (type) {
    case 'realm_emoji': {
      const custom = realmEmoji.find((e) => String(e.id) === code)
      if (!custom) throw invalidCustomEmoji()
      if (custom.name !== name) throw invalidCustomEmojiName()
      if (custom.deactivated) throw customEmojiDeactivated()
      break
    }
    case 'service_extra_emoji':
      if (!SERVICE_EXTRA_EMOJI.has(code)) throw invalidEmojiCode()
      if (name !== code) throw invalidEmojiName()
      break
    case 'unicode_emoji':
      if (!isValidEmojiCode(code, 'unicode_emoji')) throw invalidEmojiCode()
      if (emojiCodeForName(name) !== code) throw invalidEmojiName()
      break
    default:
      throw invalidEmojiType()
  }
  return { emojiName: name, emojiCode: code, reactionType: type as ReactionType }
}

/** Upstream get_emoji_data: an emoji name alone → its code and type (active custom emoji first). */
export function emojiForName(name: string, realmEmoji: readonly CustomEmoji[]): StatusEmoji {
  const custom = realmEmoji.find((e) => e.name === name && !e.deactivated)
  if (custom) return { emojiName: name, emojiCode: String(custom.id), reactionType: 'realm_emoji' }
  if (SERVICE_EXTRA_EMOJI.has(name)) return { emojiName: name, emojiCode: SERVICE_EXTRA_EMOJI.get(name)?.code ?? name, reactionType: 'service_extra_emoji' }
  const code = emojiCodeForName(name)
  if (code === undefined) throw emojiDoesNotExist(name)
  return { emojiName: name, emojiCode: code, reactionType: 'unicode_emoji' }
}

export interface StatusRequest {
  statusText?: string
  emojiName?: string
  emojiCode?: string
  reactionType?: string
  away?: boolean
}

export interface StatusChange {
  statusText?: string
  emoji?: StatusEmoji
  away?: boolean
}

/** Validates a POST /users/me/status request into the change to store. */
export function parseStatusRequest(request: StatusRequest, realmEmoji: readonly CustomEmoji[]): StatusChange {
  const statusText = request.statusText?.trim()
  if (request.away === undefined && statusText === undefined && request.emojiName === undefined) throw noNewStatusValues()
  if (statusText !== undefined && Array.from(statusText).length > MAX_STATUS_TEXT_LENGTH) throw textTooLong('status_text', MAX_STATUS_TEXT_LENGTH)
  let emoji: StatusEmoji | undefined
  if (request.emojiName === '') {
    emoji = { emojiName: '', emojiCode: '', reactionType: 'unicode_emoji' }
  } else if (request.emojiName === undefined) {
    if (request.emojiCode !== undefined || request.reactionType !== undefined) throw emojiNameRequired()
  } else {
    const given =
      request.emojiCode !== undefined && request.reactionType !== undefined
        ? { emojiName: request.emojiName, emojiCode: request.emojiCode, reactionType: request.reactionType }
        : emojiForName(request.emojiName, realmEmoji)
    emoji = checkEmoji(given, realmEmoji)
  }
  return { statusText, emoji, away: request.away }
}

export interface StoredStatus {
  statusText: string
  emojiName: string
  emojiCode: string
  reactionType: string
}

export interface StatusDict {
  away?: true
  status_text?: string
  emoji_name?: string
  emoji_code?: string
  reaction_type?: string
}

/** The API's status object: only the keys that are set (`away` only when true). */
export function presentUserStatus(status: StoredStatus | null, presenceEnabled: boolean): StatusDict {
  const out: StatusDict = {}
  if (!presenceEnabled) out.away = true
  if (status?.statusText) out.status_text = status.statusText
  if (status?.emojiName) {
    out.emoji_name = status.emojiName
    out.emoji_code = status.emojiCode
    out.reaction_type = status.reactionType
  }
  return out
}
