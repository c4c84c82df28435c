// Safe to expose (issue 12, items 1, 2, 5): bounded work per request, exact
// matching of names, login throttling, the embedded role-change deadlock and
// system bots, each reproduced through the HTTP API.
import t from 'tap'
import type { AddressInfo } from 'node:net'
import { buildTestApp } from '../support/app.js'
import { as, basicAuth } from '../support/client.js'
import { expectError, expectSuccess } from '../support/expect.js'
import { captureEvents } from '../support/events.js'
import { ROLE } from '../../src/domain/roles.js'
import { FLAG_BITS } from '../../src/domain/flags.js'
import { MAX_ALERT_WORDS_PER_USER } from '../../src/domain/alert-words.js'
import { MAX_CHANNELS_PER_REQUEST, MAX_PRINCIPALS_PER_REQUEST } from '../../src/domain/limits.js'

t.test('array parameters have a maximum length', async (t) => {
  const { app, fx } = await buildTestApp(t)
  const member = await fx.user('member')
  const ids = (n: number) => Array.from({ length: n }, (_, i) => i + 1)

  t.test('principals: more than the limit is a 400 naming the parameter', async (t) => {
    for (const principals of [ids(MAX_PRINCIPALS_PER_REQUEST + 1), ids(MAX_PRINCIPALS_PER_REQUEST + 1).map((i) => `u${i}@example.com`)]) {
      expectError(t, await as(app, member).post('/users/me/subscriptions', { subscriptions: [{ name: 'general' }], principals }), {
        code: 'BAD_REQUEST',
        status: 400,
        msg: `principals has too many items (limit: ${MAX_PRINCIPALS_PER_REQUEST})`,
      })
    }
  })

  t.test('channel names of DELETE /users/me/subscriptions, alert words and message IDs too', async (t) => {
    expectError(t, await as(app, member).delete('/users/me/subscriptions', { subscriptions: ids(MAX_CHANNELS_PER_REQUEST + 1).map((i) => `c${i}`) }), {
      code: 'BAD_REQUEST',
      msg: `subscriptions has too many items (limit: ${MAX_CHANNELS_PER_REQUEST})`,
    })
    expectError(t, await as(app, member).delete('/users/me/alert_words', { alert_words: ids(1001).map(String) }), {
      code: 'BAD_REQUEST',
      msg: 'alert_words has too many items (limit: 1000)',
    })
    expectError(t, await as(app, member).post('/messages/flags', { messages: ids(5001), op: 'add', flag: 'read' }), {
      code: 'BAD_REQUEST',
      msg: 'messages has too many items (limit: 5000)',
    })
  })

  t.test('a body over 1 MiB answers 413 in the error envelope', async (t) => {
    const huge = JSON.stringify(Array.from({ length: 600_000 }, () => 1))
    const res = await as(app, member).delete('/users/me/alert_words', { alert_words: huge })
    expectError(t, res, { code: 'BAD_REQUEST', status: 413, msg: 'Request body is too large' })
  })

  t.test('principals are resolved exactly and in bulk', async (t) => {
    const bob = await fx.newUser({ email: 'bob@example.com' })
    // `_` is not a wildcard: nobody is named by b__@example.com.
    expectError(t, await as(app, fx.users.admin).post('/users/me/subscriptions', { subscriptions: [{ name: 'design' }], principals: ['b__@example.com'] }), {
      code: 'BAD_REQUEST',
      msg: 'No such user',
    })
    const res = await as(app, fx.users.admin).post('/users/me/subscriptions', { subscriptions: [{ name: 'design' }], principals: [bob.email.toUpperCase()] })
    t.same(expectSuccess(t, res).subscribed, { [bob.id]: ['design'] })
  })
})

