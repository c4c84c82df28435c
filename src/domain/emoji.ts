// Emoji names and codes. Unicode emoji names are those of the upstream
// server (`+1`/`thumbs_up`/`like` → `1f44d`, `working_on_it` → `1f6e0`), kept
// in emoji-names.json, which scripts/emoji/generate-emoji-names.mjs builds
// from the emoji-datasource dataset; the same table checks reactions and
// user statuses, renders `:name:` in Markdown and is served to clients as the
// `server_emoji_data_url` document. One table, so what a client's picker
// offers is exactly what Roost accepts.
//
// Codes are the API's `unicode_emoji` form: lower-case hex code points of at
// least four digits joined by `-`, without U+FE0F (`heart` → `2764`,
// `hash` → `0023-20e3`).

import { createRequire } from 'node:module'
import emojiNames from './emoji-names.json' with { type: 'json' }

interface DatasetEntry {
  unified: string
}

export type ReactionType = 'unicode_emoji' | 'realm_emoji' | 'service_extra_emoji'

/** The one non-Unicode emoji the service ships (upstream's extra emoji). */
export const SERVICE_EXTRA_EMOJI: ReadonlyMap<string, { code: string }> = new Map([['zulip', { code: 'zulip' }]])
export const SERVICE_EXTRA_EMOJI_URL_PREFIX = '/static/generated/emoji/images/emoji/unicode/'

const require = createRequire(import.meta.url)
/** Code → names, the canonical name first: upstream's `code_to_names`. */
const CODE_TO_NAMES: Readonly<Record<string, readonly string[]>> = emojiNames

const nameToCode = new Map<string, string>()
// Emoji as typed (the literal characters, with or without U+FE0F) → code.
const charsToCode = new Map<string, string>()

const codeOf = (unified: string): string =>
  unified
    .split('-')
    .map((h) => parseInt(h, 16))
    .filter((c) => c !== 0xfe0f)
    .map((c) => c.toString(16).padStart(4, '0'))
    .join('-')
const charsOf = (hex: string): string => String.fromCodePoint(...hex.split('-').map((h) => parseInt(h, 16)))

function load(): void {
  for (const [code, names] of Object.entries(CODE_TO_NAMES)) for (const n of names) nameToCode.set(n, code)
  for (const e of require('emoji-datasource/emoji.json') as DatasetEntry[]) {
    const code = codeOf(e.unified)
    if (!(code in CODE_TO_NAMES)) continue
    charsToCode.set(charsOf(e.unified), code)
    charsToCode.set(charsOf(code), code)
  }
}
load()

/** Code for a Unicode emoji name or alias (`thumbs_up` → `1f44d`); undefined if unknown. */
export function emojiCodeForName(name: string): string | undefined {
  return nameToCode.get(name)
}

/** Canonical name for a Unicode emoji code (`1f44d` → `+1`). */
export function emojiNameForCode(code: string): string | undefined {
  return CODE_TO_NAMES[code.toLowerCase()]?.[0]
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
      return Object.hasOwn(CODE_TO_NAMES, code)
    case 'service_extra_emoji':
      return SERVICE_EXTRA_EMOJI.has(code)
    case 'realm_emoji':
      return realmEmojiIds.has(code)
  }
}

export function allEmojiNames(): string[] {
  return [...nameToCode.keys()]
}

/** The `server_emoji_data_url` document: `{ code_to_names: { "1f44d": ["+1", "thumbs_up", "like"], … } }`. */
export function serverEmojiData(): { code_to_names: Readonly<Record<string, readonly string[]>> } {
  return { code_to_names: CODE_TO_NAMES }
}
