// An acknowledgement (last_event_id on GET /events) is in effect on every node
// before the answer that carries it is written: the node that answers from
// memory prunes the queue in Redis first and tells the other nodes watching it.
import { randomUUID } from 'node:crypto'
import t from 'tap'
import { buildTestApp } from '../support/app.js'
import { as } from '../support/client.js'
import { expectError, expectSuccess } from '../support/expect.js'
import type { ChatEvent } from '../../src/events/bus.js'

const alert = (n: number): ChatEvent => ({ type: 'alert_words', alert_words: [`w${n}`] })
const PRUNED = { code: 'BAD_REQUEST', status: 400, msg: 'An event newer than -1 has already been pruned!' }

async function twoNodes(t: Tap) {
  const redisPrefix = `test:${randomUUID()}`
  const a = await buildTestApp(t, { bus: 'redis', redisPrefix })
  const b = await buildTestApp(t, { bus: 'redis', redisPrefix, fixture: a.fx })
  const member = await a.fx.user('member')
  const { queue_id } = expectSuccess(t, await as(a.app, member).post('/register', { event_types: ['alert_words'] }))
  for (let n = 0; n < 3; n++) await a.services.bus.publish({ realmId: a.fx.realm.id, userIds: [member.id], event: alert(n), origin: a.services.nodeId })
  const poll = (node: typeof a, lastEventId: number) => as(node.app, member).get('/events', { queue_id, last_event_id: lastEventId, dont_block: true })
  // A held poll: answered once the node has the events after lastEventId.
  const wait = (node: typeof a, lastEventId: number) => as(node.app, member).get('/events', { queue_id, last_event_id: lastEventId })
  return { a, b, poll, wait }
}
type Tap = Parameters<typeof buildTestApp>[0] & Parameters<typeof expectSuccess>[0]

t.test('an acknowledgement answered from memory on node A is in Redis before A answers', async (t) => {
  const { a, b, poll } = await twoNodes(t)
  const events = expectSuccess(t, await poll(a, -1)).events as (ChatEvent & { id: number })[]
  t.same(events.map((e) => e.id), [0, 1, 2], 'node A read the queue (and now holds it in memory)')
  t.same(expectSuccess(t, await poll(a, 2)).events, [], 'node A answers the acknowledgement of 2')
  // Node B never read the queue: it asks Redis, where 0–2 must be gone already.
  expectError(t, await poll(b, -1), PRUNED)
  t.same(expectSuccess(t, await poll(b, 2)).events, [])
})

t.test('a node holding the queue in memory learns of an acknowledgement made on another node', async (t) => {
  const { a, b, poll, wait } = await twoNodes(t)
  t.same((expectSuccess(t, await poll(b, -1)).events as (ChatEvent & { id: number })[]).map((e) => e.id), [0, 1, 2], 'node B holds 0–2 in memory')
  t.same((expectSuccess(t, await poll(a, -1)).events as (ChatEvent & { id: number })[]).map((e) => e.id), [0, 1, 2])
  t.same(expectSuccess(t, await poll(a, 2)).events, [], 'node A acknowledges 2 from memory')
  expectError(t, await poll(b, -1), PRUNED)
  t.same(expectSuccess(t, await poll(b, 2)).events, [], 'and B goes on from there')
  await a.services.bus.publish({ realmId: a.fx.realm.id, userIds: [(await a.fx.user('member')).id], event: alert(3), origin: a.services.nodeId })
  // B learns of event 3 from its wake-up, which may reach B's subscriber
  // connection after A's own reply (both nodes share this process): a held
  // poll waits for it rather than racing it.
  t.match(expectSuccess(t, await wait(b, 2)).events, [{ id: 3, alert_words: ['w3'] }])
})

t.test('an acknowledgement made by a read on node A is in effect on node B', async (t) => {
  const { a, b, poll } = await twoNodes(t)
  t.same((expectSuccess(t, await poll(b, -1)).events as (ChatEvent & { id: number })[]).map((e) => e.id), [0, 1, 2], 'node B holds 0–2 in memory')
  // Node A has not read the queue: its poll with 2 reads Redis, pruning there.
  t.same(expectSuccess(t, await poll(a, 2)).events, [])
  expectError(t, await poll(b, -1), PRUNED)
})
