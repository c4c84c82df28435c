// Browser sessions through HTTP (docs/web-sessions.md): the login page, its form,
// cookies, failures and throttling.
import t from 'tap'
import { buildTestApp } from '../support/app.js'
import { as } from '../support/client.js'
import { bodyOf, expectError, expectSuccess } from '../support/expect.js'
import { applyCookies, cookieHeader, json, logIn, openLoginPage, originOf, setCookies, submitLogin, type BrowserSession } from '../support/browser.js'
import { hashSessionToken } from '../../src/actions/web-sessions.js'
import { RATE_RULES } from '../../src/ratelimit/limiter.js'

const PASSWORD = 'a-browser-password'

t.test('the login page', async (t) => {
  const { app, fx, services } = await buildTestApp(t, { config: { sessionIdleTimeoutSeconds: 600, sessionMaxAgeSeconds: 1800 } })
  const realNow = services.now
  t.teardown(() => {
    services.now = realNow
  })
  const member = await fx.newUser({ password: PASSWORD, fullName: 'Brenda Browser' })
  const sessionRow = (s: BrowserSession) => services.prisma.webSession.findUnique({ where: { tokenHash: hashSessionToken(s.cookies.sessionid ?? '') } })
  const me = (s: BrowserSession) => json(app, fx, s, 'GET', '/users/me')
  const rename = (s: BrowserSession, name: string, headers?: Record<string, string | null>) => json(app, fx, s, 'PATCH', '/settings', { full_name: name }, { headers })

  t.test('GET /login serves the form with a CSRF token also set as the csrftoken cookie', async (t) => {
    const page = await openLoginPage(app, fx)
    t.equal(page.res.statusCode, 200)
    t.match(page.res.headers['content-type'], /^text\/html/)
    t.match(page.res.body, /<form method="post" action="\/login"/)
    t.match(page.res.body, /name="username"/)
    t.match(page.res.body, /name="password" type="password"/)
    t.match(page.res.body, fx.realm.name)
    t.notMatch(page.res.body, /<script/i, 'no script at all')
    const csp = String(page.res.headers['content-security-policy'])
    t.match(csp, /script-src 'self'/)
    t.notMatch(csp, /script-src[^;]*unsafe-inline/)
    const [cookie] = setCookies(page.res)
    t.match(cookie, { name: 'csrftoken', value: page.token, path: '/', sameSite: 'lax' })
    t.notOk(cookie?.httpOnly, 'the app reads it')
    t.notOk(cookie?.secure, 'not Secure on http')
    const again = await openLoginPage(app, fx, page.cookies)
    t.equal(again.token, page.token, 'a browser keeps its token')
    t.equal(setCookies(again.res).length, 0)
  })

  t.test('a right password logs in: HttpOnly sessionid and a readable csrftoken, then /json serves the user', async (t) => {
    const page = await openLoginPage(app, fx)
    const res = await submitLogin(app, fx, { username: member.deliveryEmail.toUpperCase(), password: PASSWORD, csrfmiddlewaretoken: page.token }, { cookies: page.cookies })
    t.equal(res.statusCode, 303)
    t.equal(res.headers.location, '/')
    t.same(setCookies(res).map((c) => c.name), ['sessionid', 'csrftoken'], 'each cookie set once')
    const byName = Object.fromEntries(setCookies(res).map((c) => [c.name, c]))
    t.match(byName.sessionid, { httpOnly: true, sameSite: 'lax', path: '/', maxAge: 1800 })
    t.notOk(byName.sessionid?.secure)
    t.match(byName.csrftoken, { sameSite: 'lax', path: '/' })
    t.notOk(byName.csrftoken?.httpOnly)
    t.not(byName.csrftoken?.value, page.token, 'the CSRF token changes at login')
    const session = { origin: originOf(fx), cookies: applyCookies(page.cookies, res) }
    const body = expectSuccess(t, await me(session))
    t.equal(body.user_id, member.id)
    t.equal(body.full_name, 'Brenda Browser')
    const row = await sessionRow(session)
    t.ok(row, 'held in the database')
    t.equal(row?.tokenHash, hashSessionToken(session.cookies.sessionid ?? ''))
    t.not(row?.tokenHash, session.cookies.sessionid, 'only a hash of the token is stored')
    t.notOk(JSON.stringify(session.cookies).includes(member.apiKey), 'the API key never reaches the browser')
    const loggedIn = await app.inject({ method: 'GET', url: '/login?next=/%23narrow/channel/1', headers: { host: fx.host, cookie: cookieHeader(session.cookies) } })
    t.equal(loggedIn.statusCode, 303, 'the login page sends a logged-in browser on')
    t.equal(loggedIn.headers.location, '/#narrow/channel/1')
  })

  t.test('next is followed only to a path of this site', async (t) => {
    for (const [next, expected] of [
      ['/#narrow/dm/5', '/#narrow/dm/5'],
      ['//evil.example/', '/'],
      ['/\\evil.example/', '/'],
      ['https://evil.example/', '/'],
      ['javascript:alert(1)', '/'],
      ['/a\r\nLocation: x', '/'],
    ]) {
      const page = await openLoginPage(app, fx)
      const res = await submitLogin(app, fx, { username: member.deliveryEmail, password: PASSWORD, csrfmiddlewaretoken: page.token, next }, { cookies: page.cookies })
      t.equal(res.statusCode, 303)
      t.equal(res.headers.location, expected, JSON.stringify(next))
    }
  })

  t.test('a wrong password and an unknown account fail alike, and start no session', async (t) => {
    const tries = [
      { username: member.deliveryEmail, password: 'wrong-password' },
      { username: `nobody-${member.id}@${member.deliveryEmail.split('@')[1]}`, password: 'wrong-password' },
      { username: fx.users.bot.deliveryEmail, password: 'wrong-password' },
    ]
    const pages: string[] = []
    for (const form of tries) {
      const page = await openLoginPage(app, fx)
      const res = await submitLogin(app, fx, { ...form, csrfmiddlewaretoken: page.token }, { cookies: page.cookies })
      t.equal(res.statusCode, 401)
      t.match(res.body, /<p class="error" id="error" role="alert">Wrong email address or password\. Check both and try again\.<\/p>/)
      t.notOk(setCookies(res).some((c) => c.name === 'sessionid'))
      pages.push(res.body.replace(form.username, 'EMAIL').replace(/value="[A-Za-z0-9_-]{43}"/, ''))
    }
    t.equal(pages[1], pages[0], 'the same page whether or not the account exists')
    t.equal(pages[2], pages[0])
  })

  t.test('HTML in the email field comes back as text', async (t) => {
    const page = await openLoginPage(app, fx)
    const hostile = '"><script>alert(1)</script><img src=x onerror=alert(2)>@example.com'
    const res = await submitLogin(app, fx, { username: hostile, password: 'x', csrfmiddlewaretoken: page.token }, { cookies: page.cookies })
    t.equal(res.statusCode, 401)
    t.notMatch(res.body, /<script>alert/)
    t.notMatch(res.body, /<img/)
    t.match(res.body, 'value="&quot;&gt;&lt;script&gt;alert(1)&lt;/script&gt;&lt;img src=x onerror=alert(2)&gt;@example.com"')
  })

  t.test('the login form needs its CSRF token and the realm\'s origin', async (t) => {
    const before = await services.prisma.webSession.count({ where: { userId: member.id } })
    const page = await openLoginPage(app, fx)
    const form = { username: member.deliveryEmail, password: PASSWORD }
    const cases = [
      { name: 'no token', res: await submitLogin(app, fx, form, { cookies: page.cookies }) },
      { name: 'a wrong token', res: await submitLogin(app, fx, { ...form, csrfmiddlewaretoken: 'A'.repeat(43) }, { cookies: page.cookies }) },
      { name: 'no cookie', res: await submitLogin(app, fx, { ...form, csrfmiddlewaretoken: page.token }, { cookies: {} }) },
      { name: 'another origin', res: await submitLogin(app, fx, { ...form, csrfmiddlewaretoken: page.token }, { cookies: page.cookies, origin: 'http://evil.example' }) },
    ]
    for (const { name, res } of cases) {
      t.equal(res.statusCode, 403, name)
      t.match(res.body, 'This login form has expired. Please try again.', name)
      t.notOk(setCookies(res).some((c) => c.name === 'sessionid'), name)
    }
    t.equal(await services.prisma.webSession.count({ where: { userId: member.id } }), before, 'no session started')
  })
})

