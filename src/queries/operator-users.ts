// What `roost user list` and `roost user show` print: accounts across the
// organizations with the fields an operator needs (never a secret), in
// organization then ID order, read in one bounded statement.
import type { PrismaClient, Prisma } from '../db/index.js'

export interface OperatorUserFilter {
  realmId?: number
  role?: number
  /** true: active accounts only; false: deactivated ones only. */
  active?: boolean
  /** true: bots only; false: people only. */
  bots?: boolean
}

export interface OperatorUser {
  user_id: number
  organization: string
  email: string
  delivery_email: string
  full_name: string
  role: number
  is_active: boolean
  is_bot: boolean
  bot_owner_id: number | null
  date_joined: string
  last_login: string | null
}

const SELECT = {
  id: true,
  email: true,
  deliveryEmail: true,
  fullName: true,
  role: true,
  isActive: true,
  isBot: true,
  botOwnerId: true,
  dateJoined: true,
  lastLogin: true,
  realm: { select: { stringId: true } },
} satisfies Prisma.UserSelect

type Row = Prisma.UserGetPayload<{ select: typeof SELECT }>

const present = (u: Row): OperatorUser => ({
  user_id: u.id,
  organization: u.realm.stringId,
  email: u.email,
  delivery_email: u.deliveryEmail,
  full_name: u.fullName,
  role: u.role,
  is_active: u.isActive,
  is_bot: u.isBot,
  bot_owner_id: u.botOwnerId,
  date_joined: u.dateJoined.toISOString(),
  last_login: u.lastLogin?.toISOString() ?? null,
})

/** At most `limit` accounts matching the filter; `more` tells whether others were left out. */
export async function listOperatorUsers(db: PrismaClient, filter: OperatorUserFilter, limit: number): Promise<{ users: OperatorUser[]; more: boolean }> {
  const rows = await db.user.findMany({
    where: { realmId: filter.realmId, role: filter.role, isActive: filter.active, isBot: filter.bots },
    select: SELECT,
    orderBy: [{ realmId: 'asc' }, { id: 'asc' }],
    take: limit + 1,
  })
  return { users: rows.slice(0, limit).map(present), more: rows.length > limit }
}

export async function operatorUserById(db: PrismaClient, userId: number): Promise<OperatorUser | null> {
  const row = await db.user.findUnique({ where: { id: userId }, select: SELECT })
  return row ? present(row) : null
}
