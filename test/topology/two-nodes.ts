// Two nodes for the topology tests, on one fresh key prefix: their backends
// as the server opens them (twoNodes: node B records the realm IDs of the bus
// items it receives; `reach()` publishes on node A until B has one), or two
// whole apps on a Redis Cluster with a member's queue (twoAppsOnCluster).
import type { Test } from 'tap'
import { randomUUID } from 'node:crypto'
import { openBackends, type Backends } from '../../src/backends/index.js'
import { loadConfig, type Config } from '../../src/config.js'
import { alertWordsEvent } from '../../src/events/schemas/index.js'
import { buildTestApp } from '../support/app.js'
import { as } from '../support/client.js'
import { expectSuccess } from '../support/expect.js'
import { eventually } from '../support/eventually.js'

export interface TwoNodes {
  a: Backends
  b: Backends
  /** Realm IDs of the items node B received, in order. */
  received: number[]
  /** Publishes items of realm `realmId` on node A every 50 ms until B received one (B subscribes in the background), or throws after 10 s. */
  reach(realmId: number): Promise<void>
}

export async function twoNodes(t: Test, config: Config): Promise<TwoNodes> {
  const prefix = `test:${randomUUID()}`
  const a = await openBackends(config, { redisPrefix: prefix })
  const b = await openBackends(config, { redisPrefix: prefix })
  t.teardown(async () => {
    await a.close()
    await b.close()
  })
  const received: number[] = []
  b.bus.subscribe((item) => received.push(item.realmId))
  return {
    a,
    b,
    received,
    async reach(realmId) {
      const publish = () => a.bus.publish({ realmId, userIds: [], event: { type: 'alert_words', alert_words: [] }, origin: 'a' })
      await eventually(`an item of realm ${realmId} at node B`, async () => received.includes(realmId) || (await publish(), false), { intervalMs: 50, rethrow: true })
    },
  }
}

/**
 * Two apps (nodes) reaching the cluster through REDIS_CLUSTER_NODES (`clusterEnv`)
 * with one key prefix; a member with an alert_words queue registered on A;
 * B's wake-up channel; `publish(n)` publishes alert word `w<n>` for the member
 * through A (n counts up from 1 when not given).
 */
export async function twoAppsOnCluster(t: Test, clusterEnv: string) {
  const redisPrefix = `test:${randomUUID()}`
  const { redisUrl, redisClusterNodes, redisSentinel } = loadConfig({ REDIS_CLUSTER_NODES: clusterEnv })
  const config = { redisUrl, redisClusterNodes, redisSentinel }
  const a = await buildTestApp(t, { bus: 'redis', redisPrefix, config })
  const b = await buildTestApp(t, { bus: 'redis', redisPrefix, config, fixture: a.fx })
  const member = await a.fx.user('member')
  const { queue_id } = expectSuccess(t, await as(a.app, member).post('/register', { event_types: ['alert_words'] })) as { queue_id: string }
  const channel = `${redisPrefix}:node:${b.services.nodeId}`
  let count = 0
  const publish = (n = ++count) => a.services.bus.publish({ realmId: a.fx.realm.id, userIds: [member.id], event: alertWordsEvent([`w${n}`]), origin: a.services.nodeId })
  return { a, b, member, queueId: queue_id, channel, publish, redisPrefix }
}
