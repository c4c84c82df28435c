// Authentication through the per-node cache (src/db/auth-cache.ts) is never
// stale on the node that made a change: every case warms the cache with a
// request first, changes the user or realm, and expects the very next
// request to see the change. Other nodes: test/cluster/auth-cache.test.ts.
import { mkdtemp } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import { buildTestApp, TEST_DATABASE_URL } from '../support/app.js'
import { as, basicAuth } from '../support/client.js'
import { expectError, expectSuccess } from '../support/expect.js'
import { withTimeout } from '../events/queue-store.contract.js'
import { readOutbox } from '../../src/mail/outbox.js'
import { ROLE } from '../../src/domain/roles.js'
import type { User } from '../../src/db/index.js'

t.test('the authentication cache on the node that changes a user or realm', async (t) => {
  const dataDir = await mkdtemp(join(tmpdir(), 'roost-auth-cache-'))
  const { app, fx, services } = await buildTestApp(t, { config: { dataDir } })
  const admin = fx.users.admin
  const me = (user: Pick<User, 'deliveryEmail' | 'apiKey'>) => as(app, user, fx).get('/users/me')
  /** Two successful requests: the first fills the cache (once it listens), the second is served from it. */
  const warm = async (user: User) => {
    expectSuccess(t, await me(user))
    await withTimeout(services.authCache.whenListening(), 10_000, 'the invalidation listener')
    expectSuccess(t, await me(user))
    return expectSuccess(t, await me(user))
  }

  t.test('a user deactivated by an administrator is refused at once, and let in again once reactivated', async (t) => {
    const user = await fx.newUser()
    await warm(user)
    expectSuccess(t, await as(app, admin).delete(`/users/${user.id}`))
    expectError(t, await me(user), { code: 'USER_DEACTIVATED', status: 401, msg: 'Account is deactivated' })
    expectSuccess(t, await as(app, admin).post(`/users/${user.id}/reactivate`))
    t.equal(expectSuccess(t, await me(user)).user_id, user.id)
  })

  t.test('a user who deactivates their own account is refused on the next request', async (t) => {
    const user = await fx.newUser()
    await warm(user)
    expectSuccess(t, await as(app, user).delete('/users/me'))
    expectError(t, await me(user), { code: 'USER_DEACTIVATED', status: 401, msg: 'Account is deactivated' })
  })

  t.test('a role change applies to the next request', async (t) => {
    const user = await fx.newUser()
    await warm(user)
    expectError(t, await as(app, user).delete(`/users/${fx.users.otherMember.id}`), { code: 'BAD_REQUEST', status: 400, msg: 'Insufficient permission' })
    expectSuccess(t, await as(app, admin).patch(`/users/${user.id}`, { role: ROLE.ADMIN }))
    const victim = await fx.newUser()
    expectSuccess(t, await as(app, user).delete(`/users/${victim.id}`))
  })

  t.test('after an email change the old address no longer authenticates, the new one does', async (t) => {
    const user = await fx.newUser()
    await warm(user)
    const newEmail = `moved-${user.id}@elsewhere.example.org`
    expectSuccess(t, await as(app, user).patch('/settings', { email: newEmail }))
    const mail = (await readOutbox(dataDir)).find((m) => m.includes(`To: ${newEmail}`))
    const link = /http:\/\/\S+(\/accounts\/confirm_new_email\/\w+)/.exec(mail ?? '')
    t.ok(link, 'a confirmation link was mailed')
    t.equal((await app.inject({ method: 'GET', url: link?.[1] ?? '/', headers: { host: fx.host } })).statusCode, 303)
    expectError(t, await me(user), { code: 'UNAUTHORIZED', status: 401, msg: 'Invalid API key' })
    t.equal(expectSuccess(t, await me({ deliveryEmail: newEmail, apiKey: user.apiKey })).delivery_email, newEmail)
  })

  t.test('after an API key change the old key fails and the new one works', async (t) => {
    const user = await fx.newUser()
    await warm(user)
    const newKey = 'N'.repeat(16) + String(user.id).padStart(16, '0')
    await services.prisma.user.update({ where: { id: user.id }, data: { apiKey: newKey } })
    expectError(t, await me(user), { code: 'UNAUTHORIZED', status: 401, msg: 'Invalid API key' })
    t.equal(expectSuccess(t, await me({ deliveryEmail: user.deliveryEmail, apiKey: newKey })).user_id, user.id)
  })

  t.test('a change made in raw SQL is seen at once', async (t) => {
    const user = await fx.newUser()
    await warm(user)
    await services.prisma.$executeRaw`UPDATE user_profile SET is_active = false WHERE id = ${user.id}`
    expectError(t, await me(user), { code: 'USER_DEACTIVATED', status: 401, msg: 'Account is deactivated' })
  })

  t.test('a change inside a transaction is seen once it commits, and a rolled-back one never', async (t) => {
    const user = await fx.newUser()
    await warm(user)
    // Embedded PGlite has one connection, which the open transaction holds: a request meanwhile would wait for it.
    const duringTransaction = async () => {
      if (TEST_DATABASE_URL) expectSuccess(t, await me(user))
    }
    await services.prisma
      .$transaction(async (tx) => {
        await tx.user.update({ where: { id: user.id }, data: { isActive: false } })
        await duringTransaction() // not committed yet: still active
        throw new Error('roll back')
      })
      .catch(() => {})
    expectSuccess(t, await me(user))
    await services.prisma.$transaction(async (tx) => {
      await tx.user.update({ where: { id: user.id }, data: { isActive: false } })
      await duringTransaction()
    })
    expectError(t, await me(user), { code: 'USER_DEACTIVATED', status: 401, msg: 'Account is deactivated' })
  })

  t.test('a new user authenticates at once (unknown keys are not cached)', async (t) => {
    expectError(t, await me({ deliveryEmail: 'nobody@example.com', apiKey: 'Z'.repeat(32) }), { code: 'UNAUTHORIZED', status: 401, msg: 'Invalid API key' })
    const user = await fx.newUser()
    expectSuccess(t, await me(user))
  })
})

