// /metrics behind METRICS_TOKEN, counters and the latency histogram moving,
// JSON request logs with user and organization and without secrets, CORS,
// security headers on the HTML pages, and X-Forwarded-For from trusted proxies.
import t from 'tap'
import { Writable } from 'node:stream'
import { buildApp } from '../../src/app.js'
import { loggerOptions } from '../../src/http/observability.js'
import { servicesOver } from '../../src/node-services.js'
import { memoryBackends } from '../../src/backends/index.js'
import { MemoryEventBus } from '../../src/events/memory-bus.js'
import { buildTestApp, makeFixture, testConfig, testDatabase } from '../support/app.js'
import { as, basicAuth } from '../support/client.js'
import { bodyOf, expectError, expectSuccess } from '../support/expect.js'
import { allRoutes } from '../../src/http/routes/index.js'
import { route } from '../../src/http/route.js'

const TOKEN = 'metrics-secret-0123456789'

/** The value of a sample line `name{labels} value` (labels matched as a substring), or undefined. */
function sample(text: string, name: string, labels = ''): number | undefined {
  for (const line of text.split('\n')) {
    if (!line.startsWith(name)) continue
    const rest = line.slice(name.length)
    if (labels === '' ? !(rest.startsWith(' ') || rest.startsWith('{')) : !(rest.startsWith('{') && rest.includes(labels))) continue
    return Number(line.slice(line.lastIndexOf(' ') + 1))
  }
  return undefined
}

