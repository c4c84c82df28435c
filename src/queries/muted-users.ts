// The users a user has muted, as register's `muted_users` and the
// `muted_users` event carry them: [{ id, timestamp }] in muting order.
import type { PrismaClient, Tx } from '../db/index.js'

type Db = PrismaClient | Tx

export interface MutedUserDict {
  id: number
  timestamp: number
}

export async function fetchMutedUsers(db: Db, userId: number): Promise<MutedUserDict[]> {
  const rows = await db.mutedUser.findMany({ where: { userId }, orderBy: { id: 'asc' }, select: { mutedUserId: true, dateMuted: true } })
  return rows.map((r) => ({ id: r.mutedUserId, timestamp: Math.floor(r.dateMuted.getTime() / 1000) }))
}
