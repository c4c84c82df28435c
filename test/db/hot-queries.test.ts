import { randomUUID } from 'node:crypto'
import t from 'tap'
import { buildTestApp } from '../support/app.js'
import { findRealmByStringId, findUserWithRealmByApiKey } from '../../src/db/hot-queries.js'

t.test('raw hot-path lookups return exactly what Prisma returns', async (t) => {
  const { fx, services } = await buildTestApp(t)
  const prisma = services.prisma
  t.strictSame(await findRealmByStringId(prisma, fx.realm.stringId), await prisma.realm.findUnique({ where: { stringId: fx.realm.stringId } }))
  t.equal(await findRealmByStringId(prisma, 'no-such-realm'), null)
  for (const user of Object.values(fx.users)) {
    const found = await findUserWithRealmByApiKey(prisma, user.apiKey)
    const expected = await prisma.user.findUniqueOrThrow({ where: { id: user.id }, include: { realm: true } })
    const { realm, ...row } = expected
    t.strictSame(found, { user: row, realm, presenceEnabled: true }, `user ${user.fullName}`)
    t.ok(found?.user.dateJoined instanceof Date, 'dates are Date objects')
    t.ok(found?.realm.dateCreated instanceof Date)
  }
  // A key no user holds: the test database is shared, and another test gives an owner 'x'.repeat(32).
  t.equal(await findUserWithRealmByApiKey(prisma, randomUUID().replaceAll('-', '')), null)
})

t.test("the API key lookup carries the user's presence_enabled; a user without settings shares presence", async (t) => {
  const { fx, services } = await buildTestApp(t)
  const prisma = services.prisma
  const user = fx.users.member
  await prisma.userSettings.update({ where: { userId: user.id }, data: { presenceEnabled: false } })
  t.equal((await findUserWithRealmByApiKey(prisma, user.apiKey))?.presenceEnabled, false)
  await prisma.userSettings.update({ where: { userId: user.id }, data: { presenceEnabled: true } })
  t.equal((await findUserWithRealmByApiKey(prisma, user.apiKey))?.presenceEnabled, true)
  await prisma.userSettings.delete({ where: { userId: user.id } })
  t.equal((await findUserWithRealmByApiKey(prisma, user.apiKey))?.presenceEnabled, true)
})
