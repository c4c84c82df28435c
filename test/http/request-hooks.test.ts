// Multipart bodies across app.ts's route scopes: the GET routes sit outside
// @fastify/multipart's scope (its three async hooks ran on every poll); the
// routes that take bodies, the 405 answers and unknown URLs read them as before.
import t from 'tap'
import { buildTestApp } from '../support/app.js'
import { basicAuth } from '../support/client.js'
import { expectError, expectSuccess } from '../support/expect.js'
import { hostOf, multipart, sendMultipart } from '../support/multipart.js'

t.test('a multipart body reaches a POST route, and is refused by URL and method as any body is', async (t) => {
  const { app, fx } = await buildTestApp(t)
  const member = fx.users.member
  const ping = expectSuccess(t, await sendMultipart(app, member, 'POST', '/users/me/presence', [{ name: 'status', data: 'active' }, { name: 'ping_only', data: 'true' }]))
  // status is required and ping_only leaves out the presences: both fields were read.
  t.notOk('presences' in ping, 'ping_only was read')
  const notAllowed = expectError(t, await sendMultipart(app, member, 'POST', '/users/me', [{ name: 'full_name', data: 'x' }]), { code: 'METHOD_NOT_ALLOWED', status: 405 })
  t.same(notAllowed.allowed_methods, ['DELETE', 'GET'])
  expectError(t, await sendMultipart(app, member, 'POST', '/no/such/endpoint', [{ name: 'a', data: 'b' }]), { code: 'NOT_FOUND', status: 404, msg: 'Endpoint not found' })
})

t.test('a GET route answers whatever body type a client declares, reading none', async (t) => {
  const { app, fx } = await buildTestApp(t)
  const member = fx.users.member
  const { body, contentType } = multipart([{ name: 'anything', data: 'ignored' }])
  const res = await app.inject({
    method: 'GET',
    url: '/api/v1/users/me',
    headers: { authorization: basicAuth(member.deliveryEmail, member.apiKey), host: hostOf(member), 'content-type': contentType },
    payload: body,
  })
  const me = expectSuccess(t, res)
  t.equal(me.user_id, member.id)
  t.notOk('ignored_parameters_unsupported' in me, 'the body was not read')
})
