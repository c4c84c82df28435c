// Two (or three) nodes on one database and one Redis: any node serves any queue.
import { randomUUID } from 'node:crypto'
import t from 'tap'
import { buildTestApp } from '../support/app.js'
import { as } from '../support/client.js'
import { bodyOf, expectError, expectSuccess } from '../support/expect.js'
import { withTimeout, waitForHeld } from '../events/queue-store.contract.js'
import type { WireEvent as ChatEvent } from '../../src/events/bus.js'
import { alertWordsEvent } from '../../src/events/schemas/index.js'

const alert = (n: number) => alertWordsEvent([`w${n}`])

t.test('an event published on node A wakes a poll held on node B', async (t) => {
  const redisPrefix = `test:${randomUUID()}`
  const a = await buildTestApp(t, { bus: 'redis', redisPrefix })
  const b = await buildTestApp(t, { bus: 'redis', redisPrefix, fixture: a.fx })
  const c = await buildTestApp(t, { bus: 'redis', redisPrefix, fixture: a.fx })
  const member = await a.fx.user('member')
  const { queue_id } = expectSuccess(t, await as(a.app, member).post('/register', { event_types: ['alert_words'] }))
  const poll = as(b.app, member).get('/events', { queue_id, last_event_id: -1 })
  await waitForHeld(b.services.events)
  await c.services.bus.publish({ realmId: a.fx.realm.id, userIds: [member.id], event: alert(1), origin: c.services.nodeId })
  t.match(expectSuccess(t, await withTimeout(poll)).events, [{ id: 0, type: 'alert_words', alert_words: ['w1'] }])
})

t.test('a poll cut off by its node closing is retried on another node and gets every event once', async (t) => {
  const redisPrefix = `test:${randomUUID()}`
  const a = await buildTestApp(t, { bus: 'redis', redisPrefix })
  const b = await buildTestApp(t, { bus: 'redis', redisPrefix, fixture: a.fx })
  const member = await a.fx.user('member')
  const { queue_id } = expectSuccess(t, await as(b.app, member).post('/register', { event_types: ['alert_words'] }))
  const publish = (n: number) => b.services.bus.publish({ realmId: a.fx.realm.id, userIds: [member.id], event: alert(n), origin: 'b' })

  await publish(0)
  const first = expectSuccess(t, await as(a.app, member).get('/events', { queue_id, last_event_id: -1 })).events
  t.same(first.map((e: ChatEvent) => e.alert_words), [['w0']])
  const last = first[first.length - 1].id as number

  const held = as(a.app, member).get('/events', { queue_id, last_event_id: last })
  await waitForHeld(a.services.events)
  const closing = a.app.close() // node A goes away mid-wait: the poll is answered, nothing acknowledged
  t.same(bodyOf(await withTimeout(held)).events, [])
  await closing
  await publish(1)
  await publish(2)

  const seen: string[] = []
  let cursor = last
  while (seen.length < 2) {
    const events = expectSuccess(t, await withTimeout(as(b.app, member).get('/events', { queue_id, last_event_id: cursor }))).events as ChatEvent[]
    for (const e of events) {
      seen.push((e.alert_words as string[])[0] as string)
      cursor = e.id as number
    }
  }
  t.same(seen, ['w1', 'w2'], 'in order, exactly once')
  t.same(expectSuccess(t, await as(b.app, member).get('/events', { queue_id, last_event_id: cursor, dont_block: true })).events, [])
})

t.test('a queue deleted on one node is gone on every node', async (t) => {
  const redisPrefix = `test:${randomUUID()}`
  const a = await buildTestApp(t, { bus: 'redis', redisPrefix })
  const b = await buildTestApp(t, { bus: 'redis', redisPrefix, fixture: a.fx })
  const member = await a.fx.user('member')
  const { queue_id } = expectSuccess(t, await as(a.app, member).post('/register'))
  expectSuccess(t, await as(b.app, member).delete('/events', { queue_id }))
  expectError(t, await as(a.app, member).get('/events', { queue_id, last_event_id: -1, dont_block: true }), { code: 'BAD_EVENT_QUEUE_ID' })
  expectError(t, await as(a.app, member).delete('/events', { queue_id }), { code: 'BAD_EVENT_QUEUE_ID' })
})

t.test('a poll held on one node finishes normally when the queue is deleted through another (upstream finishes the held request)', async (t) => {
  const redisPrefix = `test:${randomUUID()}`
  const a = await buildTestApp(t, { bus: 'redis', redisPrefix })
  const b = await buildTestApp(t, { bus: 'redis', redisPrefix, fixture: a.fx })
  const member = await a.fx.user('member')
  const { queue_id } = expectSuccess(t, await as(a.app, member).post('/register', { event_types: ['alert_words'] }))
  const held = as(a.app, member).get('/events', { queue_id, last_event_id: -1 })
  await waitForHeld(a.services.events)
  expectSuccess(t, await as(b.app, member).delete('/events', { queue_id }))
  const res = await withTimeout(held)
  t.equal(res.statusCode, 200)
  t.same(bodyOf(res), { result: 'success', msg: '', events: [], queue_id })
  expectError(t, await as(a.app, member).get('/events', { queue_id, last_event_id: -1 }), { code: 'BAD_EVENT_QUEUE_ID' })
})

t.test('a newer poll on another node answers the older one', async (t) => {
  const redisPrefix = `test:${randomUUID()}`
  const a = await buildTestApp(t, { bus: 'redis', redisPrefix })
  const b = await buildTestApp(t, { bus: 'redis', redisPrefix, fixture: a.fx })
  const member = await a.fx.user('member')
  const { queue_id } = expectSuccess(t, await as(a.app, member).post('/register', { event_types: ['alert_words'] }))
  const older = as(a.app, member).get('/events', { queue_id, last_event_id: -1 })
  await waitForHeld(a.services.events)
  const newer = as(b.app, member).get('/events', { queue_id, last_event_id: -1 })
  t.same(expectSuccess(t, await withTimeout(older)).events, [])
  await waitForHeld(b.services.events)
  await a.services.bus.publish({ realmId: a.fx.realm.id, userIds: [member.id], event: alert(5), origin: 'a' })
  t.match(expectSuccess(t, await withTimeout(newer)).events, [{ id: 0, alert_words: ['w5'] }])
})
