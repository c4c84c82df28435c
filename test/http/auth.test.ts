import t from 'tap'
import { buildTestApp } from '../support/app.js'
import { anon, as, basicAuth } from '../support/client.js'
import { bodyOf, expectError, expectSuccess } from '../support/expect.js'
import { ROLE } from '../../src/domain/roles.js'

const CHALLENGE = 'Basic realm="roost"'

t.test('HTTP Basic authentication', async (t) => {
  const { app, fx, services } = await buildTestApp(t)
  const member = fx.users.member
  const withHeader = (authorization: string, host = fx.host) =>
    app.inject({ method: 'GET', url: '/api/v1/users/me', headers: { authorization, host } })

  t.test('accepts the delivery email and API key, the email in any case', async (t) => {
    expectSuccess(t, await as(app, member).get('/users/me'))
    const body = expectSuccess(t, await withHeader(basicAuth(member.deliveryEmail.toUpperCase(), member.apiKey)))
    t.equal(body.user_id, member.id)
  })

  t.test('answers 401 with a challenge when the header is missing', async (t) => {
    const res = await anon(app, fx).get('/users/me')
    expectError(t, res, { code: 'UNAUTHORIZED', status: 401, msg: 'Not logged in: API authentication or user session required' })
    t.equal(res.headers['www-authenticate'], CHALLENGE)
    t.match(res.headers['content-type'], /^application\/json/)
  })

  t.test('answers 401 Invalid API key for an unknown key', async (t) => {
    const res = await withHeader(basicAuth(member.deliveryEmail, 'A'.repeat(32)))
    expectError(t, res, { code: 'UNAUTHORIZED', status: 401, msg: 'Invalid API key' })
    t.equal(res.headers['www-authenticate'], CHALLENGE)
  })

  t.test("answers 401 Invalid API key for another user's key", async (t) => {
    const res = await withHeader(basicAuth(member.deliveryEmail, fx.users.admin.apiKey))
    expectError(t, res, { code: 'UNAUTHORIZED', status: 401, msg: 'Invalid API key' })
  })

  t.test('answers 401 Malformed API key for a key of the wrong shape', async (t) => {
    for (const key of ['short', 'x'.repeat(33), `${'a'.repeat(31)}!`, '']) {
      const res = await withHeader(basicAuth(member.deliveryEmail, key))
      expectError(t, res, { code: 'UNAUTHORIZED', status: 401, msg: 'Malformed API key' })
      t.equal(res.headers['www-authenticate'], CHALLENGE)
    }
  })

  t.test('answers 401 for an undecodable header', async (t) => {
    expectError(t, await withHeader('Basic'), { code: 'UNAUTHORIZED', status: 401, msg: 'Invalid authorization header for basic auth' })
    const noColon = `Basic ${Buffer.from('nocolon').toString('base64')}`
    expectError(t, await withHeader(noColon), { code: 'UNAUTHORIZED', status: 401, msg: 'Invalid authorization header for basic auth' })
  })

  t.test('answers 400 for a scheme other than Basic', async (t) => {
    const res = await withHeader(`Bearer ${member.apiKey}`)
    expectError(t, res, { code: 'BAD_REQUEST', status: 400, msg: 'This endpoint requires HTTP basic authentication.' })
  })

  t.test('answers 401 Account is deactivated for a deactivated user', async (t) => {
    const user = await fx.newUser()
    await services.prisma.user.update({ where: { id: user.id }, data: { isActive: false } })
    const res = await as(app, user, fx).get('/users/me')
    expectError(t, res, { code: 'USER_DEACTIVATED', status: 401, msg: 'Account is deactivated' })
    t.equal(res.headers['www-authenticate'], CHALLENGE)
  })

  t.test("answers 401 when a user of realm A calls realm B's host", async (t) => {
    const other = await buildTestApp(t)
    const res = await as(app, member, other.fx).get('/users/me')
    expectError(t, res, { code: 'UNAUTHORIZED', status: 401, msg: 'Account is not associated with this subdomain' })
  })

  t.test('lets bots authenticate with their key', async (t) => {
    const body = expectSuccess(t, await as(app, fx.users.bot, fx).get('/users/me'))
    t.equal(body.is_bot, true)
    t.equal(body.bot_owner_id, member.id)
  })
})

