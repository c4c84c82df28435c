// Redis that asks for credentials and speaks only TLS, started by the test:
// a 3-master Redis Cluster and a master, replica and three Sentinels, each
// with requirepass and a TLS port only (certificates from a CA made here).
// REDIS_PASSWORD, REDIS_SENTINEL_PASSWORD, REDIS_TLS and REDIS_TLS_CA_FILE
// open them; the bus contract runs through each, an item published on one
// node reaches another, and wrong credentials stop startup at once with the
// variable named.
import t, { type Test } from 'tap'
import { openBackends, RedisStartupError } from '../../src/backends/index.js'
import { loadConfig } from '../../src/config.js'
import { busContract, redisBuses } from '../events/bus.contract.js'
import { twoNodes } from './two-nodes.js'
import { makeTlsMaterial, startRedisCluster, startRedisSentinel, type RedisSecurity } from '../support/redis-topology.js'

t.setTimeout(300_000)

const tls = makeTlsMaterial(t)
const security: RedisSecurity = { password: 'data-secret', sentinelPassword: 'sentinel-secret', tls }

/** Two nodes opened with `env`: an item published on one reaches the other; the rate limiter answers. */
async function itemCrossesNodes(t: Test, env: Record<string, string>): Promise<void> {
  const { a, reach } = await twoNodes(t, loadConfig(env))
  await reach(7)
  t.ok((await a.limiter.hit('user:1', [{ windowSeconds: 60, maxCalls: 10 }], Date.now())).allowed, 'the rate limiter works through it')
}

async function startupError(env: Record<string, string>): Promise<unknown> {
  try {
    const backends = await openBackends(loadConfig(env))
    await backends.close()
    return undefined
  } catch (error) {
    return error
  }
}

async function refused(t: Test, env: Record<string, string>, message: RegExp): Promise<void> {
  const started = Date.now()
  const error = await startupError(env)
  t.ok(error instanceof RedisStartupError, `a RedisStartupError (${String(error)})`)
  t.match((error as Error | undefined)?.message, message)
  t.ok(Date.now() - started < 15_000, 'within seconds, not a hang')
}

t.test('a Redis Cluster with a password and TLS only', async (t) => {
  const cluster = await startRedisCluster(t, { masters: 3, replicas: 0, security })
  const env = { REDIS_CLUSTER_NODES: cluster.env, REDIS_PASSWORD: 'data-secret', REDIS_TLS: 'on', REDIS_TLS_CA_FILE: tls.caFile }

  busContract(t, 'secured cluster', redisBuses(cluster.target))

  t.test('REDIS_PASSWORD, REDIS_TLS and REDIS_TLS_CA_FILE open it: items cross nodes', (t) => itemCrossesNodes(t, env))

  t.test('a wrong REDIS_PASSWORD stops startup, naming it', (t) =>
    refused(t, { ...env, REDIS_PASSWORD: 'wrong' }, /^REDIS_PASSWORD: 127\.0\.0\.1:\d+ refuses the credentials: WRONGPASS/))

  t.test('no REDIS_PASSWORD stops startup, naming it', async (t) => {
    const { REDIS_PASSWORD: _unset, ...withoutPassword } = env
    await refused(t, withoutPassword, /^REDIS_PASSWORD: 127\.0\.0\.1:\d+ refuses the credentials: NOAUTH/)
  })

  t.test('without REDIS_TLS nothing answers on the TLS port', (t) =>
    refused(t, { REDIS_CLUSTER_NODES: cluster.env, REDIS_PASSWORD: 'data-secret' }, /^REDIS_CLUSTER_NODES: no node of the Redis Cluster answers/))
})

t.test('Sentinels and a master with passwords and TLS only', async (t) => {
  const sentinel = await startRedisSentinel(t, { security })
  const env = {
    REDIS_SENTINELS: sentinel.env,
    REDIS_SENTINEL_MASTER: sentinel.masterName,
    REDIS_PASSWORD: 'data-secret',
    REDIS_SENTINEL_PASSWORD: 'sentinel-secret',
    REDIS_TLS: 'on',
    REDIS_TLS_CA_FILE: tls.caFile,
  }

  busContract(t, 'secured Sentinel', redisBuses(sentinel.target))

  t.test('the four variables open it: items cross nodes', (t) => itemCrossesNodes(t, env))

  t.test('a wrong REDIS_SENTINEL_PASSWORD stops startup, naming it', (t) =>
    refused(t, { ...env, REDIS_SENTINEL_PASSWORD: 'wrong' }, /^REDIS_SENTINEL_PASSWORD: 127\.0\.0\.1:\d+ refuses the credentials: WRONGPASS/))

  t.test("a wrong REDIS_PASSWORD (the master's) stops startup, naming it", (t) =>
    refused(t, { ...env, REDIS_PASSWORD: 'wrong' }, /^REDIS_PASSWORD: cannot connect to master 'roost-master' .*: the server refuses the credentials: WRONGPASS/))
})