t.test('login throttling is fetch_api_key\'s, per account and per client address', async (t) => {
  const { app, fx, services } = await buildTestApp(t, { config: { rateLimiting: true } })
  const user = await fx.newUser({ password: PASSWORD })

  t.test('five failures lock the account, the right password included, for the page and the API alike', async (t) => {
    for (let i = 0; i < 5; i++) {
      const page = await openLoginPage(app, fx)
      const res = await submitLogin(app, fx, { username: user.deliveryEmail, password: `wrong-${i}`, csrfmiddlewaretoken: page.token }, { cookies: page.cookies, ip: `10.0.0.${i + 1}` })
      t.equal(res.statusCode, 401)
    }
    const page = await openLoginPage(app, fx)
    const res = await submitLogin(app, fx, { username: user.deliveryEmail, password: PASSWORD, csrfmiddlewaretoken: page.token }, { cookies: page.cookies, ip: '10.0.1.1' })
    t.equal(res.statusCode, 429)
    t.match(res.body, /Too many failed attempts to log in\. Try again in \d+ minutes?\./)
    t.ok(Number(res.headers['retry-after']) > 0)
    t.notOk(setCookies(res).some((c) => c.name === 'sessionid'))
    const api = await app.inject({ method: 'POST', url: '/api/v1/fetch_api_key', remoteAddress: '10.0.2.1', headers: { host: fx.host, 'content-type': 'application/x-www-form-urlencoded' }, payload: new URLSearchParams({ username: user.deliveryEmail, password: PASSWORD }).toString() })
    expectError(t, api, { code: 'RATE_LIMIT_HIT', status: 429 })
  })

  t.test('an address over its limit is refused whatever the account', async (t) => {
    const other = await fx.newUser({ password: PASSWORD })
    const ip = '10.9.9.9'
    const rules = RATE_RULES.authenticateByIp
    const limit = rules[0]?.maxCalls ?? 0
    for (let i = 0; i < limit; i++) await services.limiter.hit(`authip:${ip}`, rules, services.now().getTime())
    const page = await openLoginPage(app, fx)
    const res = await submitLogin(app, fx, { username: other.deliveryEmail, password: PASSWORD, csrfmiddlewaretoken: page.token }, { cookies: page.cookies, ip })
    t.equal(res.statusCode, 429)
    t.match(res.body, /Too many failed attempts/)
    const elsewhere = await submitLogin(app, fx, { username: other.deliveryEmail, password: PASSWORD, csrfmiddlewaretoken: page.token }, { cookies: page.cookies, ip: '10.9.9.10' })
    t.equal(elsewhere.statusCode, 303, 'the same account from another address logs in')
    t.equal(bodyOf(await app.inject({ method: 'GET', url: '/json/users/me', headers: { host: fx.host, cookie: cookieHeader(applyCookies(page.cookies, elsewhere)) } })).user_id, other.id)
  })
})
