// Redis restarted with no persistence under a three-node cluster: while it is
// down, what needs Redis answers 503 SERVER_NOT_READY (never a 500, never a
// hang) and /readyz fails; what needs only PostgreSQL keeps working where rate
// limits are off (with them on, the default, they need Redis too). When it is
// back the nodes reconnect by themselves, the lost queues answer
// BAD_EVENT_QUEUE_ID so clients register again, and no message is lost (they
// are in PostgreSQL).
import t, { type Test } from 'tap'
import { Client, isReply, readiness, startCluster, startNode, startPostgres, startRedis, type Json, type Outcome } from './processes.js'
import { eventually } from '../support/eventually.js'

const NOT_READY = { result: 'error', code: 'SERVER_NOT_READY' }

function expectNotReady(t: Test, res: Outcome, what: string): void {
  t.ok(isReply(res), `${what}: answered (${JSON.stringify(res).slice(0, 200)})`)
  if (!isReply(res)) return
  t.equal(res.status, 503, `${what}: 503 (${JSON.stringify(res.body).slice(0, 200)})`)
  t.match(res.body, NOT_READY, what)
  t.type(res.body.msg, 'string')
}

t.test('Redis restarted without persistence', async (t) => {
  const started = Date.now()
  const step = (what: string) => t.comment(`${((Date.now() - started) / 1000).toFixed(1)} s: ${what}`)
  const redis = await startRedis(t)
  const postgres = await startPostgres(t)
  // A fourth node counts rate limits in Redis (the default), so with Redis down it refuses every request; A, B and C do not count them.
  const nodes = await startCluster(t, { databaseUrl: postgres.url, redisUrl: redis.url })
  const limited = await startNode(t, 'limited', { databaseUrl: postgres.url, redisUrl: redis.url, env: { RATE_LIMITING: 'on' } })
  const [a, b, c] = nodes as [(typeof nodes)[0], (typeof nodes)[0], (typeof nodes)[0]]
  step('cluster started')
  const owner = await Client.login(a)
  t.teardown(() => owner.close())
  await owner.ok(a, 'POST', '/users/me/subscriptions', { subscriptions: [{ name: 'failover' }] })
  const send = (node: typeof a, content: string) => owner.call(node, 'POST', '/messages', { type: 'stream', to: 'failover', topic: 'redis', content })

  const { queue_id } = await owner.ok(a, 'POST', '/register', { event_types: ['message'] })
  const sent: number[] = []
  for (const n of [1, 2, 3]) sent.push((await owner.ok(b, 'POST', '/messages', { type: 'stream', to: 'failover', topic: 'redis', content: `before ${n}` })).id as number)
  const before = await owner.ok(c, 'GET', '/events', { queue_id, last_event_id: -1 })
  t.same(before.events.map((e: Json) => e.message.id), sent, 'the queue works on every node before')
  const cursor = before.events[before.events.length - 1].id as number
  const held = owner.call(b, 'GET', '/events', { queue_id, last_event_id: cursor })

  await redis.kill()
  step('redis killed')

  for (const node of nodes) {
    expectNotReady(t, await owner.call(node, 'GET', '/events', { queue_id, last_event_id: cursor, dont_block: true }), `GET /events on ${node.name}`)
    expectNotReady(t, await owner.call(node, 'POST', '/register', { event_types: ['message'] }), `POST /register on ${node.name}`)
    t.equal(await readiness(node), 503, `/readyz fails on ${node.name}`)
    const me = await owner.call(node, 'GET', '/users/me')
    t.match(me, { status: 200, body: { result: 'success', email: 'owner@failure.example.com' } }, `what needs only PostgreSQL works on ${node.name}`)
  }
  expectNotReady(t, await owner.call(limited, 'GET', '/users/me'), 'GET /users/me with rate limits counted in Redis')
  t.equal(await readiness(limited), 503)
  // A send stores the message, then cannot tell the queues: 503 (the message is kept, see below).
  const during = await send(c, 'during the outage')
  t.ok(isReply(during) && (during.status === 200 || during.status === 503), `a send during the outage answers 200 or 503 (${JSON.stringify(during)})`)
  if (isReply(during) && during.status === 503) t.match(during.body, NOT_READY)

  step('outage checked')
  await redis.start()
  await eventually('every node ready again', async () => (await Promise.all([...nodes, limited].map(readiness))).every((s) => s === 200), { timeoutMs: 30_000, intervalMs: 100 })
  t.match(await owner.call(limited, 'GET', '/users/me'), { status: 200, body: { result: 'success' } }, 'rate-limited requests are served again')

  // The poll held when Redis went away is answered (503 while Redis was down, or its queue is gone once it is back).
  const heldRes = await held
  t.ok(
    isReply(heldRes) && ((heldRes.status === 503 && heldRes.body.code === 'SERVER_NOT_READY') || (heldRes.status === 400 && heldRes.body.code === 'BAD_EVENT_QUEUE_ID')),
    `the held poll is answered (${JSON.stringify(heldRes).slice(0, 200)})`,
  )
  for (const node of nodes) {
    t.match(await owner.call(node, 'GET', '/events', { queue_id, last_event_id: cursor, dont_block: true }), { status: 400, body: { result: 'error', code: 'BAD_EVENT_QUEUE_ID', queue_id } }, `lost queue on ${node.name}`)
  }

  step('nodes ready again')
  // Clients register again and everything works, across nodes.
  const again = await owner.ok(c, 'POST', '/register', { event_types: ['message'] })
  const poll = owner.call(a, 'GET', '/events', { queue_id: again.queue_id, last_event_id: -1 })
  const after = (await owner.ok(b, 'POST', '/messages', { type: 'stream', to: 'failover', topic: 'redis', content: 'after' })).id as number
  const woken = await poll
  t.match(woken, { status: 200, body: { result: 'success' } })
  t.same(isReply(woken) ? woken.body.events.map((e: Json) => e.message?.id) : [], [after], 'a new queue gets the next message')

  // No message is lost: every one answered with success is in PostgreSQL.
  const stored = await owner.ok(a, 'GET', '/messages', { anchor: 'oldest', num_before: 0, num_after: 100, narrow: [{ operator: 'channel', operand: 'failover' }] })
  const ids = stored.messages.map((m: Json) => m.id as number)
  const expected = [...sent, ...(isReply(during) && during.status === 200 ? [during.body.id as number] : []), after]
  for (const id of expected) t.ok(ids.includes(id), `message ${id} is kept`)
})
