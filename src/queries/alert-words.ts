// The user's alert words (GET /users/me/alert_words, register key `alert_words`).
import type { PrismaClient } from '../db/index.js'

export async function fetchAlertWords(prisma: PrismaClient, userId: number): Promise<string[]> {
  return (await prisma.alertWord.findMany({ where: { userId }, orderBy: { id: 'asc' }, select: { word: true } })).map((w) => w.word)
}
