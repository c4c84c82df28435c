// The envelope rules every endpoint shares: success and error bodies, 404/405,
// ignored_parameters_unsupported, parameter decoding errors and 500s. Probe
// routes exercise parameter kinds the real endpoints may not have yet.
import t from 'tap'
import { Type } from 'typebox'
import { buildApp } from '../../src/app.js'
import { allRoutes } from '../../src/http/routes/index.js'
import { route } from '../../src/http/route.js'
import { alias, json, optional } from '../../src/http/params.js'
import { MemoryEventBus } from '../../src/events/memory-bus.js'
import { servicesOver } from '../../src/node-services.js'
import { memoryBackends } from '../../src/backends/index.js'
import { makeFixture, testConfig, testDatabase } from '../support/app.js'
import { anon, as } from '../support/client.js'
import { bodyOf, expectError, expectSuccess } from '../support/expect.js'

const SECRET = 'connection to db at 10.0.0.7 failed: password=hunter2'

const probes = [
  route({
    method: 'POST',
    url: '/test/probe',
    params: {
      count: Type.Integer(),
      ids: json(Type.Array(Type.Integer())),
      flag: optional(Type.Boolean(), { default: false }),
      topic: optional(alias(Type.String(), 'subject')),
      options: optional(json(Type.Object({ size: Type.Integer() }))),
    },
    handler: async (input) => ({ input }),
  }),
  route({
    method: 'GET',
    url: '/test/explode',
    handler: async () => {
      throw new Error(SECRET)
    },
  }),
]