t.test('HTTP Basic authentication in a deactivated realm', async (t) => {
  const { app, fx, services } = await buildTestApp(t)
  await services.prisma.realm.update({ where: { id: fx.realm.id }, data: { deactivated: true } })
  const res = await as(app, fx.users.member).get('/users/me')
  expectError(t, res, { code: 'REALM_DEACTIVATED', status: 401, msg: 'This organization has been deactivated' })
  t.equal(res.headers['www-authenticate'], CHALLENGE)
})

t.test('POST /fetch_api_key', async (t) => {
  const { app, fx, services } = await buildTestApp(t)
  const password = 'correct horse battery'
  const person = await fx.newUser({ password, fullName: 'Pat Password' })
  const fetchKey = (username: string, pw: string, host = fx.host) => anon(app, { host }).post('/fetch_api_key', { username, password: pw })

  t.test('exchanges the delivery email and password for the API key', async (t) => {
    const body = expectSuccess(t, await fetchKey(person.deliveryEmail, password))
    t.same(body, { result: 'success', msg: '', api_key: person.apiKey, email: person.deliveryEmail, user_id: person.id })
    expectSuccess(t, await as(app, { deliveryEmail: body.email, apiKey: body.api_key }, fx).get('/users/me'))
  })

  t.test('accepts the address in any case and with surrounding spaces', async (t) => {
    t.equal(expectSuccess(t, await fetchKey(`  ${person.deliveryEmail.toUpperCase()} `, password)).user_id, person.id)
  })

  t.test('accepts a multipart body, as some clients send it', async (t) => {
    const boundary = 'roostboundary'
    const payload = [
      `--${boundary}\r\nContent-Disposition: form-data; name="username"\r\n\r\n${person.deliveryEmail}\r\n`,
      `--${boundary}\r\nContent-Disposition: form-data; name="password"\r\n\r\n${password}\r\n`,
      `--${boundary}--\r\n`,
    ].join('')
    const res = await app.inject({
      method: 'POST',
      url: '/api/v1/fetch_api_key',
      headers: { host: fx.host, 'content-type': `multipart/form-data; boundary=${boundary}` },
      payload,
    })
    t.equal(expectSuccess(t, res).api_key, person.apiKey)
  })

  t.test('fails alike for a wrong password and an unknown account', async (t) => {
    const wrong = await fetchKey(person.deliveryEmail, 'not the password')
    const unknown = await fetchKey(`nobody@${person.deliveryEmail.split('@')[1]}`, 'not the password')
    expectError(t, wrong, { code: 'AUTHENTICATION_FAILED', status: 401, msg: 'Your username or password is incorrect' })
    expectError(t, unknown, { code: 'AUTHENTICATION_FAILED', status: 401, msg: 'Your username or password is incorrect' })
    t.equal(wrong.body, unknown.body)
    t.notOk('www-authenticate' in wrong.headers)
    t.notOk('www-authenticate' in unknown.headers)
  })

  t.test('refuses bots, which have no password', async (t) => {
    expectError(t, await fetchKey(fx.users.bot.deliveryEmail, ''), { code: 'AUTHENTICATION_FAILED', status: 401 })
    expectError(t, await fetchKey(fx.users.bot.deliveryEmail, 'anything'), { code: 'AUTHENTICATION_FAILED', status: 401 })
  })

  t.test('refuses an account of another realm on this host', async (t) => {
    const other = await buildTestApp(t)
    expectError(t, await fetchKey(other.fx.users.owner.deliveryEmail, 'owner-password-1'), { code: 'AUTHENTICATION_FAILED', status: 401 })
    expectSuccess(t, await fetchKey(other.fx.users.owner.deliveryEmail, 'owner-password-1', other.fx.host))
  })

  t.test('answers 400 when the username is not an email address', async (t) => {
    expectError(t, await fetchKey('not-an-email', password), { code: 'BAD_REQUEST', status: 400, msg: 'Enter a valid email address.' })
  })

  t.test('names a missing parameter', async (t) => {
    const body = expectError(t, await anon(app, fx).post('/fetch_api_key', { username: person.deliveryEmail }), {
      code: 'REQUEST_VARIABLE_MISSING', status: 400, msg: "Missing 'password' argument",
    })
    t.equal(body.var_name, 'password')
    expectError(t, await anon(app, fx).post('/fetch_api_key', { password }), { code: 'REQUEST_VARIABLE_MISSING', msg: "Missing 'username' argument" })
  })

  t.test('answers USER_DEACTIVATED for a deactivated account', async (t) => {
    const gone = await fx.newUser({ password, role: ROLE.MEMBER })
    await services.prisma.user.update({ where: { id: gone.id }, data: { isActive: false } })
    expectError(t, await fetchKey(gone.deliveryEmail, password), { code: 'USER_DEACTIVATED', status: 401, msg: 'Account is deactivated' })
  })

  t.test('answers NONEXISTENT_SUBDOMAIN on a host without a realm', async (t) => {
    expectError(t, await fetchKey(person.deliveryEmail, password, 'nosuchrealm.localhost'), { code: 'NONEXISTENT_SUBDOMAIN', status: 404, msg: 'Invalid subdomain' })
  })

  t.test('answers 405 to other methods', async (t) => {
    const body = expectError(t, await anon(app, fx).get('/fetch_api_key'), { code: 'METHOD_NOT_ALLOWED', status: 405 })
    t.same(body.allowed_methods, ['POST'])
  })

  t.test('lists parameters it does not support', async (t) => {
    const body = expectSuccess(t, await anon(app, fx).post('/fetch_api_key', { username: person.deliveryEmail, password, otp: '1', client: 'x' }))
    t.same(body.ignored_parameters_unsupported, ['client', 'otp'])
  })
})

