import t from 'tap'
import { buildTestApp } from '../support/app.js'
import { anon } from '../support/client.js'
import { expectError, expectSuccess } from '../support/expect.js'

t.test('GET /server_settings', async (t) => {
  const { app, fx } = await buildTestApp(t)

  t.test('describes the server and the realm of the Host without authentication', async (t) => {
    const body = expectSuccess(t, await anon(app, fx).get('/server_settings'))
    t.equal(body.service_feature_level, 372)
    t.equal(body.service_version, '10.1')
    t.equal(body.service_merge_base, '')
    t.equal(body.realm_name, fx.realm.name)
    t.equal(body.realm_url, `http://${fx.realm.stringId}.localhost:9991`)
    t.equal(body.realm_uri, body.realm_url)
    t.equal(body.email_auth_enabled, true)
    t.equal(body.require_email_format_usernames, true)
    t.equal(body.realm_web_public_access_enabled, false)
    t.equal(body.push_notifications_enabled, false)
    t.equal(body.webpush_vapid_public_key, null, 'no Web Push sender configured')
    t.equal(body.is_incompatible, false)
    t.same(body.external_authentication_methods, [])
    t.equal(body.authentication_methods.password, true)
    t.equal(body.authentication_methods.github, false)
    t.equal(typeof body.realm_icon, 'string')
    t.equal(typeof body.realm_description, 'string')
  })

  t.test('leaves out realm keys on a host without a realm', async (t) => {
    const body = expectSuccess(t, await anon(app, { host: 'localhost:9991' }).get('/server_settings'))
    t.equal(body.service_feature_level, 372)
    t.notOk('realm_name' in body)
    t.notOk('realm_url' in body)
  })

  t.test('rejects an unknown subdomain', async (t) => {
    expectError(t, await anon(app, { host: 'nosuchrealm.localhost' }).get('/server_settings'), { code: 'BAD_REQUEST', msg: 'Invalid subdomain' })
  })

  t.test('lists parameters it does not support', async (t) => {
    const body = expectSuccess(t, await anon(app, fx).get('/server_settings', { zeta: 1, alpha: 'x' }))
    t.same(body.ignored_parameters_unsupported, ['alpha', 'zeta'])
  })

  t.test('answers a wrong method with 405 in the envelope', async (t) => {
    const body = expectError(t, await anon(app, fx).post('/server_settings'), { code: 'METHOD_NOT_ALLOWED', status: 405, msg: 'Method Not Allowed' })
    t.same(body.allowed_methods, ['GET'])
  })

  t.test('answers an unknown path with 404 in the envelope', async (t) => {
    expectError(t, await anon(app, fx).get('/no/such/endpoint'), { code: 'NOT_FOUND', status: 404 })
  })
})
