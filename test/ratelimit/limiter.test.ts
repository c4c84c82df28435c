import t from 'tap'
import { MemoryRateLimiter, decide } from '../../src/ratelimit/limiter.js'
import { TEST_REDIS_URL } from '../support/config.js'
import { rateLimiterContract, redisLimiter } from './limiter.contract.js'

rateLimiterContract(t, 'in-process limiter', async () => new MemoryRateLimiter())
rateLimiterContract(t, 'Redis limiter', redisLimiter({ kind: 'single', url: TEST_REDIS_URL }))

t.test('decide() takes the tightest of several rules', async (t) => {
  const d = decide([{ windowSeconds: 60, maxCalls: 200 }, { windowSeconds: 1, maxCalls: 2 }], [[1, 2], [999, 1000]], 1001)
  t.equal(d.allowed, false)
  t.equal(d.limit, 2)
})
