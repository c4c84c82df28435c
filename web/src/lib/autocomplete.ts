// Compose autocomplete: @people, #channels, :emoji: from the word before the caret.
import { isUserMuted } from '../model/muted-users.js'
import type { State } from '../model/state.js'
import { emojiChar, loadEmoji, type EmojiEntry } from './emoji.js'

export interface Suggestion { label: string; insert: string }

let emoji: EmojiEntry[] = []

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
  if (emoji.length === 0) void loadEmoji().then((e) => (emoji = e))
  return emoji
    .filter((e) => e.name.startsWith(q))
    .slice(0, 8)
    .map((e) => ({ label: `${emojiChar(e.code)} :${e.name}:`, insert: `:${e.name}: ` }))
}
