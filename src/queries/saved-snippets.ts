// GET /saved_snippets and register's `saved_snippets`: the user's saved
// snippets, oldest first (by ID, as upstream's unordered query returns them).
import type { PrismaClient, Tx } from '../db/index.js'
import { presentSavedSnippet, type SavedSnippetDict } from '../present/saved-snippet.js'

export async function getSavedSnippets(db: PrismaClient | Tx, userId: number): Promise<SavedSnippetDict[]> {
  const rows = await db.savedSnippet.findMany({ where: { userId }, orderBy: { id: 'asc' } })
  return rows.map(presentSavedSnippet)
}