t.test('/metrics: 404 without METRICS_TOKEN; 401 without, 403 with a wrong token; served with the right one', async (t) => {
  const off = await buildTestApp(t)
  const res = await off.app.inject({ method: 'GET', url: '/metrics', headers: { authorization: `Bearer ${TOKEN}` } })
  expectError(t, res, { code: 'NOT_FOUND', status: 404 })

  const { app } = await buildTestApp(t, { config: { metricsToken: TOKEN } })
  expectError(t, await app.inject({ method: 'GET', url: '/metrics' }), { code: 'UNAUTHORIZED', status: 401, msg: 'Missing metrics token' })
  expectError(t, await app.inject({ method: 'GET', url: '/metrics', headers: { authorization: 'Basic abc' } }), { code: 'UNAUTHORIZED', status: 401 })
  expectError(t, await app.inject({ method: 'GET', url: '/metrics', headers: { authorization: 'Bearer wrong' } }), { code: 'UNAUTHORIZED', status: 403, msg: 'Invalid metrics token' })
  expectError(t, await app.inject({ method: 'GET', url: '/metrics', headers: { authorization: `Bearer ${TOKEN}x` } }), { code: 'UNAUTHORIZED', status: 403 })
  const ok = await app.inject({ method: 'GET', url: '/metrics', headers: { authorization: `Bearer ${TOKEN}` } })
  t.equal(ok.statusCode, 200)
  t.match(ok.headers['content-type'], /^text\/plain/)
  t.match(ok.body, /# TYPE roost_http_request_duration_seconds histogram/)
  t.match(ok.body, /# TYPE roost_process_cpu_seconds_total counter/, 'default process metrics')
  t.equal(sample(ok.body, 'roost_event_queue_held_polls'), 0)
  t.equal(sample(ok.body, 'roost_scheduled_messages_due') !== undefined, true)
})

t.test('counters move: a send is published, a poll answer is delivered, latency is labelled by route pattern', async (t) => {
  const { app, fx, services } = await buildTestApp(t, { config: { metricsToken: TOKEN } })
  const scrape = async () => (await app.inject({ method: 'GET', url: '/metrics', headers: { authorization: `Bearer ${TOKEN}` } })).body
  const member = as(app, fx.users.member)
  const before = await scrape()
  t.equal(sample(before, 'roost_events_published_total', 'type="message"'), undefined)
  t.equal(sample(before, 'roost_events_delivered_total'), 0)

  const reg = expectSuccess(t, await member.post('/register', { event_types: JSON.stringify(['message']) }))
  expectSuccess(t, await member.post('/messages', { type: 'stream', to: 'general', topic: 'metrics', content: 'hello' }))
  const polled = expectSuccess(t, await member.get('/events', { queue_id: reg.queue_id, last_event_id: reg.last_event_id, dont_block: true }))
  t.equal(polled.events.length, 1)
  await services.userDataCache.whenListening()
  for (let i = 0; i < 3; i++) expectSuccess(t, await member.get('/users/me'))

  const after = await scrape()
  t.equal(sample(after, 'roost_events_published_total', 'type="message"'), 1)
  t.equal(sample(after, 'roost_events_delivered_total'), 1)
  t.equal(sample(after, 'roost_event_queues_registered_total'), 1)
  t.ok((sample(after, 'roost_event_fanout_users_count') ?? 0) >= 1, 'fan-out observed')
  t.ok((sample(after, 'roost_auth_cache_lookups_total', 'result="miss"') ?? 0) >= 1, 'auth cache misses counted')
  t.equal(sample(after, 'roost_user_data_cache_reads_total', 'result="miss"'), 1, 'the first GET /users/me read the database')
  t.equal(sample(after, 'roost_user_data_cache_reads_total', 'result="hit"'), 2, 'the next two were answered from the cache')
  t.equal(sample(after, 'roost_bus_errors_total', 'source="user_data_cache_listener"'), 0)
  t.equal(sample(after, 'roost_http_request_duration_seconds_count', 'route="/api/v1/messages",status="200"'), 1)
  t.equal(sample(after, 'roost_http_request_duration_seconds_count', 'route="/api/v1/events",status="200"'), 1)
  t.notMatch(after, /queue_id=|route="\/api\/v1\/events\?/, 'no raw URLs as labels')
})

t.test('one registry per app: two apps in one process count separately', async (t) => {
  const a = await buildTestApp(t, { config: { metricsToken: TOKEN } })
  const b = await buildTestApp(t, { config: { metricsToken: TOKEN } })
  expectSuccess(t, await as(a.app, a.fx.users.member).post('/messages', { type: 'stream', to: 'general', topic: 'x', content: 'one' }))
  const scrapeB = (await b.app.inject({ method: 'GET', url: '/metrics', headers: { authorization: `Bearer ${TOKEN}` } })).body
  t.equal(sample(scrapeB, 'roost_events_published_total', 'type="message"'), undefined)
})

t.test('logs: JSON with user_id and realm; Authorization headers and passwords never written', async (t) => {
  const lines: string[] = []
  const stream = new Writable({
    write(chunk: Buffer, _enc, done) {
      lines.push(...chunk.toString('utf8').split('\n').filter((l) => l !== ''))
      done()
    },
  })
  const database = await testDatabase()
  const bus = new MemoryEventBus()
  const services = servicesOver(testConfig(), database, memoryBackends({ rateLimiting: false }, { bus }))
  const app = await buildApp({ services, logger: loggerOptions('info', stream) })
  t.teardown(async () => {
    await app.close()
    await bus.close()
  })
  const fx = await makeFixture(services)
  const member = fx.users.member
  expectSuccess(t, await as(app, member).get('/users/me'))
  const password = 'owner-password-1'
  expectSuccess(t, await app.inject({ method: 'POST', url: '/api/v1/fetch_api_key', headers: { host: fx.host, 'content-type': 'application/x-www-form-urlencoded' }, payload: new URLSearchParams({ username: fx.users.owner.deliveryEmail, password }).toString() }))
  // A handler's own log line through ctx.log, and an object carrying the secrets.
  app.log.info({ request: { headers: { authorization: basicAuth(member.deliveryEmail, member.apiKey) } }, password, api_key: member.apiKey }, 'probe')

  const records = lines.map((l) => JSON.parse(l) as Record<string, unknown>)
  const me = records.find((r) => r.msg === 'request completed' && r.route === '/api/v1/users/me')
  t.match(me, { level: 30, method: 'GET', status: 200, user_id: member.id, realm: fx.realm.stringId })
  t.type(me?.request_id, 'string')
  const all = lines.join('\n')
  t.notMatch(all, basicAuth(member.deliveryEmail, member.apiKey).slice(6), 'no Authorization header')
  t.notMatch(all, member.apiKey, 'no API key')
  t.notMatch(all, password, 'no password')
  t.match(records.find((r) => r.msg === 'probe'), { password: '[redacted]', api_key: '[redacted]', request: { headers: { authorization: '[redacted]' } } })
})

t.test('request IDs: a safe X-Request-Id is kept, returned and in every log line of the request; others get a fresh UUID', async (t) => {
  const lines: string[] = []
  const stream = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      lines.push(...chunk.toString().split('\n').filter((l) => l !== ''))
      callback()
    },
  })
  const database = await testDatabase()
  const bus = new MemoryEventBus()
  const services = servicesOver(testConfig(), database, memoryBackends({ rateLimiting: false }, { bus }))
  // A handler that logs through ctx.log, as actions do.
  const probe = route({
    method: 'GET',
    url: '/test/log_probe',
    handler: async (_input, ctx) => {
      ctx.log.info({ step: 'inside' }, 'handler line')
      return {}
    },
  })
  const app = await buildApp({ services, routes: [...allRoutes, probe], logger: loggerOptions('info', stream) })
  t.teardown(async () => {
    await app.close()
    await bus.close()
  })
  const fx = await makeFixture(services)
  const member = fx.users.member
  const call = (id?: string) =>
    app.inject({ method: 'GET', url: '/api/v1/test/log_probe', headers: { host: fx.host, authorization: basicAuth(member.deliveryEmail, member.apiKey), ...(id === undefined ? {} : { 'x-request-id': id }) } })

  const given = 'edge-7f3a:9c2e/req.42'
  const kept = await call(given)
  expectSuccess(t, kept)
  t.equal(kept.headers['x-request-id'], given, 'returned as given')
  const records = () => lines.map((l) => JSON.parse(l) as Record<string, unknown>)
  const ofGiven = records().filter((r) => r.request_id === given)
  t.same(ofGiven.map((r) => r.msg).sort(), ['handler line', 'request completed'], 'the handler\'s line and the completion line')
  t.match(ofGiven.find((r) => r.msg === 'handler line'), { user_id: member.id, step: 'inside' })

  const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/
  const fresh = await call()
  t.match(fresh.headers['x-request-id'], uuid, 'none given: a random UUID')
  const again = await call()
  t.not(again.headers['x-request-id'], fresh.headers['x-request-id'], 'a new one per request')
  for (const bad of ['a'.repeat(129), 'two words', 'semi;colon', '<script>', 'line\u00e9']) {
    const res = await call(bad)
    expectSuccess(t, res)
    t.match(res.headers['x-request-id'], uuid, `replaced: ${JSON.stringify(bad.slice(0, 20))}`)
  }
  t.equal((await call('a'.repeat(128))).headers['x-request-id'], 'a'.repeat(128), '128 characters are kept')

  // Errors and unknown routes carry it too.
  const missing = await app.inject({ method: 'GET', url: '/api/v1/no_such_route', headers: { host: fx.host, 'x-request-id': 'lost-1' } })
  expectError(t, missing, { code: 'NOT_FOUND', status: 404 })
  t.equal(missing.headers['x-request-id'], 'lost-1')
  const unauthorized = await app.inject({ method: 'GET', url: '/api/v1/users/me', headers: { host: fx.host, 'x-request-id': 'noauth-1' } })
  t.equal(unauthorized.statusCode, 401)
  t.equal(unauthorized.headers['x-request-id'], 'noauth-1')
})

