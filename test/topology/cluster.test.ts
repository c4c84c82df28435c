// A Redis Cluster of three masters, each with a replica, started by the test:
// the EventBus contract, the presence store's and the rate limiter's contract
// suites run on it; the bus's items travel by sharded pub/sub; a master killed
// while items flow is replaced by its replica and the bus carries on.
import t from 'tap'
import { randomUUID } from 'node:crypto'
import { Cluster } from 'ioredis'
import { startRedisCluster, redisCall } from '../support/redis-topology.js'
import { busContract, redisBuses } from '../events/bus.contract.js'
import { presenceStoreContract, redisPresence } from '../presence/presence-store.contract.js'
import { rateLimiterContract, redisLimiter } from '../ratelimit/limiter.contract.js'
import { RedisConnection } from '../../src/redis-connection.js'
import { RedisEventBus } from '../../src/events/redis-bus.js'
import { RedisSignals } from '../../src/events/queues/redis-signals.js'
import type { BusItem } from '../../src/events/bus.js'
import { loadConfig } from '../../src/config.js'
import { twoNodes } from './two-nodes.js'
import { eventually } from '../support/eventually.js'

t.setTimeout(300_000)

const cluster = await startRedisCluster(t)

busContract(t, 'Redis Cluster', redisBuses(cluster.target))
presenceStoreContract(t, 'Redis Cluster', () => redisPresence(cluster.target))
rateLimiterContract(t, 'Redis Cluster limiter', redisLimiter(cluster.target))

t.test('the items channel is a shard channel: SSUBSCRIBEd on the master owning its slot, never a plain channel', async (t) => {
  const prefix = `test:${randomUUID()}`
  const connection = await RedisConnection.open(cluster.target)
  const bus = new RedisEventBus(connection, prefix, (error) => t.fail(String(error)))
  t.teardown(async () => {
    await bus.close()
    await connection.close()
  })
  bus.subscribe(() => undefined)
  await bus.ready()
  const channel = `${prefix}:items`
  const slot = Number(await redisCall(cluster.nodes[0]!.port, 'CLUSTER', 'KEYSLOT', channel))
  const owner = await cluster.masterOf(slot)
  t.same(await redisCall(owner, 'PUBSUB', 'SHARDNUMSUB', channel), [channel, 1], 'one sharded subscriber on the owner')
  for (const node of cluster.nodes) t.same(await redisCall(node.port, 'PUBSUB', 'NUMSUB', channel), [channel, 0], `no plain subscriber on ${node.port}`)
})

t.test('openBackends with REDIS_CLUSTER_NODES: bus, presence and limiter of two nodes work together on the cluster', async (t) => {
  const { a, b, received, reach } = await twoNodes(t, loadConfig({ REDIS_CLUSTER_NODES: cluster.env, RATE_LIMITING: 'on' }))
  await b.bus.check()
  await reach(1)
  t.equal(received[0], 1)
  await a.presence.report(5, 1, 'active', 1_700_000_000)
  t.match(await b.presence.get(5, 1), { userId: 1, activeTime: 1_700_000_000 })
  const rule = [{ windowSeconds: 60, maxCalls: 1 }]
  t.equal((await a.limiter.hit('user:1', rule, Date.now())).allowed, true)
  t.equal((await b.limiter.hit('user:1', rule, Date.now())).allowed, false, 'the limit is counted cluster-wide')
  t.equal(a.errorCount() + b.errorCount(), 0, 'no background errors')
})

t.test('keys of one presence realm and of one limiter key share a slot', async (t) => {
  const port = cluster.nodes[0]!.port
  const slot = async (key: string) => Number(await redisCall(port, 'CLUSTER', 'KEYSLOT', key))
  t.equal(await slot('roost:presence:{42}'), await slot('roost:presence:{42}:seq'))
  t.equal(await slot('roost:rl:{user:9}:60:200'), await slot('roost:rl:{user:9}:1:10'))
})

