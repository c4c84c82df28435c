// The event system on a Redis cluster of three nodes sharing PostgreSQL and
// Redis, driven through HTTP only: register on one node, poll on another,
// produce on a third; a node closing under a held poll; garbage collection and
// heartbeats with short configured timeouts; filters and capability transforms.
// No timing assertions: every wait is a promise raced against a timeout.
import { randomUUID } from 'node:crypto'
import { setTimeout as delay } from 'node:timers/promises'
import t from 'tap'
import type { FastifyInstance } from 'fastify'
import type { Config } from '../../src/config.js'
import type { User } from '../../src/db/index.js'
import { buildTestApp, type Tap, type TestApp } from '../support/app.js'
import { as } from '../support/client.js'
import { bodyOf, expectError, expectSuccess, type Body } from '../support/expect.js'
import { MODERN_CAPABILITIES } from '../support/events.js'
import { withTimeout, waitForHeld } from '../events/queue-store.contract.js'

async function cluster(t: Tap, size: number, config: Partial<Config> = {}): Promise<TestApp[]> {
  const redisPrefix = `test:${randomUUID()}`
  const first = await buildTestApp(t, { bus: 'redis', redisPrefix, config })
  const nodes = [first]
  for (let i = 1; i < size; i++) nodes.push(await buildTestApp(t, { bus: 'redis', redisPrefix, config, fixture: first.fx }))
  return nodes
}

type Event = Body

/**
 * Polls (blocking) on the given nodes in turn until `done(events)` holds; returns
 * every event after `cursor`, acknowledging as it goes, the way a client does.
 */
async function pollUntil(
  nodes: FastifyInstance[],
  user: User,
  queueId: string,
  cursor: number,
  done: (events: Event[]) => boolean,
): Promise<{ events: Event[]; cursor: number }> {
  const events: Event[] = []
  let turn = 0
  while (!done(events)) {
    const node = nodes[turn++ % nodes.length] as FastifyInstance
    const body = bodyOf(await withTimeout(as(node, user).get('/events', { queue_id: queueId, last_event_id: cursor }), 15_000, 'GET /events'))
    if (body.result !== 'success') throw new Error(`GET /events failed: ${JSON.stringify(body)}`)
    for (const e of body.events as Event[]) {
      if (e.type !== 'heartbeat') events.push(e)
      cursor = e.id as number
    }
  }
  return { events, cursor }
}

const messageEvents = (events: Event[]) => events.filter((e) => e.type === 'message')
const contents = (events: Event[]) => messageEvents(events).map((e) => e.message.content as string)

function strictlyIncreasing(ids: number[]): boolean {
  return ids.every((id, i) => i === 0 || id > (ids[i - 1] as number))
}

t.test('register on A, poll on B, produce on C: every event exactly once, in order', async (t) => {
  const [a, b, c] = (await cluster(t, 3)) as [TestApp, TestApp, TestApp]
  const member = await a.fx.user('member')
  const owner = await a.fx.user('owner')
  const reg = expectSuccess(t, await as(a.app, member).post('/register', { event_types: ['message'], fetch_event_types: [] }))
  const count = 30
  const expected = Array.from({ length: count }, (_, i) => `m${i}`)

  const polling = pollUntil([b.app], member, reg.queue_id, reg.last_event_id, (events) => messageEvents(events).length >= count)
  await waitForHeld(b.services.events)
  for (const content of expected) {
    expectSuccess(t, await as(c.app, owner).post('/messages', { type: 'stream', to: 'general', topic: 'cluster', content }))
  }
  const { events, cursor } = await polling
  t.same(contents(events), expected, 'every message once, in the order sent')
  t.ok(strictlyIncreasing(events.map((e) => e.id as number)), 'event ids increase strictly')
  const rest = expectSuccess(t, await as(c.app, member).get('/events', { queue_id: reg.queue_id, last_event_id: cursor, dont_block: true }))
  t.same(rest.events, [], 'nothing more is queued on any node')
})

