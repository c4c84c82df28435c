// The emoji the app offers (the picker, the compose autocomplete): the
// organization's custom emoji from State.realmEmoji here; the Unicode ones
// come from the server's names (lib/emoji.ts loadEmoji).
import type { State } from './state.js'

/** An emoji the app offers: a Unicode one (its code points) or one of the organization's custom emoji (its ID and image). */
export interface EmojiEntry { name: string; code: string; char: string; type: 'unicode_emoji' | 'realm_emoji'; url?: string }

/**
 * The organization's active custom emoji, by name: offered before the
 * Unicode ones, as upstream. A deactivated one is not offered (its reactions
 * still show).
 */
export function customEmoji(state: State): EmojiEntry[] {
  return [...state.realmEmoji.values()]
    .filter((e) => !e.deactivated)
    .map((e) => ({ name: e.name, code: e.id, char: '', type: 'realm_emoji' as const, url: e.source_url }))
    .sort((a, b) => a.name.localeCompare(b.name))
}
