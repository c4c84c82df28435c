// Browser sessions through HTTP (docs/web-sessions.md): /json with the
// session: authentication, CSRF, lifetimes and logout.
import t from 'tap'
import { buildTestApp } from '../support/app.js'
import { as } from '../support/client.js'
import { bodyOf, expectError, expectSuccess } from '../support/expect.js'
import { applyCookies, cookieHeader, json, logIn, openLoginPage, originOf, setCookies, submitLogin, type BrowserSession } from '../support/browser.js'
import { hashSessionToken } from '../../src/actions/web-sessions.js'
import { RATE_RULES } from '../../src/ratelimit/limiter.js'

const PASSWORD = 'a-browser-password'

t.test('/json with a browser session', async (t) => {
  const { app, fx, services } = await buildTestApp(t, { config: { sessionIdleTimeoutSeconds: 600, sessionMaxAgeSeconds: 1800 } })
  const realNow = services.now
  t.teardown(() => {
    services.now = realNow
  })
  const member = await fx.newUser({ password: PASSWORD, fullName: 'Brenda Browser' })
  const sessionRow = (s: BrowserSession) => services.prisma.webSession.findUnique({ where: { tokenHash: hashSessionToken(s.cookies.sessionid ?? '') } })
  const me = (s: BrowserSession) => json(app, fx, s, 'GET', '/users/me')
  const rename = (s: BrowserSession, name: string, headers?: Record<string, string | null>) => json(app, fx, s, 'PATCH', '/settings', { full_name: name }, { headers })

  t.test('/json without a session is 401 in the envelope; API-key Basic auth is not taken there', async (t) => {
    const none = await app.inject({ method: 'GET', url: '/json/users/me', headers: { host: fx.host } })
    expectError(t, none, { code: 'UNAUTHORIZED', status: 401, msg: 'Not logged in: API authentication or user session required' })
    t.equal(none.headers['www-authenticate'], 'Session realm="roost"')
    const basic = await app.inject({ method: 'GET', url: '/json/users/me', headers: { host: fx.host, authorization: `Basic ${Buffer.from(`${member.deliveryEmail}:${member.apiKey}`).toString('base64')}` } })
    expectError(t, basic, { code: 'UNAUTHORIZED', status: 401 })
    const bogus = await app.inject({ method: 'GET', url: '/json/users/me', headers: { host: fx.host, cookie: `sessionid=${'x'.repeat(43)}` } })
    expectError(t, bogus, { code: 'UNAUTHORIZED', status: 401 })
    const session = await logIn(app, fx, member.deliveryEmail, PASSWORD)
    const otherRealm = await app.inject({ method: 'GET', url: '/json/users/me', headers: { host: 'elsewhere.localhost', cookie: cookieHeader(session.cookies) } })
    expectError(t, otherRealm, { code: 'UNAUTHORIZED', status: 401 })
    expectSuccess(t, await json(app, fx, session, 'GET', '/server_settings'))
    expectError(t, await json(app, fx, session, 'GET', '/no_such_route'), { code: 'NOT_FOUND', status: 404 })
  })

  t.test('unsafe /json requests need X-CSRFToken and a same-origin Origin; a refused one changes nothing', async (t) => {
    const session = await logIn(app, fx, member.deliveryEmail, PASSWORD)
    const other = await logIn(app, fx, member.deliveryEmail, PASSWORD)
    const cases: { headers: Record<string, string | null>; reason: string }[] = [
      { headers: { 'x-csrftoken': null }, reason: 'CSRF token missing.' },
      { headers: { 'x-csrftoken': 'A'.repeat(43) }, reason: "CSRF token from the 'X-Csrftoken' HTTP header incorrect." },
      { headers: { 'x-csrftoken': other.cookies.csrftoken ?? '' }, reason: "CSRF token from the 'X-Csrftoken' HTTP header incorrect." },
      { headers: { origin: 'http://evil.example' }, reason: 'Origin checking failed - http://evil.example does not match any trusted origins.' },
      { headers: { origin: `https://${fx.host}:9991` }, reason: `Origin checking failed - https://${fx.host}:9991 does not match any trusted origins.` },
      { headers: { origin: null }, reason: 'Referer checking failed - no Referer.' },
      { headers: { origin: null, referer: 'http://evil.example/page' }, reason: 'Referer checking failed - http://evil.example/page does not match any trusted origins.' },
      { headers: { origin: null, referer: 'not a url' }, reason: 'Referer checking failed - Referer is malformed.' },
    ]
    for (const { headers, reason } of cases) {
      const body = expectError(t, await rename(session, 'Changed By CSRF', headers), { code: 'CSRF_FAILED', status: 403, msg: `CSRF error: ${reason}` })
      t.equal(body.reason, reason)
    }
    t.equal((await fx.refresh(member)).fullName, 'Brenda Browser', 'nothing changed')
    expectSuccess(t, await rename(session, 'Brenda Referer', { origin: null, referer: `${session.origin}/#inbox` }))
    t.equal((await fx.refresh(member)).fullName, 'Brenda Referer', 'a same-origin Referer stands in for a missing Origin')
    expectSuccess(t, await rename(session, 'Brenda Browser'))
    t.equal((await fx.refresh(member)).fullName, 'Brenda Browser')
    const sent = expectSuccess(t, await json(app, fx, session, 'POST', '/messages', { type: 'stream', to: fx.streams.general.id, topic: 'from the browser', content: 'hello' }))
    const message = await services.prisma.message.findUniqueOrThrow({ where: { id: sent.id as number } })
    t.equal(message.senderId, member.id)
    const own = await services.prisma.userMessage.findUniqueOrThrow({ where: { userId_messageId: { userId: member.id, messageId: sent.id as number } } })
    t.equal(own.flags & 1, 1, "the session's client is upstream's 'website': a message sent there is read by its sender")
  })

  t.test('last_seen is written at most about once a minute', async (t) => {
    const session = await logIn(app, fx, member.deliveryEmail, PASSWORD)
    const start = (await sessionRow(session))?.lastSeenAt.getTime() ?? 0
    const base = realNow().getTime()
    services.now = () => new Date(base + 30_000)
    expectSuccess(t, await me(session))
    t.equal((await sessionRow(session))?.lastSeenAt.getTime(), start, 'not written within the minute')
    services.now = () => new Date(base + 61_000)
    expectSuccess(t, await me(session))
    t.equal((await sessionRow(session))?.lastSeenAt.getTime(), base + 61_000)
    services.now = realNow
  })

  t.test('a session ends after the idle timeout without requests', async (t) => {
    const session = await logIn(app, fx, member.deliveryEmail, PASSWORD)
    const base = realNow().getTime()
    services.now = () => new Date(base + 599_000)
    expectSuccess(t, await me(session))
    services.now = () => new Date(base + 599_000 + 601_000)
    expectError(t, await me(session), { code: 'UNAUTHORIZED', status: 401 })
    t.equal(await sessionRow(session), null, 'the expired session is deleted')
    services.now = realNow
  })

  t.test('a session ends at its absolute lifetime however active', async (t) => {
    const session = await logIn(app, fx, member.deliveryEmail, PASSWORD)
    const base = realNow().getTime()
    for (const offset of [500_000, 1_000_000, 1_500_000, 1_790_000]) {
      services.now = () => new Date(base + offset)
      t.equal(expectSuccess(t, await me(session)).user_id, member.id, `alive at ${offset / 1000} s`)
    }
    services.now = () => new Date(base + 1_801_000)
    expectError(t, await me(session), { code: 'UNAUTHORIZED', status: 401 })
    services.now = realNow
  })

  t.test('POST /accounts/logout ends the session (GET does not)', async (t) => {
    const session = await logIn(app, fx, member.deliveryEmail, PASSWORD)
    const headers = { host: fx.host, cookie: cookieHeader(session.cookies) }
    const get = await app.inject({ method: 'GET', url: '/accounts/logout', headers })
    expectError(t, get, { code: 'METHOD_NOT_ALLOWED', status: 405 })
    expectSuccess(t, await me(session))
    const forged = await app.inject({ method: 'POST', url: '/accounts/logout', headers: { ...headers, origin: 'http://evil.example', 'x-csrftoken': session.cookies.csrftoken ?? '' } })
    expectError(t, forged, { code: 'CSRF_FAILED', status: 403 })
    const noToken = await app.inject({ method: 'POST', url: '/accounts/logout', headers: { ...headers, origin: session.origin } })
    expectError(t, noToken, { code: 'CSRF_FAILED', status: 403, msg: 'CSRF error: CSRF token missing.' })
    expectSuccess(t, await me(session))
    const out = await app.inject({ method: 'POST', url: '/accounts/logout', headers: { ...headers, origin: session.origin, 'x-csrftoken': session.cookies.csrftoken ?? '' } })
    t.equal(out.statusCode, 303)
    t.equal(out.headers.location, '/login')
    t.match(setCookies(out).find((c) => c.name === 'sessionid'), { value: '', maxAge: 0 })
    expectError(t, await me(session), { code: 'UNAUTHORIZED', status: 401 })
    t.equal(await sessionRow(session), null)

    const viaForm = await logIn(app, fx, member.deliveryEmail, PASSWORD)
    const form = await app.inject({
      method: 'POST',
      url: '/accounts/logout',
      headers: { host: fx.host, cookie: cookieHeader(viaForm.cookies), origin: viaForm.origin, 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams({ csrfmiddlewaretoken: viaForm.cookies.csrftoken ?? '' }).toString(),
    })
    t.equal(form.statusCode, 303, 'a form with the token logs out too')
    expectError(t, await me(viaForm), { code: 'UNAUTHORIZED', status: 401 })
  })

  t.test("an ended session's register (a route open to logged-out visitors) is a 401 with the Session challenge, never Basic", async (t) => {
    const session = await logIn(app, fx, member.deliveryEmail, PASSWORD)
    await services.prisma.webSession.deleteMany({ where: { tokenHash: hashSessionToken(session.cookies.sessionid ?? '') } })
    // The csrftoken cookie outlives the session and the app still sends it: the CSRF check passes, the login check does not.
    const res = await json(app, fx, session, 'POST', '/register', { event_types: ['message'] })
    expectError(t, res, { code: 'UNAUTHORIZED', status: 401, msg: 'Not logged in: API authentication or user session required' })
    // A browser meeting a Basic challenge on a fetch asks for a password instead of giving the page the 401.
    t.equal(res.headers['www-authenticate'], 'Session realm="roost"')
    const api = await app.inject({ method: 'POST', url: '/api/v1/register', headers: { host: fx.host } })
    t.equal(api.headers['www-authenticate'], 'Basic realm="roost"', 'API clients still get the Basic challenge')
  })
})
