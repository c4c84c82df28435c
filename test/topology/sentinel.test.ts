// A master, its replica and three Sentinels, started by the test: the
// EventBus, presence store and rate limiter contracts through Sentinel, then
// a failover: the master is killed, the Sentinels promote the replica, and
// the bus, presence and limiter of a running node work again without a
// restart; no call hangs meanwhile.
import t from 'tap'
import { startRedisSentinel } from '../support/redis-topology.js'
import { busContract, redisBuses } from '../events/bus.contract.js'
import { presenceStoreContract, redisPresence } from '../presence/presence-store.contract.js'
import { rateLimiterContract, redisLimiter } from '../ratelimit/limiter.contract.js'
import { loadConfig } from '../../src/config.js'
import { twoNodes } from './two-nodes.js'
import { eventually } from '../support/eventually.js'

t.setTimeout(300_000)

const sentinel = await startRedisSentinel(t)

busContract(t, 'Sentinel', redisBuses(sentinel.target))
presenceStoreContract(t, 'Sentinel', () => redisPresence(sentinel.target))
rateLimiterContract(t, 'Sentinel limiter', redisLimiter(sentinel.target))

/** Settles within `ms` (its outcome, or its error) or fails the test: nothing may hang. */
async function settles<T>(what: string, ms: number, p: Promise<T>): Promise<T | Error> {
  let timer: NodeJS.Timeout | undefined
  try {
    return await Promise.race([
      p.catch((error: unknown) => (error instanceof Error ? error : new Error(String(error)))),
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`${what} hung for ${ms} ms`)), ms)
      }),
    ])
  } finally {
    clearTimeout(timer)
  }
}

t.test('failover: the master dies, Sentinel promotes the replica, the node carries on without a restart', async (t) => {
  // A node's backends as the server builds them (REDIS_SENTINELS + REDIS_SENTINEL_MASTER), and a second node's bus.
  const config = loadConfig({ REDIS_SENTINELS: sentinel.env, REDIS_SENTINEL_MASTER: sentinel.masterName, RATE_LIMITING: 'on' })
  const { a, b, received, reach } = await twoNodes(t, config)
  // An item through the whole path (queue fan-out with no queues, then pub/sub) before the failover.
  await reach(1)
  t.ok((await a.limiter.hit('user:1', [{ windowSeconds: 60, maxCalls: 100 }], Date.now())).allowed)
  await a.presence.report(1, 1, 'active', 1_700_000_000)

  const oldMaster = sentinel.master.port
  await sentinel.master.kill()

  // Every call during and after the failover settles (an error, a 503 for a request) within seconds, never hangs.
  let n = 1_000
  const recovered = async () => {
    const published = await settles('publish', 15_000, a.bus.publish({ realmId: n++, userIds: [], event: { type: 'alert_words', alert_words: [] }, origin: 'a' }))
    const limited = await settles('limiter', 15_000, a.limiter.hit('user:1', [{ windowSeconds: 60, maxCalls: 100 }], Date.now()))
    return !(published instanceof Error) && !(limited instanceof Error) && received.some((id) => id >= 1_000)
  }
  await eventually('the node recovered', recovered, { timeoutMs: 60_000, intervalMs: 200, rethrow: true, detail: () => `received ${received.slice(-5).join(',')}` })
  t.not(await sentinel.currentMasterPort(), oldMaster, 'the Sentinels promoted the replica')
  t.equal(await sentinel.currentMasterPort(), sentinel.replica.port)
  t.pass('items flow again from node A to node B')
  const limited = await a.limiter.hit('user:1', [{ windowSeconds: 60, maxCalls: 100 }], Date.now())
  t.ok(limited.allowed, 'the limiter answers on the new master')
  const report = await a.presence.report(1, 2, 'active', 1_700_000_000)
  t.equal(report.written, true, 'presence writes on the new master')
  // Readiness comes back too. ioredis may reconnect once more when the
  // Sentinels announce the switch, so a check may meet a connection that is
  // 'connecting' for a moment: it must pass within seconds, not at once.
  for (const node of [a, b]) await eventually('the bus ready', () => node.bus.check().then(() => true), { timeoutMs: 30_000, intervalMs: 200 })
})
