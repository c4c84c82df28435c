// Alert words, matched as upstream does (zerver/lib/markdown
// AlertWordNotificationProcessor with a per-realm Aho–Corasick automaton):
// one pass over the lower-cased message finds every occurrence of every word
// of the realm, whatever their number, and an occurrence counts when the
// character before it is the start of the message or one of
// ` \n(".,';[*`>` and the character after it is the end or one of
// ` \n)?:.,';]!*``. So "deploy" alerts in "(deploy)" and "deploy!" but not in
// "redeploy" or "deploys".
import AhoCorasick from 'modern-ahocorasick'

/** Alert words a user may have (upstream-like cap; a send costs the same however many). */
export const MAX_ALERT_WORDS_PER_USER = 1000
/** Characters in one alert word (upstream's limit). */
export const MAX_ALERT_WORD_LENGTH = 100

const ALLOWED_BEFORE = new Set([' ', '\n', '(', '"', '.', ',', "'", ';', '[', '*', '`', '>'])
const ALLOWED_AFTER = new Set([' ', '\n', ')', '?', ':', '.', ',', "'", ';', ']', '!', '*', '`'])

export interface AlertWordOwner {
  userId: number
  word: string
}

/** The realm's alert words compiled once; matching a message is one pass over it. */
export class AlertWordMatcher {
  private readonly automaton: AhoCorasick<number[]> | undefined
  readonly wordCount: number

  constructor(words: Iterable<AlertWordOwner>) {
    const owners = new Map<string, number[]>()
    for (const { userId, word } of words) {
      const key = word.trim().toLowerCase()
      if (key === '') continue
      const list = owners.get(key)
      if (list) list.push(userId)
      else owners.set(key, [userId])
    }
    this.wordCount = owners.size
    this.automaton = owners.size === 0 ? undefined : new AhoCorasick([...owners].map(([pattern, data]) => ({ pattern, data })))
  }

  /** The users (of `among`, when given) with an alert word in `content`. */
  usersAlerted(content: string, among?: ReadonlySet<number>): Set<number> {
    const out = new Set<number>()
    if (!this.automaton || content === '') return out
    const text = content.toLowerCase()
    const done = new Set<number>() // a word's users are added once, however often it occurs
    for (const match of this.automaton.iterate(text, { strategy: 'all' })) {
      if (done.has(match.patternIndex)) continue
      const before = match.start === 0 || ALLOWED_BEFORE.has(text[match.start - 1] as string)
      const after = match.end >= text.length || ALLOWED_AFTER.has(text[match.end] as string)
      if (!before || !after) continue
      done.add(match.patternIndex)
      for (const userId of match.data ?? []) if (!among || among.has(userId)) out.add(userId)
    }
    return out
  }
}
