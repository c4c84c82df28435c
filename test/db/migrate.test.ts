// applyMigrations on embedded PGlite and on real PostgreSQL. The PostgreSQL
// cases create and drop their own database on the server at
// ROOST_TEST_PG_ADMIN_URL (default postgresql://postgres@127.0.0.1:5432/postgres).
import { createHash, randomUUID } from 'node:crypto'
import { mkdtemp, mkdir, readFile, rm, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'

import t from 'tap'
import { openDatabase, type Database } from '../../src/db/client.js'
import { applyMigrations, defaultMigrationsDir, readMigrations } from '../../src/db/migrate.js'
import { emptyPGlite } from '../support/pglite-image.js'
import { throwawayDatabase } from '../support/throwaway-db.js'


const EXPECTED_TABLES = [
  'alert_word', 'attachment', 'attachment_message', 'attachment_scheduled_message', 'custom_profile_field',
  'custom_profile_field_value', 'default_stream', 'draft', 'email_change_request', 'invitation', 'message',
  'multiuse_invite', 'reaction', 'realm', 'realm_domain', 'realm_emoji', 'realm_linkifier', 'scheduled_message',
  'stream', 'subscription', 'user_group', 'user_group_member', 'user_group_subgroup', 'user_message',
  'user_profile', 'user_settings', 'user_status', 'user_topic',
]

interface Tap {
  teardown(fn: () => unknown): void
}

async function tableNames(db: Database): Promise<string[]> {
  // ::text — the pg adapter cannot decode PostgreSQL's `name` type (prisma/orm#27403).
  const rows = await db.prisma.$queryRaw<{ table_name: string }[]>`
    SELECT table_name::text AS table_name FROM information_schema.tables WHERE table_schema = 'public' ORDER BY table_name`
  return rows.map((r) => r.table_name)
}

async function recorded(db: Database): Promise<{ migration_name: string; checksum: string; applied_steps_count: number }[]> {
  return db.prisma.$queryRaw`
    SELECT migration_name, checksum, applied_steps_count FROM _prisma_migrations ORDER BY migration_name`
}

async function tempMigrations(t: Tap, migrations: Record<string, string>): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'roost-migrations-'))
  t.teardown(() => rm(dir, { recursive: true, force: true }))
  for (const [name, sql] of Object.entries(migrations)) {
    await mkdir(path.join(dir, name))
    await writeFile(path.join(dir, name, 'migration.sql'), sql)
  }
  return dir
}

t.test('the committed migrations are found from the package root', async (t) => {
  const migrations = await readMigrations(defaultMigrationsDir())
  t.ok(migrations.length >= 1)
  t.match(migrations[0].name, /^\d{14}_init$/)
  const bytes = await readFile(path.join(defaultMigrationsDir(), migrations[0].name, 'migration.sql'))
  t.equal(migrations[0].checksum, createHash('sha256').update(bytes).digest('hex'))
})

t.test('in-memory PGlite', async (t) => {
  const db = await emptyPGlite()
  t.teardown(() => db.close())
  const all = (await readMigrations(defaultMigrationsDir())).map((m) => m.name)

  t.test('the first run applies every migration and creates the tables', async (t) => {
    const logged: string[] = []
    t.same(await applyMigrations(db, (msg) => logged.push(msg)), all)
    t.same(logged, all.map((name) => `applied migration ${name}`))
    const tables = await tableNames(db)
    for (const table of EXPECTED_TABLES) t.ok(tables.includes(table), `table ${table}`)
  })

  t.test('records each migration as Prisma does', async (t) => {
    const migrations = await readMigrations(defaultMigrationsDir())
    t.same(
      await recorded(db),
      migrations.map((m) => ({ migration_name: m.name, checksum: m.checksum, applied_steps_count: 1 })),
    )
  })

  t.test('a second run applies nothing', async (t) => {
    t.same(await applyMigrations(db), [])
    t.equal((await recorded(db)).length, all.length)
  })

  t.test('the schema works through Prisma', async (t) => {
    const { prisma } = db
    const realm = await prisma.realm.create({ data: { stringId: 'mig', name: 'Migration test' } })
    t.equal(realm.canMoveMessagesBetweenTopicsGroupId, null)
    t.equal(realm.messageContentEditLimitSeconds, 600)
    const everyone = await prisma.userGroup.create({ data: { realmId: realm.id, name: 'role:everyone', isSystemGroup: true } })
    const user = await prisma.user.create({
      data: {
        realmId: realm.id, email: 'Ann@example.com', deliveryEmail: 'Ann@example.com', fullName: 'Ann',
        apiKey: randomUUID().replaceAll('-', ''), settings: { create: {} },
      },
      include: { settings: true },
    })
    t.equal(user.role, 400)
    t.equal(user.settings?.webHomeView, 'inbox')
    t.equal(user.settings?.emailNotificationsBatchingPeriodSeconds, 120)
    const stream = await prisma.stream.create({ data: { realmId: realm.id, name: 'general', canRemoveSubscribersGroupId: everyone.id } })
    const dm = await prisma.message.create({
      data: {
        realmId: realm.id, senderId: user.id, dmUserIds: [user.id], content: 'hi', renderedContent: '<p>hi</p>',
        dateSent: new Date(), editHistory: [{ timestamp: 1, prev_content: 'x' }],
      },
    })
    t.same(dm.dmUserIds, [user.id])
    t.same(dm.editHistory, [{ timestamp: 1, prev_content: 'x' }])
    await prisma.userMessage.create({ data: { userId: user.id, messageId: dm.id, flags: 2048 } })
    const unread = await prisma.$queryRaw<{ n: number }[]>`
      SELECT count(*)::int AS n FROM user_message WHERE user_id = ${user.id} AND (flags & 1) = 0`
    t.equal(unread[0].n, 1)
    await t.rejects(
      prisma.user.create({
        data: { realmId: realm.id, email: 'ann@EXAMPLE.com', deliveryEmail: 'ann@EXAMPLE.com', fullName: 'Ann 2', apiKey: 'k'.repeat(32) },
      }),
      'delivery e-mail addresses are unique per realm regardless of case',
    )
    await t.rejects(
      prisma.stream.create({ data: { realmId: realm.id, name: 'GENERAL', canRemoveSubscribersGroupId: everyone.id } }),
      'channel names are unique per realm regardless of case',
    )
    t.equal(stream.canSendMessageGroupId, null)
  })

  t.test('concurrent runs on one database are serialized', async (t) => {
    const fresh = await emptyPGlite()
    t.teardown(() => fresh.close())
    const [a, b] = await Promise.all([applyMigrations(fresh), applyMigrations(fresh)])
    t.same([...a, ...b].sort(), all)
    t.equal((await recorded(fresh)).length, all.length)
  })
})

