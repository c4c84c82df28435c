// The emoji names the server accepts (src/domain/emoji-names.json, code →
// names), loaded on first use as a chunk of its own.
export interface EmojiEntry { name: string; code: string; char: string }

let entries: Promise<EmojiEntry[]> | undefined

export function loadEmoji(): Promise<EmojiEntry[]> {
  entries ??= import('../../../src/domain/emoji-names.json').then((mod) => {
    const data = mod.default as Record<string, string[]>
    const out: EmojiEntry[] = []
    for (const [code, names] of Object.entries(data)) {
      const char = String.fromCodePoint(...code.split('-').map((h) => parseInt(h, 16)))
      for (const name of names) out.push({ name, code, char })
    }
    return out
  })
  return entries
}

export function emojiChar(code: string): string {
  try {
    return String.fromCodePoint(...code.split('-').map((h) => parseInt(h, 16)))
  } catch {
    return code
  }
}
