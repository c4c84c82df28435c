// Queue wake-ups on a Redis Cluster (Redis 7) travel by sharded pub/sub: each
// node's wake-up channel is a shard channel, SSUBSCRIBEd on the master owning
// its slot and never a plain channel on any node, and a held poll on node B
// wakes for an event published through node A. When the master owning B's
// channel is killed, B subscribes on the promoted replica and its held poll
// still gets the event published after the kill (no hung poll), and the next
// wake-ups arrive through the new subscription; the listener itself tells its
// held polls to read their queues once it has subscribed again. A cluster
// without SPUBLISH falls back to plain PUBLISH.
import t from 'tap'
import { randomUUID } from 'node:crypto'
import type { TestApp } from '../support/app.js'
import { as } from '../support/client.js'
import { expectSuccess } from '../support/expect.js'
import { redisCall, replicaCaughtUp, startRedisCluster, type RedisClusterTopology } from '../support/redis-topology.js'
import { hashSlot } from '../../src/events/queues/slots.js'
import { RedisConnection } from '../../src/redis-connection.js'
import { RedisSignals } from '../../src/events/queues/redis-signals.js'
import { twoAppsOnCluster } from './two-nodes.js'
import { eventually } from '../support/eventually.js'

t.setTimeout(300_000)

/** Resolves `p`, or rejects after `ms` naming `what`. */
async function within<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  try {
    return await Promise.race([p, new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`${what} within ${ms} ms`)), ms)))])
  } finally {
    clearTimeout(timer)
  }
}

/** The number of subscribers of a shard channel on the server at `port` (0 when it is down). */
async function shardSubscribers(port: number, channel: string): Promise<number> {
  const reply = (await redisCall(port, 'PUBSUB', 'SHARDNUMSUB', channel)) as [string, number]
  return Number(reply[1])
}

/** Starts a blocking poll on `app` and waits until Redis names it the queue's (new) holder. */
async function heldPoll(app: TestApp, member: Parameters<typeof as>[1], queueId: string, lastEventId: number, holderKey: string, connection: RedisConnection) {
  const previous = await connection.client.get(holderKey)
  const poll = as(app.app, member).get('/events', { queue_id: queueId, last_event_id: lastEventId })
  await eventually('the poll held', async () => {
    const holder = await connection.client.get(holderKey)
    return holder !== null && holder !== previous
  }, { timeoutMs: 10_000, intervalMs: 100 })
  return { poll }
}

/** Plain PUBLISH calls so far, over every live server (a script's PUBLISH counts too). */
async function plainPublishes(cluster: RedisClusterTopology): Promise<number> {
  let calls = 0
  for (const server of cluster.servers.filter((s) => s.running())) {
    calls += Number(/cmdstat_publish:calls=(\d+)/.exec(String(await redisCall(server.port, 'INFO', 'commandstats')))?.[1] ?? 0)
  }
  return calls
}