t.test('a poll held on a node that closes mid-wait, retried elsewhere with the same last_event_id, gets every event once', async (t) => {
  const [a, b, c] = (await cluster(t, 3)) as [TestApp, TestApp, TestApp]
  const member = await a.fx.user('member')
  const owner = await a.fx.user('owner')
  const reg = expectSuccess(t, await as(c.app, member).post('/register', { event_types: ['message'], fetch_event_types: [] }))
  const send = (content: string) => as(c.app, owner).post('/messages', { type: 'stream', to: 'general', topic: 'drain', content })

  expectSuccess(t, await send('before'))
  const first = await pollUntil([a.app], member, reg.queue_id, reg.last_event_id, (events) => events.length >= 1)
  t.same(contents(first.events), ['before'])

  // Held on A; A closes (preClose drains) while messages keep being sent on C.
  const held = as(a.app, member).get('/events', { queue_id: reg.queue_id, last_event_id: first.cursor })
  await waitForHeld(a.services.events)
  const expected = Array.from({ length: 10 }, (_, i) => `during${i}`)
  const sending = (async () => {
    for (const content of expected) expectSuccess(t, await send(content))
  })()
  const closing = a.app.close()
  const answer = expectSuccess(t, await withTimeout(held, 10_000, 'the drained poll'))
  // The drained poll may carry events that raced in before the drain; a client acknowledges them.
  const early = answer.events as Event[]
  const cursor = early.reduce((max, e) => Math.max(max, e.id as number), first.cursor)
  await closing
  await sending
  const rest = await pollUntil([b.app, c.app], member, reg.queue_id, cursor, (events) => early.length + messageEvents(events).length >= expected.length)
  t.same([...contents(early), ...contents(rest.events)], expected, 'in order, exactly once, across the closed node')
  const after = expectSuccess(t, await as(b.app, member).get('/events', { queue_id: reg.queue_id, last_event_id: rest.cursor, dont_block: true }))
  t.same(after.events, [])
  t.comment(`${early.length} event(s) answered by the closing node, ${rest.events.length} after the retry`)
})

t.test('a closing node answers every poll it holds, and each queue is served by the others afterwards', async (t) => {
  const [a, b, c] = (await cluster(t, 3)) as [TestApp, TestApp, TestApp]
  const member = await a.fx.user('member')
  const otherMember = await a.fx.user('otherMember')
  const users = [member, otherMember]
  const regs = await Promise.all(users.map(async (u) => expectSuccess(t, await as(b.app, u).post('/register', { event_types: ['message'], fetch_event_types: [] }))))
  const held = users.map((u, i) => as(a.app, u).get('/events', { queue_id: regs[i]?.queue_id, last_event_id: -1 }))
  await waitForHeld(a.services.events, 2)
  await a.app.close()
  for (const res of await withTimeout(Promise.all(held))) t.same(expectSuccess(t, res).events, [])
  const owner = await a.fx.user('owner')
  expectSuccess(t, await as(c.app, owner).post('/messages', { type: 'stream', to: 'general', topic: 'after', content: 'hello' }))
  for (const [i, u] of users.entries()) {
    const got = await pollUntil([b.app], u, regs[i]?.queue_id, -1, (events) => events.length >= 1)
    t.same(contents(got.events), ['hello'])
  }
})

t.test('garbage collection after EVENT_QUEUE_TIMEOUT_SECONDS holds on every node', async (t) => {
  const [a, b, c] = (await cluster(t, 3, { eventQueueTimeoutSeconds: 1 })) as [TestApp, TestApp, TestApp]
  const member = await a.fx.user('member')
  const reg = expectSuccess(t, await as(a.app, member).post('/register', { event_types: ['message'], fetch_event_types: [] }))
  const kept = expectSuccess(t, await as(a.app, member).post('/register', { event_types: ['message'], fetch_event_types: [], queue_lifespan_secs: 3600 }))
  // One wait past the lifespan (not a loop): an expired key is never served, whatever the node.
  await delay(2_500)
  const gone = expectError(t, await as(b.app, member).get('/events', { queue_id: reg.queue_id, last_event_id: -1, dont_block: true }), { code: 'BAD_EVENT_QUEUE_ID' })
  t.equal(gone.queue_id, reg.queue_id)
  expectError(t, await as(c.app, member).delete('/events', { queue_id: reg.queue_id }), { code: 'BAD_EVENT_QUEUE_ID' })
  expectError(t, await as(a.app, member).get('/events', { queue_id: reg.queue_id, last_event_id: -1, dont_block: true }), { code: 'BAD_EVENT_QUEUE_ID' })
  t.same(expectSuccess(t, await as(c.app, member).get('/events', { queue_id: kept.queue_id, last_event_id: -1, dont_block: true })).events, [], 'queue_lifespan_secs outlives the default')
})

t.test('heartbeats on an idle poll, on any node, keep the queue alive past its timeout', async (t) => {
  const [a, b, c] = (await cluster(t, 3, { eventQueueTimeoutSeconds: 2, heartbeatIntervalSeconds: 1 })) as [TestApp, TestApp, TestApp]
  const member = await a.fx.user('member')
  const owner = await a.fx.user('owner')
  const reg = expectSuccess(t, await as(a.app, member).post('/register', { event_types: ['message'], fetch_event_types: [] }))
  let cursor = reg.last_event_id as number
  const ids: number[] = []
  // Three heartbeats in a row, each on another node: longer than the queue's timeout in total.
  for (const node of [b, c, a]) {
    const body = expectSuccess(t, await withTimeout(as(node.app, member).get('/events', { queue_id: reg.queue_id, last_event_id: cursor })))
    t.match(body.events, [{ type: 'heartbeat' }], 'an idle poll answers a heartbeat')
    t.equal(body.events.length, 1)
    cursor = body.events[0].id
    ids.push(cursor)
  }
  t.ok(strictlyIncreasing(ids), 'heartbeats take queue ids like any event')
  const poll = as(b.app, member).get('/events', { queue_id: reg.queue_id, last_event_id: cursor })
  await waitForHeld(b.services.events)
  expectSuccess(t, await as(c.app, owner).post('/messages', { type: 'stream', to: 'general', topic: 'alive', content: 'still here' }))
  const body = expectSuccess(t, await withTimeout(poll))
  const message = (body.events as Event[]).find((e) => e.type === 'message')
  t.equal(message?.message.content, 'still here', 'the queue survived and is woken across nodes')
})