t.test('CORS: preflight answered for an allowed origin only; off by default', async (t) => {
  const { app } = await buildTestApp(t, { config: { corsOrigins: ['https://chat.example.com'] } })
  const preflight = (origin: string) =>
    app.inject({ method: 'OPTIONS', url: '/api/v1/messages', headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization' } })
  const allowed = await preflight('https://chat.example.com')
  t.equal(allowed.statusCode, 204)
  t.equal(allowed.headers['access-control-allow-origin'], 'https://chat.example.com')
  t.match(String(allowed.headers['access-control-allow-methods']), /POST/)
  t.match(String(allowed.headers['access-control-allow-headers']), /Authorization/)
  const other = await preflight('https://evil.example.net')
  t.equal(other.headers['access-control-allow-origin'], undefined)

  const off = await buildTestApp(t)
  const none = await off.app.inject({ method: 'OPTIONS', url: '/api/v1/messages', headers: { origin: 'https://chat.example.com', 'access-control-request-method': 'POST' } })
  t.equal(none.headers['access-control-allow-origin'], undefined)
})

t.test('security headers on the join page, not on the JSON API', async (t) => {
  const { app, fx } = await buildTestApp(t)
  const page = await app.inject({ method: 'GET', url: '/join/no-such-key', headers: { host: fx.host } })
  t.match(String(page.headers['content-type']), /text\/html/)
  t.match(String(page.headers['content-security-policy']), /default-src 'self'/)
  t.match(String(page.headers['content-security-policy']), /form-action 'self'/)
  t.equal(page.headers['x-content-type-options'], 'nosniff')
  t.equal(page.headers['x-frame-options'], 'SAMEORIGIN')
  const api = await as(app, fx.users.member).get('/users/me')
  expectSuccess(t, api)
  t.equal(api.headers['content-security-policy'], undefined)
  t.equal(bodyOf(api).result, 'success')
})

t.test('X-Forwarded-For is honoured only from a trusted proxy, as seen by the per-IP rate limiter', async (t) => {
  const { app, fx } = await buildTestApp(t, { config: { rateLimiting: true, trustedProxies: ['10.0.0.0/8'] } })
  const hit = async (remoteAddress: string, forwardedFor: string) => {
    const res = await app.inject({ method: 'GET', url: '/api/v1/server_settings', remoteAddress, headers: { host: fx.host, 'x-forwarded-for': forwardedFor } })
    t.equal(res.statusCode, 200)
    return Number(res.headers['x-ratelimit-remaining'])
  }
  const first = await hit('10.1.2.3', '203.0.113.7')
  t.equal(await hit('10.9.9.9', '203.0.113.7'), first - 1, 'same client through two proxies: one bucket')
  t.equal(await hit('10.1.2.3', '198.51.100.4'), first, 'another client behind the proxy: its own bucket')
  // An untrusted peer's X-Forwarded-For is ignored: its own address is the key.
  const direct = await hit('192.0.2.50', '203.0.113.99')
  t.equal(await hit('192.0.2.50', '198.51.100.200'), direct - 1)
})
