import t from 'tap'
import { randomUUID } from 'node:crypto'
import { MemoryRateLimiter, decide, type RateLimiter } from '../../src/ratelimit/limiter.js'
import { RedisRateLimiter } from '../../src/ratelimit/redis-limiter.js'
import { TEST_REDIS_URL } from '../support/config.js'

const rules = [{ windowSeconds: 10, maxCalls: 3 }]

function contract(name: string, make: () => Promise<RateLimiter>) {
  t.test(name, async (t) => {
    const limiter = await make()
    t.teardown(() => limiter.close())
    const key = randomUUID()
    const now = 1_000_000
    const results = []
    for (let i = 0; i < 4; i++) results.push(await limiter.hit(key, rules, now + i))
    t.same(results.map((r) => r.allowed), [true, true, true, false])
    t.same(results.map((r) => r.remaining), [2, 1, 0, 0])
    t.equal(results[3]?.retryAfter, 9.997, 'free once the oldest call leaves the window')
    t.equal((await limiter.hit(key, rules, now + 10_000)).allowed, true, 'the window slides')
    t.equal((await limiter.hit(randomUUID(), rules, now)).allowed, true, 'keys are independent')
  })
}

contract('in-process limiter', async () => new MemoryRateLimiter())
contract('Redis limiter', () => RedisRateLimiter.connect(TEST_REDIS_URL, `test:${randomUUID()}`))

t.test('decide() takes the tightest of several rules', async (t) => {
  const d = decide([{ windowSeconds: 60, maxCalls: 200 }, { windowSeconds: 1, maxCalls: 2 }], [[1, 2], [999, 1000]], 1001)
  t.equal(d.allowed, false)
  t.equal(d.limit, 2)
})
