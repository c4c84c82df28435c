import t from 'tap'
import { buildTestApp } from '../support/app.js'
import { anon } from '../support/client.js'
import { bodyOf, expectError, expectSuccess } from '../support/expect.js'

t.test('API rate limits (RATE_LIMITING=on)', async (t) => {
  const { app, fx } = await buildTestApp(t, { config: { rateLimiting: true } })

  t.test('counts unauthenticated calls per address and answers 429 past 100 a minute', async (t) => {
    const first = await anon(app, fx).get('/server_settings')
    expectSuccess(t, first)
    t.equal(first.headers['x-ratelimit-limit'], '100')
    t.equal(first.headers['x-ratelimit-remaining'], '99')
    t.ok(Number(first.headers['x-ratelimit-reset']) > Date.now() / 1000)
    for (let i = 1; i < 100; i++) expectSuccess(t, await anon(app, fx).get('/server_settings'))
    const limited = await anon(app, fx).get('/server_settings')
    const body = expectError(t, limited, { code: 'RATE_LIMIT_HIT', status: 429, msg: 'API usage exceeded rate limit' })
    t.ok(body['retry-after'] > 0 && body['retry-after'] <= 60, 'retry-after in seconds')
    t.equal(Number(limited.headers['retry-after']), body['retry-after'])
    t.equal(bodyOf(limited).result, 'error')
  })
})

t.test('no limit and no headers with RATE_LIMITING=off', async (t) => {
  const { app, fx } = await buildTestApp(t)
  const res = await anon(app, fx).get('/server_settings')
  expectSuccess(t, res)
  t.notOk('x-ratelimit-limit' in res.headers)
})
