// The event system on a Redis Cluster while the master serving a queue's slot
// is killed: two nodes (apps) reach the cluster through REDIS_CLUSTER_NODES;
// events published through node A and acknowledged by Redis (replicated before
// the kill) are delivered exactly once and in order after the replica's
// promotion, polling through either node, and no request hangs meanwhile
// (answers during the failover are events or retryable 503s). A queue whose
// writes never reached the replica is gone after the failover:
// BAD_EVENT_QUEUE_ID, and the client registers again.
import t from 'tap'
import { randomUUID } from 'node:crypto'
import { buildTestApp } from '../support/app.js'
import { as } from '../support/client.js'
import { expectSuccess } from '../support/expect.js'
import { redisCall, replicaCaughtUp, startRedisCluster } from '../support/redis-topology.js'
import { loadConfig } from '../../src/config.js'
import { hashSlot } from '../../src/events/queues/slots.js'
import { twoAppsOnCluster } from './two-nodes.js'
import { eventually } from '../support/eventually.js'

t.setTimeout(300_000)

const cluster = await startRedisCluster(t)

/** Resolves once the replica of the master on `masterPort` has everything that master wrote so far. */
async function replicated(masterPort: number): Promise<void> {
  await replicaCaughtUp(masterPort, await replicaOf(masterPort))
}

async function replicaOf(masterPort: number): Promise<number> {
  for (const server of cluster.servers.filter((s) => s.running())) {
    const role = (await redisCall(server.port, 'ROLE')) as unknown[]
    if (role[0] === 'slave' && Number(role[2]) === masterPort) return server.port
  }
  throw new Error(`no replica of ${masterPort}`)
}

t.test("a master killed while a queue's events flow: every event Redis acknowledged once, in order; nothing hangs", async (t) => {
  const { a, b, member, queueId: queue_id, publish, redisPrefix } = await twoAppsOnCluster(t, cluster.env)
  const slot = hashSlot(`${redisPrefix}:q:{${queue_id}}`)
  const ownerPort = await cluster.masterOf(slot)
  const owner = cluster.servers.find((s) => s.port === ownerPort)!

  const seen: string[] = []
  let lastEventId = -1
  const take = (events: { id: number; alert_words: string[] }[]) => {
    for (const e of events) {
      seen.push(e.alert_words[0]!)
      lastEventId = e.id
    }
  }
  await publish(1)
  await publish(2)
  take(expectSuccess(t, await as(b.app, member).get('/events', { queue_id, last_event_id: lastEventId })).events as never)
  await publish(3)
  await replicated(ownerPort)

  await owner.kill()

  const settled = async <T>(p: Promise<T>, what: string): Promise<T> => {
    let timer: NodeJS.Timeout | undefined
    try {
      return await Promise.race([p, new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`${what} hung`)), 20_000)))])
    } finally {
      clearTimeout(timer)
    }
  }
  // Publish through node A and poll through B and A in turn, as a client would, retrying on 503s.
  // Each attempt publishes a new word: one that failed may or may not be in the queue, one that succeeded must be.
  const statuses = new Set<number>()
  const confirmed = ['w1', 'w2', 'w3']
  let n = 4
  let round = 0
  const publishAndPoll = async () => {
    const word = n++
    if (await settled(publish(word).then(() => true, () => false), 'publish')) confirmed.push(`w${word}`)
    const node = round++ % 2 === 0 ? b : a
    const res = await settled(as(node.app, member).get('/events', { queue_id, last_event_id: lastEventId, dont_block: true }), 'a poll')
    statuses.add(res.statusCode)
    if (res.statusCode === 200) take(res.json().events)
    else t.equal(res.json().code, 'SERVER_NOT_READY', `a ${res.statusCode} during the failover is a retryable SERVER_NOT_READY`)
    return confirmed.length > 3 && seen.includes(confirmed[confirmed.length - 1]!)
  }
  await eventually('recovery', publishAndPoll, { timeoutMs: 90_000, intervalMs: 200, rethrow: true, detail: () => `statuses ${[...statuses].join(',')}, seen ${seen.join(',')}` })
  t.not(await cluster.masterOf(slot), ownerPort, "the replica serves the queue's slot now")
  const order = seen.map((w) => Number(w.slice(1)))
  t.same(order, [...order].sort((x, y) => x - y), 'in order')
  t.equal(new Set(seen).size, seen.length, 'none twice')
  t.same(confirmed.filter((w) => !seen.includes(w)), [], 'every event whose publish succeeded was delivered')
})