t.test('PGlite on disk keeps its migrations across reopening', async (t) => {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'roost-data-'))
  t.teardown(() => rm(dataDir, { recursive: true, force: true }))
  const first = await openDatabase({ dataDir })
  t.ok((await applyMigrations(first)).length >= 1)
  await first.close()
  const second = await openDatabase({ dataDir })
  t.teardown(() => second.close())
  t.same(await applyMigrations(second), [])
  t.ok((await tableNames(second)).includes('message'))
})

t.test('a failing migration leaves nothing behind and stops the run', async (t) => {
  const db = await emptyPGlite()
  t.teardown(() => db.close())
  const dir = await tempMigrations(t, {
    '20000101000000_ok': 'CREATE TABLE a (id int);',
    '20000102000000_bad': 'CREATE TABLE b (id int);\nSELECT * FROM no_such_table;',
    '20000103000000_later': 'CREATE TABLE c (id int);',
  })
  await t.rejects(applyMigrations(db, undefined, { migrationsDir: dir }), /no_such_table/)
  t.same((await recorded(db)).map((r) => r.migration_name), ['20000101000000_ok'])
  const tables = await tableNames(db)
  t.ok(tables.includes('a'))
  t.notOk(tables.includes('b'), 'the failed migration was rolled back')
  t.notOk(tables.includes('c'), 'later migrations did not run')
})

t.test('a migration edited after it was applied is reported, not re-applied', async (t) => {
  const db = await emptyPGlite()
  t.teardown(() => db.close())
  const before = await tempMigrations(t, { '20000101000000_one': 'CREATE TABLE a (id int);' })
  await applyMigrations(db, undefined, { migrationsDir: before })
  const after = await tempMigrations(t, { '20000101000000_one': 'CREATE TABLE a (id bigint);' })
  const logged: string[] = []
  t.same(await applyMigrations(db, (msg) => logged.push(msg), { migrationsDir: after }), [])
  t.match(logged, [/20000101000000_one was modified after it was applied/])
})

t.test('PostgreSQL', async (t) => {
  t.test('two nodes migrating at once apply each migration once', async (t) => {
    const url = await throwawayDatabase(t)
    const all = (await readMigrations(defaultMigrationsDir())).map((m) => m.name)
    const a = await openDatabase({ databaseUrl: url })
    const b = await openDatabase({ databaseUrl: url })
    t.teardown(async () => {
      await a.close()
      await b.close()
    })
    const [fromA, fromB] = await Promise.all([applyMigrations(a), applyMigrations(b)])
    t.same([...fromA, ...fromB].sort(), all)
    t.same((await recorded(a)).map((r) => r.migration_name), all)
    const tables = await tableNames(b)
    for (const table of EXPECTED_TABLES) t.ok(tables.includes(table), `table ${table}`)
    t.same(await applyMigrations(a), [])
  })

  t.test('several migrations from many concurrent runs', async (t) => {
    const url = await throwawayDatabase(t)
    const dir = await tempMigrations(t, {
      '20000101000000_one': 'CREATE TABLE one (id int);',
      '20000102000000_two': 'CREATE TABLE two (id int);\nINSERT INTO one VALUES (1);',
      '20000103000000_three': 'CREATE TABLE three (id int);',
    })
    const dbs = await Promise.all([1, 2, 3, 4].map(() => openDatabase({ databaseUrl: url })))
    t.teardown(() => Promise.all(dbs.map((db) => db.close())))
    const results = await Promise.all(dbs.map((db) => applyMigrations(db, undefined, { migrationsDir: dir })))
    t.same(results.flat().sort(), ['20000101000000_one', '20000102000000_two', '20000103000000_three'])
    const ones = await dbs[0].prisma.$queryRaw<{ n: number }[]>`SELECT count(*)::int AS n FROM one`
    t.equal(ones[0].n, 1, 'the data step ran once')
  })

  t.test('a bad DATABASE_URL is an error naming the variable', async (t) => {
    await t.rejects(openDatabase({ databaseUrl: 'mysql://localhost/x' }), /DATABASE_URL/)
    await t.rejects(openDatabase({ databaseUrl: 'postgresql://postgres@127.0.0.1:1/none' }), /DATABASE_URL: cannot connect/)
  })
})
