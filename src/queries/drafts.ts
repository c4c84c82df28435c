// GET /drafts: the user's drafts, oldest edit first.
import type { PrismaClient, Tx } from '../db/index.js'
import { presentDraft, type DraftDict } from '../present/draft.js'

export async function getDrafts(db: PrismaClient | Tx, userId: number): Promise<DraftDict[]> {
  const rows = await db.draft.findMany({ where: { userId }, orderBy: [{ lastEditTime: 'asc' }, { id: 'asc' }] })
  return rows.map(presentDraft)
}

/** Whether the user keeps drafts on the server (enable_drafts_synchronization). */
export async function draftsSynchronized(db: PrismaClient | Tx, userId: number): Promise<boolean> {
  const settings = await db.userSettings.findUnique({ where: { userId }, select: { enableDraftsSynchronization: true } })
  return settings?.enableDraftsSynchronization ?? true
}
