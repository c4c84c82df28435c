// The migration *_hidden_api_emails on rows written before it: people whose
// address is hidden get the stand-in API email; public people and bots keep
// their address.
import { cp, mkdtemp, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'

import t from 'tap'
import { applyMigrations, defaultMigrationsDir, readMigrations } from '../../src/db/migrate.js'
import { emptyPGlite } from '../support/pglite-image.js'

const MIGRATION = '20261129070000_hidden_api_emails'

t.test('existing people whose address is hidden get the stand-in API email, others keep theirs', async (t) => {
  const db = await emptyPGlite()
  t.teardown(() => db.close())
  const dir = await mkdtemp(path.join(os.tmpdir(), 'roost-migrations-'))
  t.teardown(() => rm(dir, { recursive: true, force: true }))
  const names = (await readMigrations(defaultMigrationsDir())).map((m) => m.name)
  t.ok(names.includes(MIGRATION))
  for (const name of names.filter((n) => n < MIGRATION)) await cp(path.join(defaultMigrationsDir(), name), path.join(dir, name), { recursive: true })
  await applyMigrations(db, undefined, { migrationsDir: dir })

  const { prisma } = db
  const realm = await prisma.realm.create({ data: { stringId: 'acme', name: 'Acme' } })
  const person = (local: string, visibility: number, isBot = false) =>
    prisma.user.create({
      data: {
        realmId: realm.id,
        email: `${local}@acme.example`,
        deliveryEmail: `${local}@acme.example`,
        fullName: local,
        apiKey: local.padEnd(32, 'x'),
        isBot,
        settings: { create: { emailAddressVisibility: visibility } },
      },
    })
  const bot = await person('notification-bot', 1, true)
  await prisma.user.update({ where: { id: bot.id }, data: { email: 'notification-bot@acme.chat.example', deliveryEmail: 'notification-bot@acme.chat.example' } })
  await prisma.realm.update({ where: { id: realm.id }, data: { notificationBotId: bot.id } })
  const open = await person('open', 1)
  const admins = await person('admins', 3)
  const nobody = await person('nobody', 4)
  const hiddenBot = await person('helper-bot', 4, true)

  await applyMigrations(db, undefined, { migrationsDir: defaultMigrationsDir() })
  const rows = new Map((await prisma.user.findMany({ select: { id: true, email: true, deliveryEmail: true } })).map((u) => [u.id, u]))
  t.same(rows.get(open.id), { id: open.id, email: 'open@acme.example', deliveryEmail: 'open@acme.example' })
  t.same(rows.get(admins.id), { id: admins.id, email: `user${admins.id}@acme.chat.example`, deliveryEmail: 'admins@acme.example' })
  t.same(rows.get(nobody.id), { id: nobody.id, email: `user${nobody.id}@acme.chat.example`, deliveryEmail: 'nobody@acme.example' })
  t.same(rows.get(hiddenBot.id), { id: hiddenBot.id, email: 'helper-bot@acme.example', deliveryEmail: 'helper-bot@acme.example' }, 'a bot keeps its address')
})