t.test('the authentication cache on the node that changes a realm', async (t) => {
  const { app, fx, services } = await buildTestApp(t)
  const member = fx.users.member
  expectSuccess(t, await as(app, member).get('/users/me'))
  await withTimeout(services.authCache.whenListening(), 10_000, 'the invalidation listener')
  expectSuccess(t, await as(app, member).post('/messages', { type: 'stream', to: 'general', topic: '(no topic)', content: 'fine' }))

  t.test('a realm setting applies to the next request', async (t) => {
    await services.prisma.realm.update({ where: { id: fx.realm.id }, data: { mandatoryTopics: true } })
    expectError(t, await as(app, member).post('/messages', { type: 'stream', to: 'general', topic: '(no topic)', content: 'x' }), {
      code: 'BAD_REQUEST',
      status: 400,
      msg: 'Topics are required in this organization',
    })
    await services.prisma.realm.update({ where: { id: fx.realm.id }, data: { mandatoryTopics: false } })
    expectSuccess(t, await as(app, member).post('/messages', { type: 'stream', to: 'general', topic: '(no topic)', content: 'fine again' }))
  })

  t.test('a deactivated realm refuses the next request', async (t) => {
    expectSuccess(t, await as(app, member).get('/users/me'))
    await services.prisma.realm.update({ where: { id: fx.realm.id }, data: { deactivated: true } })
    const res = await app.inject({ method: 'GET', url: '/api/v1/users/me', headers: { authorization: basicAuth(member.deliveryEmail, member.apiKey), host: fx.host } })
    expectError(t, res, { code: 'REALM_DEACTIVATED', status: 401, msg: 'This organization has been deactivated' })
  })
})
