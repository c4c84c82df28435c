// The rate limiter's behaviour, run against each implementation: in process,
// Redis (limiter.test.ts) and a Redis Cluster (test/redis-topology).
import type { Test } from 'tap'
import { randomUUID } from 'node:crypto'
import type { RateLimiter } from '../../src/ratelimit/limiter.js'
import { RedisRateLimiter } from '../../src/ratelimit/redis-limiter.js'
import { RedisConnection, type RedisTarget } from '../../src/redis-connection.js'

const rules = [{ windowSeconds: 10, maxCalls: 3 }]

/** The limiter over a connection of its own to `target` (a single server here; test/redis-topology runs it on a cluster). */
export function redisLimiter(target: RedisTarget) {
  return async (): Promise<RateLimiter> => {
    const connection = await RedisConnection.open(target)
    const limiter = new RedisRateLimiter(connection.client, `test:${randomUUID()}`)
    return { hit: (k, r, n) => limiter.hit(k, r, n), peek: (k, r, n) => limiter.peek(k, r, n), close: () => connection.close() }
  }
}

export function rateLimiterContract(t: Test, name: string, make: () => Promise<RateLimiter>): void {
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
  t.test(`${name}: several rules of one key are checked and counted together`, async (t) => {
    const limiter = await make()
    t.teardown(() => limiter.close())
    const key = `user:${randomUUID()}`
    const both = [{ windowSeconds: 60, maxCalls: 5 }, { windowSeconds: 1, maxCalls: 2 }]
    const now = 2_000_000
    const hits = []
    for (let i = 0; i < 3; i++) hits.push(await limiter.hit(key, both, now + i))
    t.same(hits.map((h) => h.allowed), [true, true, false], 'the tighter rule decides')
    t.equal((await limiter.peek(key, both, now + 1_500)).allowed, true, 'a second later the tight window is free again')
    t.equal((await limiter.peek(key, both, now + 1_500)).remaining, 1, 'peek records nothing')
  })
}

