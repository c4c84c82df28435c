// The migration *_hidden_api_emails on rows written before it: people whose
// address is hidden get the stand-in API email; public people and bots keep
// their address.

import t from 'tap'
import { applyMigrations, defaultMigrationsDir } from '../../src/db/migrate.js'
import { migratedBefore } from '../support/migrated-before.js'

const MIGRATION = '20261129070000_hidden_api_emails'

t.test('existing people whose address is hidden get the stand-in API email, others keep theirs', async (t) => {
  const db = await migratedBefore(t, MIGRATION)

  // Written in SQL naming only the columns it sets: the Prisma client knows
  // columns that later migrations add, which this schema lacks.
  const { prisma } = db
  const [realm] = await prisma.$queryRaw<{ id: number }[]>`INSERT INTO realm (string_id, name) VALUES ('acme', 'Acme') RETURNING id`
  if (!realm) throw new Error('no realm')
  const person = async (local: string, visibility: number, isBot = false): Promise<{ id: number }> => {
    const address = `${local}@acme.example`
    const [user] = await prisma.$queryRaw<{ id: number }[]>`
      INSERT INTO user_profile (realm_id, email, delivery_email, full_name, api_key, is_bot)
      VALUES (${realm.id}, ${address}, ${address}, ${local}, ${local.padEnd(32, 'x')}, ${isBot}) RETURNING id`
    if (!user) throw new Error('no user')
    await prisma.$executeRaw`INSERT INTO user_settings (user_id, email_address_visibility) VALUES (${user.id}, ${visibility})`
    return user
  }
  const bot = await person('notification-bot', 1, true)
  await prisma.$executeRaw`UPDATE user_profile SET email = 'notification-bot@acme.chat.example', delivery_email = 'notification-bot@acme.chat.example' WHERE id = ${bot.id}`
  await prisma.$executeRaw`UPDATE realm SET notification_bot_id = ${bot.id} WHERE id = ${realm.id}`
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