t.test('POST /fetch_api_key with realm-level refusals', async (t) => {
  const password = 'owner-password-1'

  t.test('answers PASSWORD_AUTH_DISABLED when the realm disabled password login', async (t) => {
    const { app, fx, services } = await buildTestApp(t)
    await services.prisma.realm.update({ where: { id: fx.realm.id }, data: { passwordAuthEnabled: false } })
    const res = await anon(app, fx).post('/fetch_api_key', { username: fx.users.owner.deliveryEmail, password })
    expectError(t, res, { code: 'PASSWORD_AUTH_DISABLED', status: 401, msg: 'Password authentication is disabled in this organization' })
  })

  t.test('answers REALM_DEACTIVATED in a deactivated realm', async (t) => {
    const { app, fx, services } = await buildTestApp(t)
    await services.prisma.realm.update({ where: { id: fx.realm.id }, data: { deactivated: true } })
    const res = await anon(app, fx).post('/fetch_api_key', { username: fx.users.owner.deliveryEmail, password })
    expectError(t, res, { code: 'REALM_DEACTIVATED', status: 401, msg: 'This organization has been deactivated' })
  })

  t.test('answers 429 after five failed attempts for one username (RATE_LIMITING=on)', async (t) => {
    const { app, fx } = await buildTestApp(t, { config: { rateLimiting: true } })
    const username = fx.users.owner.deliveryEmail
    for (let i = 0; i < 5; i++) {
      expectError(t, await anon(app, fx).post('/fetch_api_key', { username, password: 'wrong' }), { code: 'AUTHENTICATION_FAILED', status: 401 })
    }
    const limited = await anon(app, fx).post('/fetch_api_key', { username, password: 'wrong' })
    const body = expectError(t, limited, { code: 'RATE_LIMIT_HIT', status: 429, msg: 'API usage exceeded rate limit' })
    t.ok(body['retry-after'] > 0)
    t.equal(bodyOf(limited).result, 'error')
  })
})
