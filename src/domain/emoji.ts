// Emoji names and codes, from the emoji-datasource dataset (Unicode names as
// used by Slack/GitHub-style shortcodes). One table serves Markdown `:name:`
// syntax, reactions and user status.
//
// Codes are the API's `unicode_emoji` form: lower-case, dash-separated hex
// codepoints, without the U+FE0F variation selector where the dataset has a
// non-qualified form (`heart` → `2764`, `hash` → `0023-20e3`).

import { createRequire } from 'node:module'

interface DatasetEntry {
  unified: string
  non_qualified: string | null
  short_name: string
  short_names: string[]
  obsoleted_by?: string
}

export type ReactionType = 'unicode_emoji' | 'realm_emoji' | 'service_extra_emoji'

/** The one non-Unicode emoji the service ships (upstream's extra emoji). */
export const SERVICE_EXTRA_EMOJI: ReadonlyMap<string, { code: string }> = new Map([['zulip', { code: 'zulip' }]])
export const SERVICE_EXTRA_EMOJI_URL_PREFIX = '/static/generated/emoji/images/emoji/unicode/'

const nameToCode = new Map<string, string>()
const codeToName = new Map<string, string>()
// Emoji as typed (the literal characters, with or without U+FE0F) → code.
const charsToCode = new Map<string, string>()

const codeOf = (e: DatasetEntry): string => (e.non_qualified ?? e.unified).toLowerCase()
const charsOf = (hex: string): string => String.fromCodePoint(...hex.split('-').map((h) => parseInt(h, 16)))

function load(): void {
  const require = createRequire(import.meta.url)
  const data = require('emoji-datasource/emoji.json') as DatasetEntry[]
  for (const e of data) {
    const code = codeOf(e)
    if (!e.obsoleted_by || !codeToName.has(code)) codeToName.set(code, e.short_name)
    for (const n of e.short_names) if (!nameToCode.has(n)) nameToCode.set(n, code)
    charsToCode.set(charsOf(e.unified), code)
    if (e.non_qualified) charsToCode.set(charsOf(e.non_qualified), code)
  }
}
load()

/** Code for a Unicode emoji name (`smile` → `1f604`); undefined if unknown. */
export function emojiCodeForName(name: string): string | undefined {
  return nameToCode.get(name)
}

/** Canonical name for a Unicode emoji code (`1f604` → `smile`). */
export function emojiNameForCode(code: string): string | undefined {
  return codeToName.get(code.toLowerCase())
}

/** Code for an emoji typed as its literal characters (`😄` → `1f604`). */
export function emojiCodeForCharacters(chars: string): string | undefined {
  return charsToCode.get(chars)
}

/** A known Unicode or service-extra emoji name (realm emoji are checked by the caller). */
export function isValidEmojiName(name: string): boolean {
  return nameToCode.has(name) || SERVICE_EXTRA_EMOJI.has(name)
}

/** Syntax check for names of new custom emoji: lower-case letters, digits, `-` and `_`, not ending in `-` or `_`. */
export function isWellFormedEmojiName(name: string): boolean {
  return /^[0-9a-z\-_]+(?<![-_])$/.test(name)
}

/** Does `code` exist for `type`? Realm emoji codes are the caller's ids. */
export function isValidEmojiCode(code: string, type: ReactionType, realmEmojiIds: ReadonlySet<string> = new Set()): boolean {
  switch (type) {
    case 'unicode_emoji':
      return codeToName.has(code)
    case 'service_extra_emoji':
      return SERVICE_EXTRA_EMOJI.has(code)
    case 'realm_emoji':
      return realmEmojiIds.has(code)
  }
}

export function allEmojiNames(): string[] {
  return [...nameToCode.keys()]
}
