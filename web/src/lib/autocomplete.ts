// Compose autocomplete: @people, #channels, :emoji: from the word before the caret.
import { isUserMuted } from '../model/muted-users.js'
import type { State } from '../model/state.js'
import { customEmoji, emojiChar, loadEmoji, type EmojiEntry } from './emoji.js'

/** A choice: its text, what it inserts, and for a custom emoji its image (shown before the text). */
export interface Suggestion { label: string; insert: string; image?: string }

let emoji: EmojiEntry[] = []
let emojiLoading: Promise<void> | undefined

/** Settles once the emoji names a `:` query started loading are in (undefined when none is loading): the caller asks again then. */
export const emojiNamesLoaded = (): Promise<void> | undefined => (emoji.length === 0 ? emojiLoading : undefined)

export function suggestions(state: State, beforeCaret: string, _streamId: number | undefined): Suggestion[] {
  const m = /(?:^|\s)([@#:])([^\s@#:]*)$/.exec(beforeCaret)
  if (!m) return []
  const [, sigil, partial] = m
  const q = (partial ?? '').toLowerCase()
  if (sigil === '@') {
    return [...state.users.values()]
      // Muted users are left out, as upstream's autocomplete does.
      .filter((u) => u.isActive && !isUserMuted(state, u.id) && (u.fullName.toLowerCase().includes(q) || (u.deliveryEmail ?? '').toLowerCase().startsWith(q)))
      .slice(0, 8)
      .map((u) => ({ label: u.deliveryEmail ? `${u.fullName} (${u.deliveryEmail})` : u.fullName, insert: `@**${u.fullName}|${u.id}** ` }))
  }
  if (sigil === '#') {
    return [...state.subscriptions.values()]
      .filter((s) => s.name.toLowerCase().includes(q))
      .slice(0, 8)
      .map((s) => ({ label: `#${s.name}`, insert: `#**${s.name}** ` }))
  }
  if (q.length < 2) return []
  if (emoji.length === 0) emojiLoading ??= loadEmoji().then((e) => void (emoji = e))
  // The organization's custom emoji first; one of them takes the place of a Unicode emoji of the same name.
  const custom = customEmoji(state)
  const names = new Set(custom.map((e) => e.name))
  return [...custom, ...emoji.filter((e) => !names.has(e.name))]
    .filter((e) => e.name.startsWith(q))
    .slice(0, 8)
    .map((e) => (e.type === 'realm_emoji' ? { label: `:${e.name}:`, insert: `:${e.name}: `, image: e.url } : { label: `${emojiChar(e.code)} :${e.name}:`, insert: `:${e.name}: ` }))
}
