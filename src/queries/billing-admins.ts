// The spec's `is_billing_admin` of user objects. Upstream level 363 replaced
// the stored flag with the realm's `can_manage_billing_group` and dropped the
// field; Roost keeps it, derived: a user is a billing admin while active and a
// member of the group that setting stores (its default, role:administrators,
// when the column is empty), directly or through subgroups at any depth.
// Membership is the stored rows, as GET /user_groups/{id}/members reports it
// (no waiting-period exception for role:fullmembers: that would flip with the
// clock, with no event to tell clients).
import { Prisma, type PrismaClient, type Tx } from '../db/index.js'
import { SYSTEM_GROUPS } from '../domain/system-groups.js'

type Db = PrismaClient | Tx

/**
 * The realm's billing admins, or those among `userIds` when given: one
 * statement, whatever the number of users. Reads the setting from the realm
 * row, so inside a transaction it sees the transaction's own changes.
 */
export async function getBillingAdminIds(db: Db, realmId: number, userIds?: readonly number[]): Promise<Set<number>> {
  if (userIds !== undefined && userIds.length === 0) return new Set()
  const only = userIds === undefined ? Prisma.empty : Prisma.sql`AND m.user_id = ANY(${[...userIds]}::int[])`
  const rows = await db.$queryRaw<{ user_id: number }[]>(Prisma.sql`
    WITH RECURSIVE setting(id) AS (
      SELECT coalesce(r.can_manage_billing_group_id, g.id)
      FROM realm r LEFT JOIN user_group g ON g.realm_id = r.id AND g.is_system_group AND g.name = ${SYSTEM_GROUPS.administrators}
      WHERE r.id = ${realmId}
    ), below(id) AS (
      SELECT id FROM setting WHERE id IS NOT NULL
      UNION
      SELECT s.subgroup_id FROM user_group_subgroup s JOIN below ON s.supergroup_id = below.id
    )
    SELECT DISTINCT m.user_id FROM user_group_member m
    JOIN below ON m.group_id = below.id
    JOIN user_profile u ON u.id = m.user_id AND u.is_active
    WHERE true ${only}`)
  return new Set(rows.map((r) => Number(r.user_id)))
}
