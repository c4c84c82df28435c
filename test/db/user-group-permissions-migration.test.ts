// The migration *_user_group_permissions on groups made before it: named
// groups get upstream's values for existing groups; system groups and
// anonymous groups keep NULL (role:nobody, and no settings of their own).

import t from 'tap'
import { applyMigrations, defaultMigrationsDir } from '../../src/db/migrate.js'
import { migratedBefore } from '../support/migrated-before.js'

const MIGRATION = '20261129090000_user_group_permissions'

t.test('existing named groups get upstream\'s settings; system and anonymous groups keep none', async (t) => {
  const db = await migratedBefore(t, MIGRATION)

  // Written in SQL naming only the columns it sets: the Prisma client knows columns this schema lacks.
  const { prisma } = db
  const group = async (realmId: number, name: string, system: boolean, anonymous = false): Promise<number> => {
    const [row] = await prisma.$queryRaw<{ id: number }[]>`
      INSERT INTO user_group (realm_id, name, is_system_group, is_anonymous) VALUES (${realmId}, ${name}, ${system}, ${anonymous}) RETURNING id`
    if (!row) throw new Error('no group')
    return row.id
  }
  const realms: { id: number; nobody: number; everyone: number; team: number }[] = []
  for (const stringId of ['acme', 'other']) {
    const [realm] = await prisma.$queryRaw<{ id: number }[]>`INSERT INTO realm (string_id, name) VALUES (${stringId}, ${stringId}) RETURNING id`
    if (!realm) throw new Error('no realm')
    realms.push({ id: realm.id, nobody: await group(realm.id, 'role:nobody', true), everyone: await group(realm.id, 'role:everyone', true), team: await group(realm.id, `team-${stringId}`, false) })
  }
  const anonymous = await group(realms[0]!.id, '@anonymous:x', false, true)

  await applyMigrations(db, undefined, { migrationsDir: defaultMigrationsDir() })
  const settings = { canManageGroupId: true, canJoinGroupId: true, canLeaveGroupId: true, canAddMembersGroupId: true, canRemoveMembersGroupId: true } as const
  const of = (id: number) => prisma.userGroup.findUniqueOrThrow({ where: { id }, select: settings })
  for (const r of realms) {
    t.same(await of(r.team), { canManageGroupId: r.nobody, canJoinGroupId: r.nobody, canLeaveGroupId: r.everyone, canAddMembersGroupId: r.team, canRemoveMembersGroupId: r.nobody }, 'each realm\'s own system groups')
    t.same(await of(r.nobody), { canManageGroupId: null, canJoinGroupId: null, canLeaveGroupId: null, canAddMembersGroupId: null, canRemoveMembersGroupId: null })
  }
  t.same(await of(anonymous), { canManageGroupId: null, canJoinGroupId: null, canLeaveGroupId: null, canAddMembersGroupId: null, canRemoveMembersGroupId: null })
})