t.test('the cluster knows SPUBLISH: the connection uses sharded pub/sub', async (t) => {
  const cluster = await startRedisCluster(t)
  const connection = await RedisConnection.open(cluster.target)
  t.teardown(() => connection.close())
  t.equal(connection.sharded, true)

  t.test("a node's wake-ups travel on its shard channel, SSUBSCRIBEd on the master owning it, and wake a poll held on another node", async (t) => {
    const { a: _a, b, member, queueId, channel, publish, redisPrefix } = await twoAppsOnCluster(t, cluster.env)
    const holderKey = `${redisPrefix}:q:{${queueId}}:h`
    const { poll } = await heldPoll(b, member, queueId, -1, holderKey, connection)
    const owner = await cluster.masterOf(hashSlot(channel))
    t.equal(await shardSubscribers(owner, channel), 1, 'one sharded subscriber on the master owning the channel')
    t.ok(((await redisCall(owner, 'PUBSUB', 'SHARDCHANNELS', `${redisPrefix}:node:*`)) as string[]).includes(channel), 'PUBSUB SHARDCHANNELS on the owner lists it')
    for (const server of cluster.servers) {
      t.same(await redisCall(server.port, 'PUBSUB', 'CHANNELS', `${redisPrefix}:*`), [], `no plain channel of the prefix on ${server.port}`)
    }
    const published = await plainPublishes(cluster)
    const started = Date.now()
    await publish()
    const events = expectSuccess(t, await within(poll, 10_000, 'the held poll woke')).events as { alert_words: string[] }[]
    t.match(events, [{ type: 'alert_words', alert_words: ['w1'] }], 'the held poll got the event')
    t.ok(Date.now() - started < 5_000, 'woken by the wake-up, not by a heartbeat')
    t.equal(await plainPublishes(cluster), published, 'no server ran a plain PUBLISH (in a script or not)')
  })

  t.test("the master owning B's channel is killed while B holds a poll: B subscribes on the promoted replica, the held poll gets the next event, and later wake-ups arrive", async (t) => {
    const { b, member, queueId, channel, publish, redisPrefix } = await twoAppsOnCluster(t, cluster.env)
    const holderKey = `${redisPrefix}:q:{${queueId}}:h`
    const slot = hashSlot(channel)
    const ownerPort = await cluster.masterOf(slot)
    const owner = cluster.servers.find((s) => s.port === ownerPort)!
    // B listens (its first poll subscribes its channel); the queue is replicated before the kill.
    const { poll: first } = await heldPoll(b, member, queueId, -1, holderKey, connection)
    await publish()
    const got = expectSuccess(t, await within(first, 10_000, 'the first poll woke')).events as { id: number }[]
    const lastEventId = got[got.length - 1]!.id
    t.equal(await shardSubscribers(ownerPort, channel), 1, "B's channel is SSUBSCRIBEd on its owner")
    const queueMaster = await cluster.masterOf(hashSlot(`${redisPrefix}:q:{${queueId}}`))
    for (const master of new Set([queueMaster, ownerPort])) await replicaCaughtUp(master, await replicaOf(cluster, master))

    const { poll: held } = await heldPoll(b, member, queueId, lastEventId, holderKey, connection)
    await owner.kill()
    await eventually("the replica serving B's channel", async () => (await cluster.masterOf(slot)) !== ownerPort, { timeoutMs: 60_000, intervalMs: 100 })
    const newOwner = await cluster.masterOf(slot)
    // Publishes fail or wait until the queue's slot is served; the held poll must answer with the event.
    let answered = false
    void held.finally(() => (answered = true))
    await eventually('a publish after the kill', () => within(publish().then(() => true), 15_000, 'a publish settled'), { timeoutMs: 60_000, intervalMs: 200 })
    // The held poll answers (no hang): with the event, or with a retryable 503 if it read the queue mid-failover.
    let res = await within(held, 30_000, 'the poll held across the kill answered')
    t.ok(answered)
    if (res.statusCode === 503) {
      t.equal(res.json().code, 'SERVER_NOT_READY', 'a 503 is a retryable SERVER_NOT_READY')
      const poll = async () => {
        const again = await within(as(b.app, member).get('/events', { queue_id: queueId, last_event_id: lastEventId }), 30_000, 'a poll after a 503 answered')
        if (again.statusCode === 503) t.equal(again.json().code, 'SERVER_NOT_READY', 'a 503 is a retryable SERVER_NOT_READY')
        return again
      }
      res = await eventually('a poll answered after a 503', poll, { timeoutMs: 60_000, intervalMs: 200, until: (r) => r.statusCode !== 503, rethrow: true })
    }
    t.equal(res.statusCode, 200)
    const after = res.json().events as { id: number; alert_words: string[] }[]
    t.ok(after.length >= 1 && after.every((e) => e.id > lastEventId), 'the poll got the event published after the kill')
    await eventually('B subscribed on the promoted replica', async () => (await shardSubscribers(newOwner, channel)) === 1, { timeoutMs: 30_000, intervalMs: 100 })
    t.pass(`B's channel is SSUBSCRIBEd on ${newOwner}, the promoted replica`)

    // A later wake-up reaches B through the new subscription, at once.
    const { poll: next } = await heldPoll(b, member, queueId, after[after.length - 1]!.id, holderKey, connection)
    const started = Date.now()
    await publish()
    const woken = expectSuccess(t, await within(next, 10_000, 'the next poll woke')).events as unknown[]
    t.equal(woken.length, 1)
    t.ok(Date.now() - started < 5_000, 'woken by its wake-up')
  })

  t.test("the master owning a listener's shard channel dies: the listener subscribes on the promoted replica and has every held poll read its queue", async (t) => {
    const signals = new RedisSignals(connection.client, { connectionName: 'test-signals', onError: () => undefined, rememberStates: false, sharded: true })
    t.teardown(() => signals.close())
    // A channel on a master that still has a replica (the previous test killed one).
    let channel = ''
    let ownerPort = 0
    for (;;) {
      channel = `test:${randomUUID()}:node:b`
      ownerPort = await cluster.masterOf(hashSlot(channel))
      if (await replicaOf(cluster, ownerPort).then(() => true, () => false)) break
    }
    const signalled: string[] = []
    await signals.listen('node-b', channel, (signal) => signalled.push(signal.kind === 'resync' ? 'resync' : `${signal.kind} ${signal.queueId}`))
    t.equal(await shardSubscribers(ownerPort, channel), 1, 'SSUBSCRIBEd on the owner')
    await eventually('a wake-up delivered', async () => {
      await connection.client.spublish(channel, 'w q0')
      return signalled.includes('wake q0')
    }, { timeoutMs: 10_000, intervalMs: 100 })
    signalled.length = 0
    await cluster.servers.find((s) => s.port === ownerPort)!.kill()
    await eventually('told to resync', async () => signalled.includes('resync'), { timeoutMs: 60_000, intervalMs: 100 })
    t.pass('held polls are told to read their queues again (wake-ups may have been lost)')
    const newOwner = await cluster.masterOf(hashSlot(channel))
    t.not(newOwner, ownerPort, 'the replica owns the channel now')
    // The resync follows the first SSUBSCRIBE that succeeded; ioredis may
    // rebuild its shard subscribers once more as the cluster settles, and the
    // listener subscribes again (and resyncs) after each rebuild.
    await eventually('SSUBSCRIBEd on the promoted replica', async () => (await shardSubscribers(newOwner, channel)) === 1, { timeoutMs: 30_000, intervalMs: 100 })
    t.pass('SSUBSCRIBEd on the promoted replica')
    await eventually('a wake-up after the failover delivered', async () => {
      await connection.client.spublish(channel, 'w q1')
      return signalled.includes('wake q1')
    }, { timeoutMs: 10_000, intervalMs: 100 })
    t.pass('a wake-up after the failover is delivered')
  })
})