t.test('a queue whose writes the replica never got is gone after the failover: BAD_EVENT_QUEUE_ID, and the client registers again', async (t) => {
  const redisPrefix = `test:${randomUUID()}`
  const { redisUrl, redisClusterNodes, redisSentinel } = loadConfig({ REDIS_CLUSTER_NODES: cluster.env })
  const a = await buildTestApp(t, { bus: 'redis', redisPrefix, config: { redisUrl, redisClusterNodes, redisSentinel } })
  const member = await a.fx.user('member')
  // The slot computed here (Redis's CRC16, test/events/slots.test.ts): the node a CLUSTER KEYSLOT would ask may be the one killed.
  const masterOfQueue = async (queueId: string) => cluster.masterOf(hashSlot(`${redisPrefix}:q:{${queueId}}`))
  /** Registers queues until one lands on a master that `accept`s, deleting the others. */
  const registerOn = async (accept: (port: number) => Promise<boolean>): Promise<{ queueId: string; port: number }> => {
    for (let i = 0; i < 30; i++) {
      const queueId = expectSuccess(t, await as(a.app, member).post('/register', { event_types: ['alert_words'] })).queue_id as string
      const port = await masterOfQueue(queueId)
      if (await accept(port)) return { queueId, port }
      expectSuccess(t, await as(a.app, member).delete('/events', { queue_id: queueId }))
    }
    throw new Error('no queue landed on the wanted master')
  }
  // A queue on a master that still has a replica (the previous test's master has none now).
  const kept = await registerOn(async (port) => (await replicaOf(port).catch(() => 0)) !== 0)
  const replicaPort = await replicaOf(kept.port)
  await replicated(kept.port)
  // Cut the replica off (it now logs in as a user its master does not know), then register a queue on the same master.
  await redisCall(replicaPort, 'CONFIG', 'SET', 'masteruser', 'roost-test-nobody')
  await redisCall(replicaPort, 'CONFIG', 'SET', 'masterauth', 'wrong')
  await redisCall(replicaPort, 'CLIENT', 'KILL', 'TYPE', 'master')
  const lost = await registerOn(async (port) => port === kept.port)
  // (KEYS: the replica's own keys, on a test's private server; a key command would be redirected to the master.)
  t.notSame(await redisCall(replicaPort, 'KEYS', `*${kept.queueId}*`), [], 'the replica has the queue registered before the cut')
  t.same(await redisCall(replicaPort, 'KEYS', `*${lost.queueId}*`), [], 'and not the one registered after it')
  await cluster.servers.find((s) => s.port === kept.port)!.kill()
  const res = await eventually('an answer but 503 after the failover', () => as(a.app, member).get('/events', { queue_id: lost.queueId, last_event_id: -1, dont_block: true }), {
    timeoutMs: 60_000,
    intervalMs: 200,
    until: (r) => r.statusCode !== 503,
  })
  t.equal(res.statusCode, 400)
  t.match(res.json(), { code: 'BAD_EVENT_QUEUE_ID', queue_id: lost.queueId }, 'the queue the replica never got is gone')
  t.equal(await masterOfQueue(lost.queueId), replicaPort, 'the replica was promoted')
  t.same(expectSuccess(t, await as(a.app, member).get('/events', { queue_id: kept.queueId, last_event_id: -1, dont_block: true })).events, [], 'the replicated queue works on it')
  const again = expectSuccess(t, await as(a.app, member).post('/register', { event_types: ['alert_words'] })).queue_id as string
  t.same(expectSuccess(t, await as(a.app, member).get('/events', { queue_id: again, last_event_id: -1, dont_block: true })).events, [], 'a new queue works')
})
