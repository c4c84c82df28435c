// The migration *_derived_billing_admin on rows written before it: the active
// human users an import marked is_billing_admin join can_manage_billing_group
// (an anonymous value gains them as members; a named group or the empty
// column becomes an anonymous group of them with that group as its
// subgroup), organizations without any keep their value, and the column goes.

import t from 'tap'
import { applyMigrations, defaultMigrationsDir } from '../../src/db/migrate.js'
import { getBillingAdminIds } from '../../src/queries/billing-admins.js'
import { migratedBefore } from '../support/migrated-before.js'

const MIGRATION = '20261129095000_derived_billing_admin'

t.test('billing admins stored by imports keep their standing through can_manage_billing_group', async (t) => {
  const db = await migratedBefore(t, MIGRATION)

  // Written in SQL naming only the columns it sets: the Prisma client no longer knows is_billing_admin.
  const { prisma } = db
  const realm = async (stringId: string): Promise<number> => {
    const [row] = await prisma.$queryRaw<{ id: number }[]>`INSERT INTO realm (string_id, name) VALUES (${stringId}, ${stringId}) RETURNING id`
    return row?.id as number
  }
  const group = async (realmId: number, name: string, anonymous = false): Promise<number> => {
    const [row] = await prisma.$queryRaw<{ id: number }[]>`
      INSERT INTO user_group (realm_id, name, is_system_group, is_anonymous) VALUES (${realmId}, ${name}, ${!anonymous}, ${anonymous}) RETURNING id`
    return row?.id as number
  }
  let n = 0
  const user = async (realmId: number, o: { billing?: boolean; bot?: boolean; active?: boolean; groupId?: number } = {}): Promise<number> => {
    const address = `u${n++}@example.org`
    const [row] = await prisma.$queryRaw<{ id: number }[]>`
      INSERT INTO user_profile (realm_id, email, delivery_email, full_name, api_key, is_bot, is_active, is_billing_admin)
      VALUES (${realmId}, ${address}, ${address}, ${address}, ${address.padEnd(32, 'x')}, ${o.bot ?? false}, ${o.active ?? true}, ${o.billing ?? false}) RETURNING id`
    const id = row?.id as number
    if (o.groupId !== undefined) await prisma.$executeRaw`INSERT INTO user_group_member (group_id, user_id) VALUES (${o.groupId}, ${id})`
    return id
  }

  // Acme: the empty column (role:administrators), an administrator, and billing admins of every kind.
  const acme = await realm('acme')
  const acmeAdmins = await group(acme, 'role:administrators')
  const acmeAdmin = await user(acme, { groupId: acmeAdmins })
  const billing = await user(acme, { billing: true })
  await user(acme, { billing: true, bot: true })
  await user(acme, { billing: true, active: false })
  await user(acme)
  // Bolt: an anonymous value already.
  const bolt = await realm('bolt')
  const boltValue = await group(bolt, '@anonymous:bolt', true)
  await prisma.$executeRaw`UPDATE realm SET can_manage_billing_group_id = ${boltValue} WHERE id = ${bolt}`
  const boltMember = await user(bolt, { groupId: boltValue })
  const boltBilling = await user(bolt, { billing: true })
  // Core: no billing admin, nothing changes.
  const core = await realm('core')
  await group(core, 'role:administrators')

  await applyMigrations(db, undefined, { migrationsDir: defaultMigrationsDir() })
  const setting = async (realmId: number) => (await prisma.realm.findUniqueOrThrow({ where: { id: realmId }, select: { canManageBillingGroupId: true } })).canManageBillingGroupId

  const acmeValue = await setting(acme)
  t.not(acmeValue, null)
  const stored = await prisma.userGroup.findUniqueOrThrow({ where: { id: acmeValue as number }, include: { members: true, subgroups: true } })
  t.equal(stored.isAnonymous, true)
  t.same(stored.members.map((m) => m.userId), [billing], 'only the active human billing admin')
  t.same(stored.subgroups.map((s) => s.subgroupId), [acmeAdmins], 'the administrators keep it')
  t.same([...(await getBillingAdminIds(prisma, acme))].sort((a, b) => a - b), [acmeAdmin, billing].sort((a, b) => a - b))

  t.equal(await setting(bolt), boltValue, 'an anonymous value is kept, with a member more')
  t.same([...(await getBillingAdminIds(prisma, bolt))].sort((a, b) => a - b), [boltMember, boltBilling].sort((a, b) => a - b))

  t.equal(await setting(core), null)
  const columns = await prisma.$queryRaw<{ n: number }[]>`SELECT count(*)::int AS n FROM information_schema.columns WHERE table_name = 'user_profile' AND column_name = 'is_billing_admin'`
  t.equal(columns[0]?.n, 0, 'the column is gone')
})
