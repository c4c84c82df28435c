// Alert words: add and remove (case-insensitively, as upstream), then send
// the full list to the user's clients (`alert_words` event).
import type { ActionContext } from './context.js'
import { inTransaction } from './context.js'
import type { Tx } from '../db/index.js'

export const MAX_ALERT_WORD_LENGTH = 100

const listOf = async (tx: Tx, userId: number): Promise<string[]> =>
  (await tx.alertWord.findMany({ where: { userId }, orderBy: { id: 'asc' }, select: { word: true } })).map((w) => w.word)

export async function addAlertWords(ctx: ActionContext, words: string[]): Promise<string[]> {
  return inTransaction(ctx, async (tx, emit) => {
    const existing = new Set((await listOf(tx, ctx.user.id)).map((w) => w.toLowerCase()))
    const fresh: string[] = []
    for (const raw of words) {
      const word = raw.trim()
      if (word === '' || existing.has(word.toLowerCase())) continue
      existing.add(word.toLowerCase())
      fresh.push(word)
    }
    if (fresh.length > 0) await tx.alertWord.createMany({ data: fresh.map((word) => ({ userId: ctx.user.id, word })) })
    const all = await listOf(tx, ctx.user.id)
    emit({ type: 'alert_words', alert_words: all }, [ctx.user.id])
    return all
  })
}

export async function removeAlertWords(ctx: ActionContext, words: string[]): Promise<string[]> {
  return inTransaction(ctx, async (tx, emit) => {
    for (const raw of words) {
      const word = raw.trim()
      if (word !== '') await tx.alertWord.deleteMany({ where: { userId: ctx.user.id, word: { equals: word, mode: 'insensitive' } } })
    }
    const all = await listOf(tx, ctx.user.id)
    emit({ type: 'alert_words', alert_words: all }, [ctx.user.id])
    return all
  })
}
