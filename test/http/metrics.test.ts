// GET /metrics on a node over PostgreSQL and Redis (a database and a key
// prefix of its own): build info, PostgreSQL statement and Redis command
// latency, messages sent, login refusals and rate-limit refusals.
import t from 'tap'
import { randomUUID } from 'node:crypto'
import { buildApp } from '../../src/app.js'
import { servicesOver } from '../../src/node-services.js'
import { openBackends } from '../../src/backends/index.js'
import { openDatabase } from '../../src/db/client.js'
import { applyMigrations } from '../../src/db/migrate.js'
import { SERVICE_FEATURE_LEVEL, SERVICE_VERSION } from '../../src/version.js'
import { makeFixture, testConfig } from '../support/app.js'
import { testRedisSettings } from '../support/config.js'
import { throwawayDatabase } from '../support/throwaway-db.js'
import { as } from '../support/client.js'
import { expectError, expectSuccess } from '../support/expect.js'

const TOKEN = 'metrics-secret-backends-0123'

/** The value of the sample `name{labels}` (labels exactly as written), or undefined. */
function sample(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `))
  return line === undefined ? undefined : Number(line.slice(series.length + 1))
}

t.test('GET /metrics: build info, backend latency, messages sent, login and rate-limit refusals', async (t) => {
  const database = await openDatabase({ databaseUrl: await throwawayDatabase(t) })
  t.teardown(() => database.close())
  await applyMigrations(database)
  const config = testConfig({ ...testRedisSettings(), databaseUrl: undefined, metricsToken: TOKEN, rateLimiting: true, buildCommit: '0123abc' })
  const backends = await openBackends(config, { redisPrefix: `test:${randomUUID()}` })
  const services = servicesOver(config, database, backends)
  const app = await buildApp({ services })
  t.teardown(async () => {
    await app.close()
    await backends.close()
  })
  const fx = await makeFixture(services)
  const scrape = async () => {
    const res = await app.inject({ method: 'GET', url: '/metrics', headers: { authorization: `Bearer ${TOKEN}` } })
    t.equal(res.statusCode, 200)
    return res.body
  }
  const before = await scrape()
  const version = (JSON.parse((await import('node:fs')).readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as { version: string }).version
  t.equal(
    sample(before, `roost_build_info{version="${version}",commit="0123abc",api_version="${SERVICE_VERSION}",feature_level="${SERVICE_FEATURE_LEVEL}",node_version="${process.version}"}`),
    1,
    'build info names the version and the commit',
  )
  t.equal(sample(before, 'roost_messages_sent_total{type="stream"}'), undefined)

  const member = as(app, fx.users.member)
  expectSuccess(t, await member.post('/messages', { type: 'stream', to: 'general', topic: 'metrics', content: 'one' }))
  expectSuccess(t, await member.post('/messages', { type: 'stream', to: 'general', topic: 'metrics', content: 'two' }))
  expectSuccess(t, await member.post('/messages', { type: 'direct', to: JSON.stringify([fx.users.otherMember.id]), content: 'three' }))

  // Five wrong passwords, then the account's password limit refuses the sixth attempt.
  const login = (password: string) =>
    app.inject({ method: 'POST', url: '/api/v1/fetch_api_key', headers: { host: fx.host, 'content-type': 'application/x-www-form-urlencoded' }, payload: new URLSearchParams({ username: fx.users.owner.deliveryEmail, password }).toString() })
  for (let i = 0; i < 5; i++) expectError(t, await login(`wrong-${i}`), { code: 'AUTHENTICATION_FAILED', status: 401 })
  expectError(t, await login('wrong-5'), { code: 'RATE_LIMIT_HIT', status: 429 })

  // The per-address limit of unauthenticated API calls (100 a minute, the logins above included): called until it refuses once.
  let refused = 0
  for (let i = 0; i < 101 && refused === 0; i++) {
    const res = await app.inject({ method: 'GET', url: '/api/v1/server_settings', headers: { host: fx.host } })
    if (res.statusCode === 429) refused++
  }
  t.equal(refused, 1)

  const after = await scrape()
  t.equal(sample(after, 'roost_messages_sent_total{type="stream"}'), 2)
  t.equal(sample(after, 'roost_messages_sent_total{type="direct"}'), 1)
  t.equal(sample(after, 'roost_login_refusals_total{code="AUTHENTICATION_FAILED"}'), 5)
  t.equal(sample(after, 'roost_login_refusals_total{code="RATE_LIMIT_HIT"}'), 1)
  t.equal(sample(after, 'roost_rate_limit_refusals_total{limit="login"}'), 1)
  t.equal(sample(after, 'roost_rate_limit_refusals_total{limit="api_ip"}'), 1)
  t.equal(sample(after, 'roost_rate_limit_refusals_total{limit="api_user"}'), undefined)

  // Every statement of the sends and logins went through the pool; the rate limiter's commands through Redis.
  const statements = sample(after, 'roost_db_query_duration_seconds_count') ?? 0
  t.ok(statements > (sample(before, 'roost_db_query_duration_seconds_count') ?? 0), `PostgreSQL statements timed (${statements})`)
  t.ok((sample(after, 'roost_db_query_duration_seconds_sum') ?? -1) > 0)
  t.match(after, /^roost_db_query_duration_seconds_bucket\{le="0\.005"\} \d+$/m)
  const redisCommands = after.split('\n').filter((l) => l.startsWith('roost_redis_command_duration_seconds_count{'))
  t.ok(redisCommands.length > 0, 'Redis commands timed')
  t.ok(redisCommands.every((l) => /^roost_redis_command_duration_seconds_count\{command="[a-z]+"\} [1-9]\d*$/.test(l)), redisCommands.join('\n'))
  t.notMatch(after, /command="(xread|subscribe|ssubscribe)"/, 'blocking reads and subscriptions are not timed')
})
