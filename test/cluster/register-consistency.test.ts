// Snapshot/queue consistency under concurrent writes, on a three-node Redis
// cluster: while a writer on node C keeps changing the member's state
// (subscribing and unsubscribing channels, changing a subscription's color,
// receiving messages), the member registers on node A again and again; each
// queue is then drained on node B. For every registration:
//
//   register snapshot + events after last_event_id == final state
//
// with nothing missed and nothing applied twice: no event whose change is
// already in the snapshot (a subscription `add` for a channel the snapshot
// lists, a `remove` for one it does not, a message at or below
// max_message_id). The register state is read in one repeatable-read
// transaction and the queue drops events of transactions that committed
// before that snapshot (test/events/register-race.test.ts makes the race
// deterministic on one node).
import { randomUUID } from 'node:crypto'
import t from 'tap'
import type { User } from '../../src/db/index.js'
import { buildTestApp, type TestApp } from '../support/app.js'
import { as } from '../support/client.js'
import { bodyOf, expectSuccess, type Body } from '../support/expect.js'
import { MODERN_CAPABILITIES } from '../support/events.js'
import { withTimeout } from '../events/queue-store.contract.js'

const CHANNELS = Array.from({ length: 6 }, (_, i) => `churn-${i}`)
const COLORS = ['#76ce90', '#fae589', '#a6c7e5', '#e79ab5', '#bfd56f', '#f4ae55']
const REGISTRATIONS = 12

interface Registration {
  queueId: string
  lastEventId: number
  /** stream_id → color, from the snapshot. */
  subscriptions: Map<number, string>
  maxMessageId: number
}

interface Applied {
  subscriptions: Map<number, string>
  messageIds: number[]
  redundant: { subscriptionAdd: number; subscriptionRemove: number; message: number }
  missing: string[]
}

async function drainQueue(app: TestApp, user: User, queueId: string, cursor: number): Promise<Body[]> {
  const all: Body[] = []
  for (;;) {
    const body = bodyOf(await withTimeout(as(app.app, user).get('/events', { queue_id: queueId, last_event_id: cursor, dont_block: true })))
    if (body.result !== 'success') throw new Error(`GET /events: ${JSON.stringify(body)}`)
    const events = body.events as Body[]
    if (events.length === 0) return all
    all.push(...events)
    cursor = events[events.length - 1]?.id as number
  }
}

function apply(reg: Registration, events: Body[]): Applied {
  const subscriptions = new Map(reg.subscriptions)
  const out: Applied = { subscriptions, messageIds: [], redundant: { subscriptionAdd: 0, subscriptionRemove: 0, message: 0 }, missing: [] }
  for (const e of events) {
    if (e.type === 'message') {
      const id = e.message.id as number
      if (id <= reg.maxMessageId) out.redundant.message++
      out.messageIds.push(id)
    } else if (e.type === 'subscription' && e.op === 'add') {
      for (const s of e.subscriptions as Body[]) {
        if (subscriptions.has(s.stream_id)) out.redundant.subscriptionAdd++
        subscriptions.set(s.stream_id, s.color)
      }
    } else if (e.type === 'subscription' && e.op === 'remove') {
      for (const s of e.subscriptions as Body[]) {
        if (!subscriptions.delete(s.stream_id)) out.redundant.subscriptionRemove++
      }
    } else if (e.type === 'subscription' && e.op === 'update' && e.property === 'color') {
      // An update for a subscription neither in the snapshot nor added since means an add was missed.
      if (!subscriptions.has(e.stream_id)) out.missing.push(`color update for unknown subscription ${e.stream_id}`)
      subscriptions.set(e.stream_id, e.value)
    }
  }
  return out
}