t.test('alert words: a cap per user, one pass per message', async (t) => {
  const { app, fx, services } = await buildTestApp(t)
  const sender = await fx.user('owner')

  t.test(`a user has at most ${MAX_ALERT_WORDS_PER_USER} words`, async (t) => {
    const member = await fx.newUser()
    const words = Array.from({ length: MAX_ALERT_WORDS_PER_USER }, (_, i) => `word${i}`)
    t.equal(expectSuccess(t, await as(app, member).post('/users/me/alert_words', { alert_words: words })).alert_words.length, MAX_ALERT_WORDS_PER_USER)
    expectError(t, await as(app, member).post('/users/me/alert_words', { alert_words: ['one more'] }), {
      code: 'BAD_REQUEST',
      msg: `You can have at most ${MAX_ALERT_WORDS_PER_USER} alert words`,
    })
    // Removing many at once is one statement, and makes room again.
    t.same(expectSuccess(t, await as(app, member).delete('/users/me/alert_words', { alert_words: words.slice(1) })).alert_words, ['word0'])
  })

  t.test('flags has_alert_word with upstream word boundaries, and sees every change at once', async (t) => {
    const member = await fx.user('member')
    const flagged = async (content: string): Promise<boolean> => {
      const { id } = expectSuccess(t, await as(app, sender).post('/messages', { type: 'stream', to: 'general', topic: 'alerts', content }))
      const row = await services.prisma.userMessage.findUnique({ where: { userId_messageId: { userId: member.id, messageId: id as number } } })
      return ((row?.flags ?? 0) & FLAG_BITS.has_alert_word) !== 0
    }
    t.notOk(await flagged('deploy today'), 'no words yet')
    await as(app, member).post('/users/me/alert_words', { alert_words: ['Deploy', 'roll_out'] })
    t.ok(await flagged('we DEPLOY today'))
    t.ok(await flagged('(deploy)!'))
    t.notOk(await flagged('redeploy and deploys'))
    t.ok(await flagged('time to roll_out.'))
    t.notOk(await flagged('time to rollXout'), '_ is a plain character')
    await as(app, member).delete('/users/me/alert_words', { alert_words: ['deploy'] })
    t.notOk(await flagged('deploy now'), 'a removed word no longer alerts')
  })
})

t.test('names are matched exactly, never as patterns', async (t) => {
  const { app, fx } = await buildTestApp(t)
  const member = await fx.user('member')
  const outsider = await fx.newUser()
  await as(app, member).post('/users/me/subscriptions', { subscriptions: [{ name: 'secretproject' }], invite_only: true })

  t.test('subscribing to secret% does not reveal secretproject', async (t) => {
    const res = await as(app, outsider).post('/users/me/subscriptions', { subscriptions: [{ name: 'secret%' }] })
    const body = expectSuccess(t, res)
    t.same(body.subscribed, { [outsider.id]: ['secret%'] })
    t.notMatch(JSON.stringify(body), /secretproject/)
  })

  t.test('a login with _ wildcards is not a login', async (t) => {
    const bob = await fx.newUser({ email: `bob-${Date.now()}@example.com`, password: 'correct horse battery' })
    const pattern = bob.deliveryEmail.replace(/^bob/, 'b__')
    const res = await app.inject({ method: 'POST', url: '/api/v1/fetch_api_key', headers: { host: fx.host }, payload: { username: pattern, password: 'correct horse battery' } })
    expectError(t, res, { code: 'AUTHENTICATION_FAILED', status: 401 })
  })

  t.test('a channel narrow and a user lookup do not match patterns', async (t) => {
    expectError(t, await as(app, member).get('/messages', { anchor: 'newest', num_before: 1, num_after: 0, narrow: [{ operator: 'channel', operand: 'gen%' }] }), {
      code: 'BAD_NARROW',
    })
    expectError(t, await as(app, member).get(`/users/${encodeURIComponent(member.email.replace(/^./, '_'))}`), { code: 'BAD_REQUEST', msg: 'No such user' })
  })
})

