// The event system through Sentinel while the master fails over: two nodes
// (apps) reach Redis through three Sentinels; a poll is held on node B and
// events are appended through node A before the master is killed. After the
// replica's promotion the same queue keeps working on either node: the client
// retrying with its last_event_id gets every event exactly once and in order,
// and no request hangs (answers during the failover are 503s or events). A
// queue whose writes never reached the replica is gone after the failover:
// BAD_EVENT_QUEUE_ID, and the client registers again.
import t from 'tap'
import { randomUUID } from 'node:crypto'
import { buildTestApp } from '../support/app.js'
import { as } from '../support/client.js'
import { expectSuccess } from '../support/expect.js'
import { waitForHeld } from '../events/queue-store.contract.js'
import { eventually } from '../support/eventually.js'
import { redisCall, replicaCaughtUp, startRedisSentinel } from '../support/redis-topology.js'
import { alertWordsEvent } from '../../src/events/schemas/index.js'
import { loadConfig } from '../../src/config.js'

t.setTimeout(300_000)

const sentinel = await startRedisSentinel(t)

/** Resolves once the replica has everything the master acknowledged so far (the writes a failover keeps). */
const replicated = () => replicaCaughtUp(sentinel.master.port, sentinel.replica.port)

t.test('a failover keeps replicated queues: every event once, in order, nothing hangs', async (t) => {
  const redisPrefix = `test:${randomUUID()}`
  const { redisUrl, redisClusterNodes, redisSentinel } = loadConfig({ REDIS_SENTINELS: sentinel.env, REDIS_SENTINEL_MASTER: sentinel.masterName })
  const config = { redisUrl, redisClusterNodes, redisSentinel }
  const a = await buildTestApp(t, { bus: 'redis', redisPrefix, config })
  const b = await buildTestApp(t, { bus: 'redis', redisPrefix, config, fixture: a.fx })
  const member = await a.fx.user('member')
  const { queue_id } = expectSuccess(t, await as(a.app, member).post('/register', { event_types: ['alert_words'] }))
  const publish = (n: number) => a.services.bus.publish({ realmId: a.fx.realm.id, userIds: [member.id], event: alertWordsEvent([`w${n}`]), origin: a.services.nodeId })

  await publish(1)
  const first = expectSuccess(t, await as(b.app, member).get('/events', { queue_id, last_event_id: -1 })).events as { id: number; alert_words: string[] }[]
  t.same(first.map((e) => e.alert_words), [['w1']])
  let lastEventId = first[0]!.id
  await publish(2)
  await replicated()

  // A poll held on node B (event 2 is there already, unacknowledged: it answers at once; then hold one more).
  const seen: string[] = ['w1']
  const take = (events: { id: number; alert_words: string[] }[]) => {
    for (const e of events) {
      seen.push(e.alert_words[0]!)
      lastEventId = e.id
    }
  }
  take(expectSuccess(t, await as(b.app, member).get('/events', { queue_id, last_event_id: lastEventId })).events as never)
  await replicated()
  const held = as(b.app, member).get('/events', { queue_id, last_event_id: lastEventId })
  await waitForHeld(b.services.events)

  await sentinel.master.kill()

  // Keep publishing through node A and polling through node B (then A) as a client would, retrying on 503s.
  const statuses = new Set<number>()
  const settled = async <T>(p: Promise<T>, what: string): Promise<T> => {
    let timer: NodeJS.Timeout | undefined
    try {
      return await Promise.race([p, new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`${what} hung`)), 20_000)))])
    } finally {
      clearTimeout(timer)
    }
  }
  // Publish through node A until Redis takes writes again: the held poll on node B is woken by it (or answers 503).
  let n = 3
  const deadline = Date.now() + 60_000
  await eventually('a publish after the failover', () => settled(publish(n).then(() => true, () => false), 'publish'), { timeoutMs: 60_000, intervalMs: 200, rethrow: true })
  n++
  const heldReply = await settled(held, 'the held poll')
  statuses.add(heldReply.statusCode)
  if (heldReply.statusCode === 200) take(heldReply.json().events)
  else t.equal(heldReply.json().code, 'SERVER_NOT_READY', 'the held poll answers a retryable SERVER_NOT_READY')
  // Publish and poll, alternating nodes, until the events published since the failover arrive.
  const publishAndPoll = async () => {
    if (await settled(publish(n).then(() => true, () => false), 'publish')) n++
    const node = n % 2 === 0 ? a : b
    const res = await settled(as(node.app, member).get('/events', { queue_id, last_event_id: lastEventId, dont_block: true }), 'a poll')
    statuses.add(res.statusCode)
    if (res.statusCode === 200) take(res.json().events)
    else t.equal(res.json().code, 'SERVER_NOT_READY', `a ${res.statusCode} during the failover is a retryable SERVER_NOT_READY`)
    return seen.includes('w3') && seen.length >= 3
  }
  await eventually('recovery', publishAndPoll, { timeoutMs: Math.max(0, deadline - Date.now()), intervalMs: 200, rethrow: true, detail: () => `statuses ${[...statuses].join(',')}, seen ${seen.join(',')}` })
  t.equal(await sentinel.currentMasterPort(), sentinel.replica.port, 'the replica was promoted')
  // Whatever else was published meanwhile arrives too: drain, then compare with what was published.
  for (let i = 0; i < 10 && seen.length < n - 1; i++) {
    take(expectSuccess(t, await as(a.app, member).get('/events', { queue_id, last_event_id: lastEventId, dont_block: true })).events as never)
  }
  t.same(seen, Array.from({ length: n - 1 }, (_, i) => `w${i + 1}`), 'every published event exactly once, in order')
})

t.test('a queue whose writes the replica never got is gone after the failover: BAD_EVENT_QUEUE_ID, and the client registers again', async (t) => {
  const lossy = await startRedisSentinel(t)
  const { redisUrl, redisClusterNodes, redisSentinel } = loadConfig({ REDIS_SENTINELS: lossy.env, REDIS_SENTINEL_MASTER: lossy.masterName })
  const config = { redisUrl, redisClusterNodes, redisSentinel }
  const redisPrefix = `test:${randomUUID()}`
  const a = await buildTestApp(t, { bus: 'redis', redisPrefix, config })
  const member = await a.fx.user('member')
  lossy.holdReplication()
  const { queue_id } = expectSuccess(t, await as(a.app, member).post('/register', { event_types: ['alert_words'] }))
  // (KEYS on a test's private server, so the check holds whatever the queue store's key layout.)
  const replicaKeys = await redisCall(lossy.replica.port, 'KEYS', `*${queue_id}*`)
  t.same(replicaKeys, [], 'the replica never got the queue')
  t.notSame(await redisCall(lossy.master.port, 'KEYS', `*${queue_id}*`), [], 'the master has it')
  await lossy.master.kill()
  const res = await eventually('an answer but 503 after the failover', () => as(a.app, member).get('/events', { queue_id, last_event_id: -1, dont_block: true }), {
    timeoutMs: 60_000,
    intervalMs: 200,
    until: (r) => r.statusCode !== 503,
  })
  t.equal(res.statusCode, 400)
  t.match(res.json(), { code: 'BAD_EVENT_QUEUE_ID', queue_id })
  t.equal(await lossy.currentMasterPort(), lossy.replica.port, 'the replica was promoted')
  const again = expectSuccess(t, await as(a.app, member).post('/register', { event_types: ['alert_words'] }))
  t.not(again.queue_id, queue_id)
  t.same(expectSuccess(t, await as(a.app, member).get('/events', { queue_id: again.queue_id, last_event_id: -1, dont_block: true })).events, [], 'the new queue works')
})