t.test('the API envelope', async (t) => {
  const database = await testDatabase()
  const bus = new MemoryEventBus()
  const services = servicesOver(testConfig(), database, memoryBackends({ rateLimiting: false }, { bus }))
  const app = await buildApp({ services, routes: [...allRoutes, ...probes] })
  t.teardown(async () => {
    await app.close()
    await bus.close()
  })
  const fx = await makeFixture(services)
  const member = fx.users.member
  const probe = (params: Record<string, unknown>) => as(app, member).post('/test/probe', params)

  t.test('wraps success in result and msg', async (t) => {
    const body = expectSuccess(t, await probe({ count: 3, ids: [1, 2] }))
    t.same(body, { result: 'success', msg: '', input: { count: 3, ids: [1, 2], flag: false } })
  })

  t.test('answers an unknown path with a 404 envelope', async (t) => {
    for (const path of ['/no/such/endpoint', '/api/v1/no/such/endpoint', '/api/v2/users']) {
      const res = await as(app, member).get(path)
      const body = expectError(t, res, { code: 'NOT_FOUND', status: 404 })
      t.same(Object.keys(body).sort(), ['code', 'msg', 'result'])
      t.match(res.headers['content-type'], /^application\/json/)
    }
  })

  t.test('answers a wrong method with a 405 envelope listing the allowed ones', async (t) => {
    const res = await as(app, member).delete('/server_settings')
    const body = expectError(t, res, { code: 'METHOD_NOT_ALLOWED', status: 405, msg: 'Method Not Allowed' })
    t.same(body.allowed_methods, ['GET'])
    t.equal(res.headers.allow, 'GET')
    const both = expectError(t, await as(app, member).patch('/users'), { code: 'METHOD_NOT_ALLOWED', status: 405 })
    t.same(both.allowed_methods, ['GET', 'POST'])
  })

  t.test('lists unsupported parameters, sorted, on success only', async (t) => {
    const body = expectSuccess(t, await as(app, member).get('/users/me', { zeta: 1, alpha: 'x', mid: 'y' }))
    t.same(body.ignored_parameters_unsupported, ['alpha', 'mid', 'zeta'])
    t.notOk('ignored_parameters_unsupported' in expectSuccess(t, await as(app, member).get('/users/me')))
    const failed = expectError(t, await probe({ count: 'x', ids: [], zeta: 1 }), { code: 'BAD_REQUEST' })
    t.notOk('ignored_parameters_unsupported' in failed)
  })

  t.test('does not list a deprecated alias as unsupported', async (t) => {
    const body = expectSuccess(t, await probe({ count: 1, ids: [], subject: 'old name' }))
    t.equal(body.input.topic, 'old name')
    t.notOk('ignored_parameters_unsupported' in body)
  })

  t.test('refuses a parameter sent under both its name and its alias', async (t) => {
    expectError(t, await probe({ count: 1, ids: [], topic: 'a', subject: 'b' }), {
      code: 'REQUEST_CONFUSING_VAR', status: 400, msg: "Can't decide between 'topic' and 'subject' arguments",
    })
  })

  t.test('names a missing parameter', async (t) => {
    const body = expectError(t, await probe({ ids: [] }), { code: 'REQUEST_VARIABLE_MISSING', status: 400, msg: "Missing 'count' argument" })
    t.equal(body.var_name, 'count')
  })

  t.test('names a parameter that is not valid JSON', async (t) => {
    expectError(t, await probe({ count: 1, ids: '[1, 2' }), { code: 'BAD_REQUEST', status: 400, msg: 'ids is not valid JSON' })
  })

  t.test('names a JSON parameter of the wrong shape', async (t) => {
    expectError(t, await probe({ count: 1, ids: '{"a":1}' }), { code: 'BAD_REQUEST', status: 400, msg: 'ids is not a list' })
    expectError(t, await probe({ count: 1, ids: '["x"]' }), { code: 'BAD_REQUEST', status: 400, msg: 'ids[0] is not an integer' })
    expectError(t, await probe({ count: 1, ids: [], options: '{"size":"big"}' }), {
      code: 'BAD_REQUEST', status: 400, msg: 'options["size"] is not an integer',
    })
  })

  t.test('names a scalar of the wrong type', async (t) => {
    expectError(t, await probe({ count: 'many', ids: [] }), { code: 'BAD_REQUEST', status: 400, msg: 'count is not an integer' })
    expectError(t, await probe({ count: '1.5', ids: [] }), { code: 'BAD_REQUEST', status: 400, msg: 'count is not an integer' })
    expectError(t, await probe({ count: 1, ids: [], flag: 'yes' }), { code: 'BAD_REQUEST', status: 400, msg: 'flag is not a boolean' })
  })

  t.test('coerces decimal strings and true/false', async (t) => {
    const body = expectSuccess(t, await probe({ count: '42', ids: '[7]', flag: 'true' }))
    t.same(body.input, { count: 42, ids: [7], flag: true })
  })

  t.test('merges query-string parameters into a POST', async (t) => {
    const res = await as(app, member).request('POST', '/test/probe', { count: 5, ids: [] }, { query: true })
    t.same(expectSuccess(t, res).input, { count: 5, ids: [], flag: false })
  })

  t.test('answers an unexpected failure with a generic 500 that leaks nothing', async (t) => {
    const res = await as(app, member).get('/test/explode')
    const body = expectError(t, res, { code: 'INTERNAL_SERVER_ERROR', status: 500, msg: 'Internal server error' })
    t.same(Object.keys(body).sort(), ['code', 'msg', 'result'])
    t.notMatch(res.body, /hunter2|10\.0\.0\.7|connection/)
  })

  t.test('checks authentication before parameters', async (t) => {
    expectError(t, await anon(app, fx).post('/test/probe', { ids: 'not json' }), { code: 'UNAUTHORIZED', status: 401 })
  })

  t.test('never answers with a bare body', async (t) => {
    const res = await app.inject({ method: 'POST', url: '/api/v1/fetch_api_key', headers: { host: fx.host, 'content-type': 'application/x-www-form-urlencoded' }, payload: '%%%' })
    t.equal(bodyOf(res).result, res.statusCode === 200 ? 'success' : 'error')
  })
})
