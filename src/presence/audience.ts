// Who receives events about a user (realm_user updates, user_status,
// presence): the realm's active users who can access that user. Everyone can,
// unless the realm limits guests (can_access_all_users_group is not
// "everyone"); then a guest sees only itself, bots, people it shares a channel
// with and its direct-message partners (the same rule as access/user.ts, seen
// from the other side).
import type { PrismaClient, Realm, Tx } from '../db/index.js'
import { guestsAreRestricted } from '../access/user.js'
import { isGuest } from '../domain/roles.js'

type Db = PrismaClient | Tx

type ActiveUser = { id: number; role: number }

/** Active users of `realm` who can access user `userId` (sorted by ID). */
export async function usersWhoCanAccess(db: Db, realm: Pick<Realm, 'id' | 'canAccessAllUsersGroupId'>, userId: number): Promise<number[]> {
  const active = await db.user.findMany({ where: { realmId: realm.id, isActive: true }, select: { id: true, role: true }, orderBy: { id: 'asc' } })
  return usersAmongWhoCanAccess(db, realm, userId, active)
}

/** The same, for a caller that has already read the realm's active users (`active`, sorted by ID). */
export async function usersAmongWhoCanAccess(db: Db, realm: Pick<Realm, 'id' | 'canAccessAllUsersGroupId'>, userId: number, active: ActiveUser[]): Promise<number[]> {
  const target = await db.user.findUnique({ where: { id: userId }, select: { isBot: true } })
  const guests = active.filter((u) => isGuest(u.role) && u.id !== userId)
  if (guests.length === 0 || target?.isBot || !(await guestsAreRestricted(db, realm))) return active.map((u) => u.id)
  const allowed = new Set<number>()
  const theirs = await db.subscription.findMany({ where: { userId, active: true }, select: { streamId: true } })
  const sharing = await db.subscription.findMany({
    where: { streamId: { in: theirs.map((s) => s.streamId) }, active: true, userId: { in: guests.map((g) => g.id) } },
    select: { userId: true },
  })
  for (const s of sharing) allowed.add(s.userId)
  const dms = await db.message.findMany({ where: { realmId: realm.id, dmUserIds: { has: userId } }, select: { dmUserIds: true } })
  for (const m of dms) for (const id of m.dmUserIds) allowed.add(id)
  return active.filter((u) => !isGuest(u.role) || u.id === userId || allowed.has(u.id)).map((u) => u.id)
}