t.test('register snapshot plus the events after last_event_id equals the final state under concurrent writes', async (t) => {
  const redisPrefix = `test:${randomUUID()}`
  const a = await buildTestApp(t, { bus: 'redis', redisPrefix })
  const b = await buildTestApp(t, { bus: 'redis', redisPrefix, fixture: a.fx })
  const c = await buildTestApp(t, { bus: 'redis', redisPrefix, fixture: a.fx })
  const member = await a.fx.user('member')
  const owner = await a.fx.user('owner')
  const general = a.fx.streams.general.id

  let writing = true
  const writer = (async () => {
    let round = 0
    while (writing) {
      const name = CHANNELS[round % CHANNELS.length] as string
      const subscribe = Math.floor(round / CHANNELS.length) % 2 === 0
      expectSuccess(
        t,
        subscribe
          ? await as(c.app, member).post('/users/me/subscriptions', { subscriptions: [{ name }] })
          : await as(c.app, member).delete('/users/me/subscriptions', { subscriptions: [name] }),
      )
      expectSuccess(
        t,
        await as(c.app, member).post('/users/me/subscriptions/properties', {
          subscription_data: [{ stream_id: general, property: 'color', value: COLORS[round % COLORS.length] }],
        }),
      )
      expectSuccess(t, await as(c.app, owner).post('/messages', { type: 'stream', to: 'general', topic: 'churn', content: `m${round}` }))
      round++
    }
    return round
  })()

  const registrations: Registration[] = []
  for (let i = 0; i < REGISTRATIONS; i++) {
    const reg = expectSuccess(
      t,
      await as(a.app, member).post('/register', {
        event_types: ['subscription', 'message'],
        fetch_event_types: ['subscription', 'message'],
        client_capabilities: MODERN_CAPABILITIES,
      }),
    )
    registrations.push({
      queueId: reg.queue_id,
      lastEventId: reg.last_event_id,
      subscriptions: new Map((reg.subscriptions as Body[]).map((s) => [s.stream_id as number, s.color as string])),
      maxMessageId: reg.max_message_id,
    })
  }
  writing = false
  const rounds = await withTimeout(writer, 30_000, 'the writer')

  const finalSubscriptions = new Map(
    (expectSuccess(t, await as(b.app, member).get('/users/me/subscriptions')).subscriptions as Body[]).map((s) => [s.stream_id as number, s.color as string]),
  )
  const finalMessageIds = (expectSuccess(t, await as(b.app, member).get('/messages', { anchor: 'newest', num_before: 5000, num_after: 0 })).messages as Body[]).map(
    (m) => m.id as number,
  )

  const totals = { subscriptionAdd: 0, subscriptionRemove: 0, message: 0 }
  for (const [i, reg] of registrations.entries()) {
    const events = await drainQueue(b, member, reg.queueId, reg.lastEventId)
    const applied = apply(reg, events)
    t.same(applied.missing, [], `registration ${i}: no event refers to state it never saw`)
    t.same(
      [...applied.subscriptions.entries()].sort(([x], [y]) => x - y),
      [...finalSubscriptions.entries()].sort(([x], [y]) => x - y),
      `registration ${i}: snapshot + events = final subscriptions (ids and colors)`,
    )
    const expectedMessages = finalMessageIds.filter((id) => id > reg.maxMessageId)
    t.same(
      applied.messageIds.filter((id) => id > reg.maxMessageId),
      expectedMessages,
      `registration ${i}: every message after max_message_id delivered once, in order`,
    )
    totals.subscriptionAdd += applied.redundant.subscriptionAdd
    totals.subscriptionRemove += applied.redundant.subscriptionRemove
    totals.message += applied.redundant.message
    await as(a.app, member).delete('/events', { queue_id: reg.queueId })
  }
  t.comment(`${REGISTRATIONS} registrations during ${rounds} writer rounds`)
  t.same(totals, { subscriptionAdd: 0, subscriptionRemove: 0, message: 0 }, 'no event repeats a change the snapshot already holds')
  t.ok(rounds > 0, 'the writer ran concurrently')
})
