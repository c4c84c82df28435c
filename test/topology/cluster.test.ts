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
import { RedisConnection } from '../../src/backends/redis-connection.js'
import { RedisEventBus } from '../../src/events/redis-bus.js'
import { RedisSignals } from '../../src/events/queues/redis-signals.js'
import type { BusItem } from '../../src/events/bus.js'
import { openBackends } from '../../src/backends/index.js'
import { loadConfig } from '../../src/config.js'

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
  const config = loadConfig({ REDIS_CLUSTER_NODES: cluster.env, RATE_LIMITING: 'on' })
  const prefix = `test:${randomUUID()}`
  const a = await openBackends(config, { redisPrefix: prefix })
  const b = await openBackends(config, { redisPrefix: prefix })
  t.teardown(async () => {
    await a.close()
    await b.close()
  })
  const received: BusItem[] = []
  b.bus.subscribe((i) => received.push(i))
  await b.bus.check()
  // The subscription is made in the background: publish until the first item arrives.
  const deadline = Date.now() + 10_000
  while (received.length === 0) {
    if (Date.now() > deadline) throw new Error('no item through the cluster')
    await a.bus.publish({ realmId: 1, userIds: [], event: { type: 'alert_words', alert_words: [] }, origin: 'a' })
    await new Promise((r) => setTimeout(r, 50))
  }
  t.match(received[0], { realmId: 1, origin: 'a' })
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
  // The queue store's wake-up listener on the same cluster: whichever node holds its subscription, a node leaving makes it resubscribe and resync.
  const signals = new RedisSignals(connections[1].client, 'test-signals', () => undefined, false)
  t.teardown(() => signals.close())
  let resyncs = 0
  await signals.listen('node-b', `${prefix}:wake:node-b`, (signal) => {
    if (signal.kind === 'resync') resyncs++
  })
  const channel = `${prefix}:items`
  const slot = Number(await redisCall(cluster.nodes[0]!.port, 'CLUSTER', 'KEYSLOT', channel))
  const ownerPort = await cluster.masterOf(slot)
  const owner = cluster.servers.find((s) => s.port === ownerPort)!
  await buses[0]!.publish({ realmId: 1, userIds: [1], event: { type: 'alert_words', alert_words: [] }, origin: 'a' })
  await owner.kill()
  // Publishes during the failover fail or wait; once the replica serves the slot, they reach the subscriber again.
  const deadline = Date.now() + 60_000
  let n = 2
  let slowest = 0
  while (!received.some((id) => id >= 2)) {
    if (Date.now() > deadline) throw new Error(`no item delivered after the failover; received ${received.join(',')}`)
    // Each publish settles (delivered, or an error a request would answer 503 with) within seconds: nothing hangs.
    const started = Date.now()
    let timer: NodeJS.Timeout | undefined
    await Promise.race([
      buses[0]!.publish({ realmId: n++, userIds: [1], event: { type: 'alert_words', alert_words: [] }, origin: 'a' }).catch(() => undefined),
      new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error('a publish hung during the failover')), 15_000))),
    ]).finally(() => clearTimeout(timer))
    slowest = Math.max(slowest, Date.now() - started)
    await new Promise((r) => setTimeout(r, 200))
  }
  const newOwner = await cluster.masterOf(slot)
  t.not(newOwner, ownerPort, 'the replica serves the slot now')
  t.ok(received.includes(1), 'the item before the failover was delivered')
  const resyncDeadline = Date.now() + 30_000
  while (resyncs === 0 && Date.now() < resyncDeadline) await new Promise((r) => setTimeout(r, 100))
  t.ok(resyncs > 0, 'the wake-up listener resynced its polls after the node left (wake-ups in between may be lost)')
  await connections[0].check()
  t.ok(connections[0].client instanceof Cluster)
  t.pass(`delivery resumed (${received.length} items; slowest publish during the failover ${slowest} ms)`)
})
