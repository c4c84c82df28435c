// Alert words: add and remove (case-insensitively, as upstream), then send
// the full list to the user's clients (`alert_words` event). A user has at
// most MAX_ALERT_WORDS_PER_USER words. Every change bumps the realm's
// alert-word version in the same transaction (a trigger on alert_word), so
// each node's cached matcher (queries/alert-word-matcher.ts) is rebuilt
// before its next send.
import type { ActionContext } from './context.js'
import { inTransaction } from './context.js'
import type { Tx } from '../db/index.js'
import { alertWordsEvent } from '../events/schemas/index.js'
import { idsMatchingLower } from '../db/exact-match.js'
import { MAX_ALERT_WORDS_PER_USER, MAX_ALERT_WORD_LENGTH } from '../domain/alert-words.js'
import { tooManyAlertWords } from '../errors.js'

export { MAX_ALERT_WORDS_PER_USER, MAX_ALERT_WORD_LENGTH }

const listOf = async (tx: Tx, userId: number): Promise<string[]> =>
  (await tx.alertWord.findMany({ where: { userId }, orderBy: { id: 'asc' }, select: { word: true } })).map((w) => w.word)

export async function addAlertWords(ctx: ActionContext, words: string[]): Promise<string[]> {
  const { user } = ctx
  return inTransaction(ctx, async (tx, emit) => {
    // Serializes a user's concurrent additions, so the cap holds.
    await tx.$executeRaw`SELECT pg_advisory_xact_lock(7432, ${user.id}::int)`
    const current = await listOf(tx, user.id)
    const existing = new Set(current.map((w) => w.toLowerCase()))
    const fresh: string[] = []
    for (const raw of words) {
      const word = raw.trim()
      if (word === '' || existing.has(word.toLowerCase())) continue
      existing.add(word.toLowerCase())
      fresh.push(word)
    }
    if (current.length + fresh.length > MAX_ALERT_WORDS_PER_USER) throw tooManyAlertWords(MAX_ALERT_WORDS_PER_USER)
    if (fresh.length > 0) await tx.alertWord.createMany({ data: fresh.map((word) => ({ userId: user.id, word })) })
    const all = [...current, ...fresh]
    emit(alertWordsEvent(all), [user.id])
    return all
  })
}

export async function removeAlertWords(ctx: ActionContext, words: string[]): Promise<string[]> {
  const { user } = ctx
  return inTransaction(ctx, async (tx, emit) => {
    const wanted = words.map((w) => w.trim()).filter((w) => w !== '')
    const ids = (await idsMatchingLower(tx, 'alert_word', { user_id: user.id }, wanted)).map((r) => r.id)
    if (ids.length > 0) await tx.alertWord.deleteMany({ where: { id: { in: ids } } })
    const all = await listOf(tx, user.id)
    emit(alertWordsEvent(all), [user.id])
    return all
  })
}
