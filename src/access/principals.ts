// `principals` of the subscription endpoints: user IDs or API emails of the
// requester's realm. Unknown → "No such user"; deactivated → "User is
// deactivated" (both 400 BAD_REQUEST since feature level 208). Resolved in
// one or two queries whatever their number (at most MAX_PRINCIPALS), emails
// compared exactly (case-insensitively), never as patterns.
import type { PrismaClient, Tx, User } from '../db/index.js'
import { idsMatchingLower } from '../db/exact-match.js'
import { noSuchUser, principalDeactivated } from '../errors.js'

export type Principals = number[] | string[]

/** The most users one subscribe or unsubscribe request may name. */
export const MAX_PRINCIPALS = 1000

export async function resolvePrincipals(db: PrismaClient | Tx, realmId: number, principals: Principals): Promise<User[]> {
  if (principals.length === 0) return []
  const byEmail = new Map<string, number>()
  let ids: number[]
  if (typeof principals[0] === 'number') {
    ids = principals as number[]
  } else {
    const emails = (principals as string[]).map((p) => p.trim())
    for (const row of await idsMatchingLower(db, 'user_email', { realm_id: realmId }, emails)) byEmail.set(row.key, row.id)
    ids = [...byEmail.values()]
  }
  const users = new Map((await db.user.findMany({ where: { id: { in: [...new Set(ids)] }, realmId } })).map((u) => [u.id, u]))
  const out: User[] = []
  const seen = new Set<number>()
  // Checked in the request's order, so the first bad principal decides the error.
  for (const principal of principals) {
    const id = typeof principal === 'number' ? principal : byEmail.get(principal.trim().toLowerCase())
    const user = id === undefined ? undefined : users.get(id)
    if (!user) throw noSuchUser()
    if (!user.isActive) throw principalDeactivated()
    if (!seen.has(user.id)) out.push(user)
    seen.add(user.id)
  }
  return out
}