t.test('a master killed while items flow: its replica is promoted and the bus carries on without a restart', async (t) => {
  const prefix = `test:${randomUUID()}`
  const connections = [await RedisConnection.open(cluster.target), await RedisConnection.open(cluster.target)] as const
  const buses = connections.map((c) => new RedisEventBus(c, prefix, () => undefined))
  t.teardown(async () => {
    await Promise.all(buses.map((b) => b.close()))
    await Promise.all(connections.map((c) => c.close()))
  })
  const received: number[] = []
  buses[1]!.subscribe((i: BusItem) => received.push(i.realmId))
  await buses[1]!.ready()

  const channel = `${prefix}:items`
  const slot = Number(await redisCall(cluster.nodes[0]!.port, 'CLUSTER', 'KEYSLOT', channel))
  const ownerPort = await cluster.masterOf(slot)
  const owner = cluster.servers.find((s) => s.port === ownerPort)!
  await buses[0]!.publish({ realmId: 1, userIds: [1], event: { type: 'alert_words', alert_words: [] }, origin: 'a' })
  await owner.kill()
  // Publishes during the failover fail or wait; once the replica serves the slot, they reach the subscriber again.
  let n = 2
  let slowest = 0
  const publishSettles = async () => {
    // Each publish settles (delivered, or an error a request would answer 503 with) within seconds: nothing hangs.
    const started = Date.now()
    let timer: NodeJS.Timeout | undefined
    await Promise.race([
      buses[0]!.publish({ realmId: n++, userIds: [1], event: { type: 'alert_words', alert_words: [] }, origin: 'a' }).catch(() => undefined),
      new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error('a publish hung during the failover')), 15_000))),
    ]).finally(() => clearTimeout(timer))
    slowest = Math.max(slowest, Date.now() - started)
    return received.some((id) => id >= 2)
  }
  await eventually('an item delivered after the failover', publishSettles, { timeoutMs: 60_000, intervalMs: 200, rethrow: true, detail: () => `received ${received.join(',')}` })
  const newOwner = await cluster.masterOf(slot)
  t.not(newOwner, ownerPort, 'the replica serves the slot now')
  t.ok(received.includes(1), 'the item before the failover was delivered')
  await connections[0].check()
  t.ok(connections[0].client instanceof Cluster)
  t.pass(`delivery resumed (${received.length} items; slowest publish during the failover ${slowest} ms)`)
})

t.test("the node holding the queue wake-ups' subscription dies: the listener subscribes elsewhere and resyncs its polls", async (t) => {
  // A cluster of its own: the node killed here may be any master or replica.
  const own = await startRedisCluster(t)
  const connection = await RedisConnection.open(own.target)
  const signals = new RedisSignals(connection.client, { connectionName: 'test-signals', onError: () => undefined, rememberStates: false })
  t.teardown(async () => {
    signals.close()
    await connection.close()
  })
  const channel = `test:${randomUUID()}:wake:node-b`
  const signalled: string[] = []
  await signals.listen('node-b', channel, (signal) => signalled.push(signal.kind === 'resync' ? 'resync' : `${signal.kind} ${signal.queueId}`))
  // Plain pub/sub on a cluster: PUBSUB NUMSUB counts the subscribers of the node asked, so one node answers 1.
  const holders = []
  for (const server of own.servers) {
    if (((await redisCall(server.port, 'PUBSUB', 'NUMSUB', channel)) as [string, number])[1] === 1) holders.push(server)
  }
  t.equal(holders.length, 1, 'one node holds the subscription')
  await holders[0]!.kill()
  await eventually('told to resync', () => signalled.includes('resync'), { timeoutMs: 30_000, intervalMs: 100 })
  t.ok(signalled.includes('resync'), 'held polls are told to read their queues again (wake-ups may have been lost)')
  // Wake-ups published from now on arrive through the new subscription.
  const survivor = own.servers.find((s) => s.running())!
  const wakeUp = async () => signalled.includes('wake q1') || (await redisCall(survivor.port, 'PUBLISH', channel, 'w q1').catch(() => undefined), false)
  await eventually('a wake-up after the move', wakeUp, { timeoutMs: 30_000, intervalMs: 100 })
  t.ok(signalled.includes('wake q1'), 'a wake-up after the move is delivered')
})