t.test('login throttling', async (t) => {
  const { app, fx } = await buildTestApp(t, { config: { rateLimiting: true } })
  const login = (username: string, password: string, ip = '10.0.0.1') =>
    app.inject({ method: 'POST', url: '/api/v1/fetch_api_key', headers: { host: fx.host }, payload: { username, password }, remoteAddress: ip })
  // Accounts made before any login is tried (hashing passwords is slow on a busy machine).
  const carol = await fx.newUser({ email: 'carol@example.com', password: 'the right one' })
  const dave = await fx.newUser({ email: 'dave@example.com', password: 'dave password' })
  const erin = await fx.newUser({ email: 'erin@example.com', password: 'erin password' })

  t.test('after 5 failures the right password is refused too, with retry-after', async (t) => {
    const user = carol
    for (let i = 0; i < 5; i++) expectError(t, await login(user.deliveryEmail, 'wrong'), { code: 'AUTHENTICATION_FAILED', status: 401 })
    const res = await login(user.deliveryEmail.toUpperCase(), 'the right one')
    const body = expectError(t, res, { code: 'RATE_LIMIT_HIT', status: 429, msg: 'API usage exceeded rate limit' })
    t.ok(typeof body['retry-after'] === 'number' && body['retry-after'] > 0)
    t.equal(res.headers['retry-after'], String(body['retry-after']))
    t.notOk('api_key' in body)
  })

  t.test('failures are counted per client address across accounts', async (t) => {
    const ip = '10.0.0.99'
    let last = await login('nobody0@example.com', 'x', ip)
    for (let i = 1; i < 60 && last.statusCode !== 429; i++) last = await login(`nobody${i}@example.com`, 'x', ip)
    expectError(t, last, { code: 'RATE_LIMIT_HIT', status: 429 })
    expectError(t, await login(dave.deliveryEmail, 'dave password', ip), { code: 'RATE_LIMIT_HIT', status: 429 })
    t.equal(expectSuccess(t, await login(dave.deliveryEmail, 'dave password', '10.0.0.2')).user_id, dave.id)
  })

  t.test('changing the password checks the old one under the same limit', async (t) => {
    for (let i = 0; i < 5; i++) expectError(t, await as(app, erin, fx).patch('/settings', { old_password: 'nope', new_password: 'new password 1' }), { code: 'BAD_REQUEST', msg: 'Wrong password!' })
    expectError(t, await as(app, erin, fx).patch('/settings', { old_password: 'erin password', new_password: 'new password 1' }), { code: 'RATE_LIMIT_HIT', status: 429 })
  })
})

t.test('changing a role (to guest and back) commits promptly with its events', async (t) => {
  const { app, fx } = await buildTestApp(t)
  const admin = await fx.user('admin')
  const target = await fx.newUser()
  for (const role of [ROLE.GUEST, ROLE.MEMBER, ROLE.MODERATOR, ROLE.GUEST]) {
    const events = await captureEvents(app, admin, async () => expectSuccess(t, await as(app, admin).patch(`/users/${target.id}`, { role })))
    t.match(events, [{ type: 'realm_user', op: 'update', person: { user_id: target.id, role } }], `role ${role}`)
    t.equal((await fx.refresh(target)).role, role)
  }
})

t.test('system bots cannot be administered', async (t) => {
  const { app, fx } = await buildTestApp(t)
  const owner = await fx.user('owner')
  const bot = fx.notificationBot
  const refused = { code: 'BAD_REQUEST', status: 400, msg: 'Insufficient permission' }
  expectError(t, await as(app, owner).patch(`/bots/${bot.id}`, { full_name: 'Security Team' }), refused)
  expectError(t, await as(app, owner).patch(`/bots/${bot.id}`, { bot_owner_id: owner.id }), refused)
  expectError(t, await as(app, owner).patch(`/users/${bot.id}`, { full_name: 'Security Team' }), refused)
  expectError(t, await as(app, owner).patch(`/users/${bot.id}`, { role: ROLE.OWNER }), refused)
  expectError(t, await as(app, owner).post(`/users/${bot.id}/reactivate`), refused)
  expectError(t, await as(app, owner).delete(`/users/${bot.id}`), { code: 'BAD_REQUEST', msg: 'No such user' })
  const after = await fx.refresh(bot)
  t.equal(after.fullName, bot.fullName)
  t.equal(after.botOwnerId, bot.botOwnerId)
  t.equal(after.isActive, true)
})

t.test('/healthz answers while a maximal request runs', async (t) => {
  const { app, fx } = await buildTestApp(t)
  const member = await fx.user('member')
  await app.listen({ port: 0, host: '127.0.0.1' })
  const base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`
  const names = Array.from({ length: MAX_CHANNELS_PER_REQUEST }, (_, i) => ({ name: `bulk channel ${i}` }))
  const order: string[] = []
  const big = fetch(`${base}/api/v1/users/me/subscriptions`, {
    method: 'POST',
    headers: { host: fx.host, authorization: basicAuth(member.deliveryEmail, member.apiKey), 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ subscriptions: JSON.stringify(names) }).toString(),
  }).then(async (res) => {
    order.push('subscribe')
    return res
  })
  await new Promise((r) => setTimeout(r, 50)) // the subscribe request is being worked on
  const health = await fetch(`${base}/healthz`)
  order.push('healthz')
  t.equal(health.status, 200)
  const res = await big
  t.equal(res.status, 200)
  t.same(order, ['healthz', 'subscribe'])
  t.equal((((await res.json()) as { subscribed: Record<string, string[]> }).subscribed[member.id] ?? []).length, MAX_CHANNELS_PER_REQUEST)
})
