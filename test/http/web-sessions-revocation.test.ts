// Browser sessions through HTTP (docs/web-sessions.md): deactivation and
// password changes ending sessions; files and avatars; Secure cookies.
import t from 'tap'
import { buildTestApp } from '../support/app.js'
import { as } from '../support/client.js'
import { bodyOf, expectError, expectSuccess } from '../support/expect.js'
import { applyCookies, cookieHeader, json, logIn, openLoginPage, originOf, setCookies, submitLogin, type BrowserSession } from '../support/browser.js'
import { hashSessionToken } from '../../src/actions/web-sessions.js'
import { RATE_RULES } from '../../src/ratelimit/limiter.js'

const PASSWORD = 'a-browser-password'

t.test('sessions ending, files and https', async (t) => {
  const { app, fx, services } = await buildTestApp(t, { config: { sessionIdleTimeoutSeconds: 600, sessionMaxAgeSeconds: 1800 } })
  const realNow = services.now
  t.teardown(() => {
    services.now = realNow
  })
  const member = await fx.newUser({ password: PASSWORD, fullName: 'Brenda Browser' })
  const sessionRow = (s: BrowserSession) => services.prisma.webSession.findUnique({ where: { tokenHash: hashSessionToken(s.cookies.sessionid ?? '') } })
  const me = (s: BrowserSession) => json(app, fx, s, 'GET', '/users/me')
  const rename = (s: BrowserSession, name: string, headers?: Record<string, string | null>) => json(app, fx, s, 'PATCH', '/settings', { full_name: name }, { headers })

  t.test('deactivating the user ends their sessions', async (t) => {
    const user = await fx.newUser({ password: PASSWORD })
    const session = await logIn(app, fx, user.deliveryEmail, PASSWORD)
    expectSuccess(t, await me(session))
    expectSuccess(t, await as(app, fx.users.admin).delete(`/users/${user.id}`))
    expectError(t, await me(session), { code: 'UNAUTHORIZED', status: 401 })
    t.equal(await services.prisma.webSession.count({ where: { userId: user.id } }), 0)
    expectSuccess(t, await as(app, fx.users.admin).post(`/users/${user.id}/reactivate`))
    expectError(t, await me(session), { code: 'UNAUTHORIZED', status: 401 })
    expectSuccess(t, await me(await logIn(app, fx, user.deliveryEmail, PASSWORD)))
  })

  t.test('a password change ends the user\'s other sessions and keeps the one that made it', async (t) => {
    const user = await fx.newUser({ password: PASSWORD })
    const a = await logIn(app, fx, user.deliveryEmail, PASSWORD)
    const b = await logIn(app, fx, user.deliveryEmail, PASSWORD)
    expectSuccess(t, await json(app, fx, a, 'PATCH', '/settings', { old_password: PASSWORD, new_password: 'a-new-password-2' }))
    expectSuccess(t, await me(a))
    expectError(t, await me(b), { code: 'UNAUTHORIZED', status: 401 })
    const c = await logIn(app, fx, user.deliveryEmail, 'a-new-password-2')
    const fresh = await fx.refresh(user)
    expectSuccess(t, await as(app, fresh).patch('/settings', { old_password: 'a-new-password-2', new_password: 'a-third-password-3' }))
    expectError(t, await me(a), { code: 'UNAUTHORIZED', status: 401 })
    expectError(t, await me(c), { code: 'UNAUTHORIZED', status: 401 })
  })

  t.test('uploaded files and avatars accept the session cookie', async (t) => {
    const session = await logIn(app, fx, member.deliveryEmail, PASSWORD)
    const boundary = 'roostboundary'
    const payload = `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="note.txt"\r\nContent-Type: text/plain\r\n\r\nhello file\r\n--${boundary}--\r\n`
    const up = await app.inject({
      method: 'POST',
      url: '/json/user_uploads',
      headers: { host: fx.host, cookie: cookieHeader(session.cookies), origin: session.origin, 'x-csrftoken': session.cookies.csrftoken ?? '', 'content-type': `multipart/form-data; boundary=${boundary}` },
      payload,
    })
    const url = expectSuccess(t, up).url as string
    const file = await app.inject({ method: 'GET', url, headers: { host: fx.host, cookie: cookieHeader(session.cookies) } })
    t.equal(file.statusCode, 200)
    t.equal(file.body, 'hello file')
    const anonymous = await app.inject({ method: 'GET', url, headers: { host: fx.host } })
    t.equal(anonymous.statusCode, 401)
    const avatar = await app.inject({ method: 'GET', url: `/avatar/${fx.users.owner.id}`, headers: { host: fx.host, cookie: cookieHeader(session.cookies) } })
    t.equal(avatar.statusCode, 302)
  })

  t.test('cookies are Secure when EXTERNAL_URL is https', async (t) => {
    const secure = await buildTestApp(t, { config: { externalUrl: 'https://localhost' }, fixture: fx })
    const page = await openLoginPage(secure.app, fx)
    t.ok(setCookies(page.res)[0]?.secure, 'csrftoken on the form')
    const res = await submitLogin(secure.app, fx, { username: member.deliveryEmail, password: PASSWORD, csrfmiddlewaretoken: page.token }, { cookies: page.cookies, externalUrl: 'https://localhost' })
    t.equal(res.statusCode, 303)
    const cookies = setCookies(res)
    t.same(cookies.map((c) => [c.name, c.secure]), [['sessionid', true], ['csrftoken', true]])
    const session = { origin: `https://${fx.host}`, cookies: applyCookies(page.cookies, res) }
    expectSuccess(t, await json(secure.app, fx, session, 'PATCH', '/settings', { full_name: 'Brenda Browser' }))
    expectError(t, await json(secure.app, fx, { ...session, origin: `http://${fx.host}` }, 'PATCH', '/settings', { full_name: 'X' }), { code: 'CSRF_FAILED', status: 403 })
  })
})