t.test('filters and capability transforms apply to queues served by other nodes', async (t) => {
  const [a, b, c] = (await cluster(t, 3)) as [TestApp, TestApp, TestApp]
  const member = await a.fx.user('member')
  const otherMember = await a.fx.user('otherMember')
  const owner = await a.fx.user('owner')
  const register = async (user: User, params: Record<string, unknown>) => expectSuccess(t, await as(a.app, user).post('/register', { fetch_event_types: [], ...params }))
  const narrowed = await register(member, { event_types: ['message'], narrow: [['stream', 'design']], client_capabilities: MODERN_CAPABILITIES })
  const legacy = await register(member, { event_types: ['message', 'user_settings', 'update_display_settings'], apply_markdown: true })
  const modern = await register(member, { event_types: ['message', 'user_settings', 'update_display_settings'], client_capabilities: MODERN_CAPABILITIES })
  const publicReader = await register(otherMember, { event_types: ['message'], all_public_streams: true, client_capabilities: MODERN_CAPABILITIES })
  const plainReader = await register(otherMember, { event_types: ['message'], client_capabilities: MODERN_CAPABILITIES })

  expectSuccess(t, await as(c.app, owner).post('/messages', { type: 'stream', to: 'general', topic: 'f', content: '**general**' }))
  expectSuccess(t, await as(c.app, owner).post('/messages', { type: 'stream', to: 'design', topic: 'f', content: '**design**' }))
  expectSuccess(t, await as(c.app, member).patch('/settings', { color_scheme: 2 }))
  expectSuccess(t, await as(c.app, member).patch('/settings', { color_scheme: 3 }))

  const fetch = async (user: User, queueId: string) =>
    expectSuccess(t, await as(b.app, user).get('/events', { queue_id: queueId, last_event_id: -1, dont_block: true })).events as Event[]
  t.same(contents(await fetch(member, narrowed.queue_id)), ['**design**'], 'narrow keeps only its channel')
  const legacyEvents = await fetch(member, legacy.queue_id)
  t.same(contents(legacyEvents), ['<p><strong>general</strong></p>', '<p><strong>design</strong></p>'], 'apply_markdown renders')
  t.match(
    legacyEvents.filter((e) => e.type !== 'message'),
    [
      { type: 'user_settings', property: 'color_scheme', value: 2 },
      { type: 'update_display_settings', setting_name: 'color_scheme', setting: 2, user: member.deliveryEmail },
      { type: 'user_settings', property: 'color_scheme', value: 3 },
      { type: 'update_display_settings', setting_name: 'color_scheme', setting: 3 },
    ],
    'without user_settings_object the legacy event follows each user_settings',
  )
  const modernEvents = await fetch(member, modern.queue_id)
  t.same(contents(modernEvents), ['**general**', '**design**'], 'Markdown source without apply_markdown')
  t.equal(modernEvents.filter((e) => e.type === 'update_display_settings').length, 0, 'no legacy events with user_settings_object')
  t.same(modernEvents.filter((e) => e.type === 'user_settings').length, 2)
  // otherMember is in general only; all_public_streams also sees design.
  t.same(contents(await fetch(otherMember, publicReader.queue_id)), ['**general**', '**design**'], 'all_public_streams sees every public channel')
  t.same(contents(await fetch(otherMember, plainReader.queue_id)), ['**general**'], 'a plain queue sees its subscriptions only')
})

t.test("a queue is another user's on no node", async (t) => {
  const [a, b] = (await cluster(t, 2)) as [TestApp, TestApp]
  const member = await a.fx.user('member')
  const otherMember = await a.fx.user('otherMember')
  const reg = expectSuccess(t, await as(a.app, member).post('/register', { event_types: ['message'], fetch_event_types: [] }))
  const res = expectError(t, await as(b.app, otherMember).get('/events', { queue_id: reg.queue_id, last_event_id: -1, dont_block: true }), { code: 'BAD_EVENT_QUEUE_ID' })
  t.equal(res.queue_id, reg.queue_id)
  expectError(t, await as(b.app, otherMember).delete('/events', { queue_id: reg.queue_id }), { code: 'BAD_EVENT_QUEUE_ID' })
  t.same(expectSuccess(t, await as(b.app, member).get('/events', { queue_id: reg.queue_id, last_event_id: -1, dont_block: true })).events, [])
})