async function replicaOf(cluster: RedisClusterTopology, masterPort: number): Promise<number> {
  for (const server of cluster.servers.filter((s) => s.running())) {
    const role = (await redisCall(server.port, 'ROLE')) as unknown[]
    if (role[0] === 'slave' && Number(role[2]) === masterPort) return server.port
  }
  throw new Error(`no replica of ${masterPort}`)
}

t.test('a cluster without SPUBLISH (servers older than Redis 7): wake-ups fall back to plain PUBLISH and still wake a poll held on another node', async (t) => {
  const cluster = await startRedisCluster(t, { replicas: 0, serverArgs: ['--rename-command', 'SPUBLISH', ''] })
  const connection = await RedisConnection.open(cluster.target)
  t.teardown(() => connection.close())
  t.equal(connection.sharded, false, 'startup saw no SPUBLISH')
  const { b, member, queueId, channel, publish, redisPrefix } = await twoAppsOnCluster(t, cluster.env)
  const { poll } = await heldPoll(b, member, queueId, -1, `${redisPrefix}:q:{${queueId}}:h`, connection)
  let plain = 0
  for (const server of cluster.servers) {
    plain += Number(((await redisCall(server.port, 'PUBSUB', 'NUMSUB', channel)) as [string, number])[1])
    t.equal(await shardSubscribers(server.port, channel), 0, `no sharded subscriber on ${server.port}`)
  }
  t.equal(plain, 1, "B's channel is a plain channel, SUBSCRIBEd on one node")
  const started = Date.now()
  await publish()
  t.match(expectSuccess(t, await within(poll, 10_000, 'the held poll woke')).events, [{ type: 'alert_words', alert_words: ['w1'] }])
  t.ok(Date.now() - started < 5_000, 'woken by the wake-up')
})
