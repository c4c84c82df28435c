// Browser sessions across nodes (docs/web-sessions.md): a session is a row in
// the shared database, so a login on node A is good on node B, and a logout
// or a password change on one node ends it on the other at once.
import t from 'tap'
import { twoNodesOwnConnections } from '../support/app.js'
import { expectError, expectSuccess } from '../support/expect.js'
import { cookieHeader, json, logIn } from '../support/browser.js'

const PASSWORD = 'a-cluster-password'

t.test('a session made on node A is accepted on node B, and ended there for both', async (t) => {
  const { a, b } = await twoNodesOwnConnections(t)
  const user = await a.fx.newUser({ password: PASSWORD, fullName: 'Nadia Node' })
  const session = await logIn(a.app, a.fx, user.deliveryEmail, PASSWORD)
  t.equal(expectSuccess(t, await json(b.app, b.fx, session, 'GET', '/users/me')).user_id, user.id)
  expectSuccess(t, await json(b.app, b.fx, session, 'PATCH', '/settings', { full_name: 'Nadia Both' }))
  t.equal(expectSuccess(t, await json(a.app, a.fx, session, 'GET', '/users/me')).full_name, 'Nadia Both')
  expectError(t, await json(b.app, b.fx, session, 'PATCH', '/settings', { full_name: 'Forged' }, { headers: { 'x-csrftoken': 'A'.repeat(43) } }), { code: 'CSRF_FAILED', status: 403 })
  const out = await b.app.inject({ method: 'POST', url: '/accounts/logout', headers: { host: b.fx.host, cookie: cookieHeader(session.cookies), origin: session.origin, 'x-csrftoken': session.cookies.csrftoken ?? '' } })
  t.equal(out.statusCode, 303)
  expectError(t, await json(a.app, a.fx, session, 'GET', '/users/me'), { code: 'UNAUTHORIZED', status: 401 })
})

t.test('a password changed on node A ends the other sessions on node B', async (t) => {
  const { a, b } = await twoNodesOwnConnections(t)
  const user = await a.fx.newUser({ password: PASSWORD })
  const kept = await logIn(a.app, a.fx, user.deliveryEmail, PASSWORD)
  const other = await logIn(b.app, b.fx, user.deliveryEmail, PASSWORD)
  expectSuccess(t, await json(b.app, b.fx, other, 'GET', '/users/me'))
  expectSuccess(t, await json(a.app, a.fx, kept, 'PATCH', '/settings', { old_password: PASSWORD, new_password: 'another-cluster-password' }))
  expectError(t, await json(b.app, b.fx, other, 'GET', '/users/me'), { code: 'UNAUTHORIZED', status: 401 })
  expectSuccess(t, await json(b.app, b.fx, kept, 'GET', '/users/me'))
})
