// `principals` of the subscription endpoints: user IDs or API emails of the
// requester's realm. Unknown → "No such user"; deactivated → "User is
// deactivated" (both 400 BAD_REQUEST since feature level 208).
import type { PrismaClient, Tx, User } from '../db/index.js'
import { noSuchUser, principalDeactivated } from '../errors.js'

export type Principals = number[] | string[]

export async function resolvePrincipals(db: PrismaClient | Tx, realmId: number, principals: Principals): Promise<User[]> {
  if (principals.length === 0) return []
  const users: User[] = []
  const seen = new Set<number>()
  for (const principal of principals) {
    const user =
      typeof principal === 'number'
        ? await db.user.findFirst({ where: { id: principal, realmId } })
        : await db.user.findFirst({ where: { realmId, email: { equals: principal.trim(), mode: 'insensitive' } } })
    if (!user) throw noSuchUser()
    if (!user.isActive) throw principalDeactivated()
    if (!seen.has(user.id)) users.push(user)
    seen.add(user.id)
  }
  return users
}
