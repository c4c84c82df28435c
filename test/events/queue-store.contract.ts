// One suite for the event-queue system, run against the in-process store
// (memory-queue-store.test.ts) and the Redis store (redis-queue-store.test.ts).
// No timing assertions: waits are promises raced against generous timeouts.
import { randomUUID } from 'node:crypto'
import type { Test } from 'tap'
import type { BusItem, ChatEvent } from '../../src/events/bus.js'
import { EventQueues, type QueueStore, type RegisterQueueInput } from '../../src/events/queues/index.js'
import { parseNarrow } from '../../src/domain/narrow.js'
import { ApiError } from '../../src/errors.js'
import { eventually } from '../support/eventually.js'

export interface StoreHarness {
  store: QueueStore
  close(): Promise<void>
  /** The store answers a read of a queue it has read before from the node's memory (EventQueues.poll then needs no promise). */
  answersFromMemory?: boolean
}

const REALM = 7
const ALICE = 101
const BOB = 102

export function withTimeout<T>(promise: Promise<T>, ms = 10_000, what = 'operation'): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} timed out after ${ms} ms`)), ms)
  })
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer))
}

async function errorOf(promise: Promise<unknown>): Promise<ApiError> {
  try {
    await promise
  } catch (error) {
    if (error instanceof ApiError) return error
    throw error
  }
  throw new Error('expected an ApiError')
}

const item = (event: ChatEvent, userIds: number[] = [ALICE], extra: Partial<BusItem> = {}): BusItem => ({
  realmId: REALM,
  userIds,
  event,
  origin: 'test',
  ...extra,
})

function streamMessage(id: number, stream: string, topic = 'lunch'): ChatEvent {
  return {
    type: 'message',
    message: {
      id,
      type: 'stream',
      stream_id: stream === 'design' ? 2 : 1,
      display_recipient: stream,
      subject: topic,
      sender_id: BOB,
      sender_email: 'bob@example.com',
      content: '<p>hi</p>',
      raw_content: 'hi',
    },
  }
}

export function queueStoreContract(t: Test, makeHarness: () => Promise<StoreHarness>): void {
  let harness: StoreHarness
  const nodes: EventQueues[] = []
  const node = (options: Partial<{ heartbeatSecs: number; defaultLifespanSecs: number }> = {}) => {
    const q = new EventQueues(harness.store, { nodeId: randomUUID(), heartbeatSecs: 60, defaultLifespanSecs: 600, ...options })
    nodes.push(q)
    return q
  }
  const register = (q: EventQueues, input: Partial<RegisterQueueInput> = {}) =>
    q.register({ userId: ALICE, userEmail: 'alice@example.com', realmId: REALM, ...input })

  t.beforeEach(async () => {
    harness = await makeHarness()
  })
  t.afterEach(async () => {
    for (const q of nodes.splice(0)) await q.close()
    await harness.close()
  })

  t.test('gives each queue strictly increasing event ids starting at 0', async (t) => {
    const q = node()
    const desc = await register(q)
    for (let i = 0; i < 3; i++) await harness.store.append(item({ type: 'alert_words', alert_words: [`w${i}`] }))
    const events = await q.getEvents({ queueId: desc.queueId, userId: ALICE, lastEventId: -1, dontBlock: true })
    t.same(events.map((e) => e.id), [0, 1, 2])
    t.same(events.map((e) => (e.alert_words as string[])[0]), ['w0', 'w1', 'w2'])
  })

  t.test('a dont_block poll never throws: its errors are rejected promises; memory answers it without one', async (t) => {
    const q = node()
    const desc = await register(q, { eventTypes: ['message'] })
    await harness.store.append(item(streamMessage(1, 'general')))
    const poll = (input: { queueId?: string; userId?: number; lastEventId?: number } = {}) =>
      q.poll({ queueId: desc.queueId, userId: ALICE, lastEventId: -1, dontBlock: true, ...input })
    const settled = async (answer: ReturnType<typeof poll>) => (answer instanceof Promise ? await answer : answer)
    t.same((await q.getEvents({ queueId: desc.queueId, userId: ALICE, lastEventId: -1, dontBlock: true })).map((e) => e.id), [0])
    t.same((await settled(poll())).map((e) => e.id), [0], 'the same answer through poll()')
    for (const [input, code, what] of [
      [{ userId: BOB }, 'BAD_EVENT_QUEUE_ID', "another user's queue"],
      [{ queueId: randomUUID() }, 'BAD_EVENT_QUEUE_ID', 'an unknown queue'],
      [{ lastEventId: 5 }, 'BAD_REQUEST', 'an ID the queue never issued'],
    ] as const) {
      let answer: ReturnType<typeof poll> | undefined
      t.doesNotThrow(() => {
        answer = poll(input)
      }, `${what}: no throw`)
      t.ok(answer instanceof Promise, `${what}: a promise`)
      t.equal((await errorOf(answer as Promise<unknown>)).code, code, `${what}: ${code}`)
    }
    if (harness.answersFromMemory) {
      const answer = poll()
      t.ok(Array.isArray(answer), 'a queue the node knows: answered at once, without a promise')
      t.same((answer as Awaited<typeof answer>).map((e) => e.id), [0])
    }
  })

  t.test('prunes acknowledged events and rejects stale or unknown ids', async (t) => {
    const q = node()
    const desc = await register(q)
    for (let i = 0; i < 3; i++) await harness.store.append(item({ type: 'alert_words', alert_words: [] }))
    const rest = await q.getEvents({ queueId: desc.queueId, userId: ALICE, lastEventId: 1, dontBlock: true })
    t.same(rest.map((e) => e.id), [2])
    const again = await q.getEvents({ queueId: desc.queueId, userId: ALICE, lastEventId: 1, dontBlock: true })
    t.same(again.map((e) => e.id), [2], 'repeating the last acknowledged id is fine')
    const stale = await errorOf(q.getEvents({ queueId: desc.queueId, userId: ALICE, lastEventId: 0, dontBlock: true }))
    t.equal(stale.code, 'BAD_REQUEST')
    t.match(stale.msg, /already been pruned/)
    const ahead = await errorOf(q.getEvents({ queueId: desc.queueId, userId: ALICE, lastEventId: 9, dontBlock: true }))
    t.equal(ahead.msg, 'Event 9 was not in this queue')
  })

  t.test('filters by event_types, narrow and all_public_streams', async (t) => {
    const q = node()
    const typed = await register(q, { eventTypes: ['message'] })
    const narrowed = await register(q, { narrow: parseNarrow([['stream', 'design']]) })
    const everything = await register(q, { userId: BOB, userEmail: 'bob@example.com', allPublicStreams: true, eventTypes: ['message'] })
    const plain = await register(q, { userId: BOB, userEmail: 'bob@example.com', eventTypes: ['message'] })
    await harness.store.append(item({ type: 'alert_words', alert_words: [] }))
    await harness.store.append(item(streamMessage(1, 'general'), [ALICE], { publicStreamId: 1, perUser: { [ALICE]: { flags: ['read'] } } }))
    await harness.store.append(item(streamMessage(2, 'design'), [ALICE], { publicStreamId: 2 }))
    const fetch = (queueId: string, userId = ALICE) => q.getEvents({ queueId, userId, lastEventId: -1, dontBlock: true })
    const typedEvents = await fetch(typed.queueId)
    t.same(typedEvents.map((e) => e.type), ['message', 'message'])
    t.same(typedEvents[0]?.flags, ['read'], 'per-user fields merged')
    t.equal((typedEvents[0]?.message as Record<string, unknown>).content, 'hi', 'Markdown source without apply_markdown')
    t.equal((typedEvents[0]?.message as Record<string, unknown>).raw_content, undefined)
    t.same((await fetch(narrowed.queueId)).filter((e) => e.type === 'message').map((e) => (e.message as { id: number }).id), [2])
    const publicEvents = await fetch(everything.queueId, BOB)
    t.same(publicEvents.map((e) => (e.message as { id: number }).id), [1, 2], 'all_public_streams sees public messages')
    t.same(publicEvents[0]?.flags, [])
    t.same(await fetch(plain.queueId, BOB), [], 'others do not')
  })

  t.test('applies client_capabilities transforms', async (t) => {
    const q = node()
    const legacy = await register(q, { applyMarkdown: true })
    const modern = await register(q, {
      capabilities: { bulk_message_deletion: true, user_settings_object: true, stream_typing_notifications: true },
    })
    await harness.store.append(item({ type: 'delete_message', message_ids: [5, 6], message_type: 'stream', stream_id: 1, topic: 't' }))
    await harness.store.append(item({ type: 'user_settings', op: 'update', property: 'dense_mode', value: true }))
    await harness.store.append(item({ type: 'typing', op: 'start', message_type: 'stream', stream_id: 1, topic: 't', sender: { user_id: BOB, email: 'bob@example.com' } }))
    await harness.store.append(item(streamMessage(3, 'general')))
    const fetch = (queueId: string) => q.getEvents({ queueId, userId: ALICE, lastEventId: -1, dontBlock: true })
    t.match(await fetch(legacy.queueId), [
      { type: 'delete_message', message_id: 5, message_type: 'stream', stream_id: 1 },
      { type: 'delete_message', message_id: 6 },
      { type: 'user_settings', property: 'dense_mode', value: true },
      { type: 'update_display_settings', user: 'alice@example.com', setting_name: 'dense_mode', setting: true },
      { type: 'message', message: { content: '<p>hi</p>', content_type: 'text/html' } },
    ])
    t.match(await fetch(modern.queueId), [
      { type: 'delete_message', message_ids: [5, 6] },
      { type: 'user_settings' },
      { type: 'typing', stream_id: 1 },
      { type: 'message', message: { content: 'hi', content_type: 'text/x-markdown' } },
    ])
  })

  t.test('wakes a held long-poll when an event arrives', async (t) => {
    const q = node()
    const desc = await register(q)
    const poll = q.getEvents({ queueId: desc.queueId, userId: ALICE, lastEventId: -1 })
    await waitForHeld(q)
    await harness.store.append(item({ type: 'alert_words', alert_words: ['x'] }))
    t.match(await withTimeout(poll), [{ id: 0, type: 'alert_words', alert_words: ['x'] }])
  })

  t.test('appendMany answers a held long-poll once with the events of every item, in order', async (t) => {
    const appendMany = harness.store.appendMany?.bind(harness.store)
    if (!appendMany) {
      t.pass('this store appends one item at a time')
      return
    }
    const q = node()
    const mine = await register(q)
    const theirs = await register(q, { userId: BOB, userEmail: 'bob@example.com' })
    const poll = q.getEvents({ queueId: mine.queueId, userId: ALICE, lastEventId: -1 })
    await waitForHeld(q)
    await appendMany([
      item({ type: 'alert_words', alert_words: ['one'] }),
      item({ type: 'alert_words', alert_words: ['bob'] }, [BOB]),
      item({ type: 'alert_words', alert_words: ['two'] }, [ALICE, BOB]),
    ])
    t.same(await withTimeout(poll), [
      { id: 0, type: 'alert_words', alert_words: ['one'] },
      { id: 1, type: 'alert_words', alert_words: ['two'] },
    ])
    const bob = await q.getEvents({ queueId: theirs.queueId, userId: BOB, lastEventId: -1, dontBlock: true })
    t.same(bob, [
      { id: 0, type: 'alert_words', alert_words: ['bob'] },
      { id: 1, type: 'alert_words', alert_words: ['two'] },
    ])
  })

  t.test('a poll on another node takes the queue over', async (t) => {
    const a = node()
    const b = node()
    const desc = await register(a)
    const first = a.getEvents({ queueId: desc.queueId, userId: ALICE, lastEventId: -1 })
    await waitForHeld(a)
    const second = b.getEvents({ queueId: desc.queueId, userId: ALICE, lastEventId: -1 })
    t.same(await withTimeout(first), [], 'the superseded poll answers')
    await waitForHeld(b)
    await harness.store.append(item({ type: 'alert_words', alert_words: [] }))
    t.match(await withTimeout(second), [{ id: 0 }])
  })

  t.test('sends a heartbeat on an idle long-poll', async (t) => {
    const q = node({ heartbeatSecs: 1 })
    const desc = await register(q, { eventTypes: ['message'] })
    t.same(await withTimeout(q.getEvents({ queueId: desc.queueId, userId: ALICE, lastEventId: -1 })), [{ type: 'heartbeat', id: 0 }])
  })

  t.test('drops a queue whose backlog exceeds the cap', async (t) => {
    harness.store.setMaxEvents(3)
    const q = node()
    const desc = await register(q)
    for (let i = 0; i < 4; i++) await harness.store.append(item({ type: 'alert_words', alert_words: [] }))
    const error = await errorOf(q.getEvents({ queueId: desc.queueId, userId: ALICE, lastEventId: -1, dontBlock: true }))
    t.equal(error.code, 'BAD_EVENT_QUEUE_ID')
    t.same(error.extra, { queue_id: desc.queueId })
  })

  t.test('a held poll on a queue dropped for its backlog answers BAD_EVENT_QUEUE_ID', async (t) => {
    harness.store.setMaxEvents(1)
    const q = node()
    const desc = await register(q)
    await harness.store.append(item({ type: 'alert_words', alert_words: [] }))
    const poll = errorOf(q.getEvents({ queueId: desc.queueId, userId: ALICE, lastEventId: 0 }))
    await waitForHeld(q)
    // One item that becomes two events (legacy per-message deletion) exceeds the cap at once.
    await harness.store.append(item({ type: 'delete_message', message_ids: [1, 2], message_type: 'private' }))
    t.equal((await withTimeout(poll)).code, 'BAD_EVENT_QUEUE_ID')
  })

  t.test('drops a queue whose unacknowledged bytes exceed the byte cap; acknowledged events no longer count', async (t) => {
    // Each event's JSON is a little over 1,000 bytes: three fit in 3,500, four do not.
    harness.store.setMaxBytes(3500)
    const big = () => item({ type: 'alert_words', alert_words: ['x'.repeat(1000)] })
    const q = node()
    const kept = await register(q)
    for (let i = 0; i < 3; i++) await harness.store.append(big())
    const three = await q.getEvents({ queueId: kept.queueId, userId: ALICE, lastEventId: -1, dontBlock: true })
    t.equal(three.length, 3, 'three events fit')
    // Acknowledging them frees their bytes: three more fit again.
    const last = (three[2] as { id: number }).id
    t.same(await q.getEvents({ queueId: kept.queueId, userId: ALICE, lastEventId: last, dontBlock: true }), [], 'acknowledged')
    for (let i = 0; i < 3; i++) await harness.store.append(big())
    const next = await q.getEvents({ queueId: kept.queueId, userId: ALICE, lastEventId: last, dontBlock: true })
    t.equal(next.length, 3, 'after an acknowledgement, three more fit')
    // A fourth unacknowledged one is past the cap: the queue is dropped.
    await harness.store.append(big())
    const error = await errorOf(q.getEvents({ queueId: kept.queueId, userId: ALICE, lastEventId: last, dontBlock: true }))
    t.equal(error.code, 'BAD_EVENT_QUEUE_ID')
    t.same(error.extra, { queue_id: kept.queueId })
  })

  t.test('a held poll on a queue dropped for its bytes answers BAD_EVENT_QUEUE_ID; small events do not reach the byte cap', async (t) => {
    harness.store.setMaxBytes(3500)
    const q = node()
    const desc = await register(q)
    for (let i = 0; i < 20; i++) await harness.store.append(item({ type: 'alert_words', alert_words: [] }))
    const small = await q.getEvents({ queueId: desc.queueId, userId: ALICE, lastEventId: -1, dontBlock: true })
    t.equal(small.length, 20, 'twenty small events stay under 3,500 bytes')
    const last = (small[19] as { id: number }).id
    const poll = errorOf(q.getEvents({ queueId: desc.queueId, userId: ALICE, lastEventId: last }))
    await waitForHeld(q)
    await harness.store.append(item({ type: 'alert_words', alert_words: ['y'.repeat(4000)] }))
    t.equal((await withTimeout(poll)).code, 'BAD_EVENT_QUEUE_ID')
  })

  t.test("registering past the per-user cap drops the user's oldest queue, and only it", async (t) => {
    harness.store.setMaxQueuesPerUser(3)
    const q = node()
    const descs = []
    for (let i = 0; i < 3; i++) {
      descs.push(await register(q))
      await new Promise((r) => setTimeout(r, 3)) // distinct creation milliseconds: "oldest" is well defined
    }
    const bobs = await register(q, { userId: BOB })
    const [oldest, second] = descs as [Awaited<ReturnType<typeof register>>, Awaited<ReturnType<typeof register>>]
    // A poll held on the oldest queue is answered when it is dropped.
    const held = errorOf(q.getEvents({ queueId: oldest.queueId, userId: ALICE, lastEventId: -1 }))
    await waitForHeld(q)
    descs.push(await register(q))
    const error = await withTimeout(held)
    t.equal(error.code, 'BAD_EVENT_QUEUE_ID')
    t.same(error.extra, { queue_id: oldest.queueId })
    t.equal((await errorOf(q.getEvents({ queueId: oldest.queueId, userId: ALICE, lastEventId: -1, dontBlock: true }))).code, 'BAD_EVENT_QUEUE_ID')
    for (const desc of [...descs.slice(1), bobs]) {
      t.same(await q.getEvents({ queueId: desc.queueId, userId: desc.userId, lastEventId: -1, dontBlock: true }), [], 'newer queues and other users\' stay')
    }
    // The dropped queue gets no more events; the live ones do.
    await harness.store.append(item({ type: 'alert_words', alert_words: ['x'] }))
    t.match(await q.getEvents({ queueId: second.queueId, userId: ALICE, lastEventId: -1, dontBlock: true }), [{ type: 'alert_words', id: 0 }])
    t.equal(await harness.store.describe(oldest.queueId), null)
  })

  t.test('garbage-collects a queue left untouched for its lifespan', async (t) => {
    const q = node()
    const desc = await register(q, { lifespanSecs: 1 })
    const gone = async () => {
      // Another user's id: BAD_EVENT_QUEUE_ID without touching the queue.
      await q.getEvents({ queueId: desc.queueId, userId: -1, lastEventId: -1, dontBlock: true }).catch(() => undefined)
      return (await harness.store.describe(desc.queueId)) === null
    }
    await eventually('garbage collection', gone, { intervalMs: 100 })
    const error = await errorOf(q.getEvents({ queueId: desc.queueId, userId: ALICE, lastEventId: -1, dontBlock: true }))
    t.equal(error.code, 'BAD_EVENT_QUEUE_ID')
  })

  t.test("never serves another user's queue", async (t) => {
    const q = node()
    const desc = await register(q)
    const error = await errorOf(q.getEvents({ queueId: desc.queueId, userId: BOB, lastEventId: -1, dontBlock: true }))
    t.equal(error.code, 'BAD_EVENT_QUEUE_ID')
    t.equal((await errorOf(q.delete(desc.queueId, BOB))).code, 'BAD_EVENT_QUEUE_ID')
  })

  t.test('a held poll on a queue that is then deleted finishes with no events (upstream finishes the handler); the queue is gone after', async (t) => {
    const q = node()
    const desc = await register(q)
    await harness.store.append(item({ type: 'alert_words', alert_words: ['a'] }))
    const poll = q.getEvents({ queueId: desc.queueId, userId: ALICE, lastEventId: 0 })
    await waitForHeld(q)
    t.equal(await harness.store.wasDeleted(desc.queueId), false)
    await q.delete(desc.queueId, ALICE)
    t.same(await withTimeout(poll), [])
    t.equal(await harness.store.wasDeleted(desc.queueId), true)
    t.equal((await errorOf(q.getEvents({ queueId: desc.queueId, userId: ALICE, lastEventId: 0 }))).code, 'BAD_EVENT_QUEUE_ID', 'a poll after the deletion')
    t.equal((await errorOf(q.getEvents({ queueId: desc.queueId, userId: ALICE, lastEventId: 0, dontBlock: true }))).code, 'BAD_EVENT_QUEUE_ID')
  })

  t.test('a poll held through another node finishes with no events when the queue is deleted through this one', async (t) => {
    const a = node()
    const b = node()
    const desc = await register(a)
    const poll = b.getEvents({ queueId: desc.queueId, userId: ALICE, lastEventId: -1 })
    await waitForHeld(b)
    await a.delete(desc.queueId, ALICE)
    t.same(await withTimeout(poll), [])
  })

  t.test('deletes a queue once', async (t) => {
    const q = node()
    const desc = await register(q)
    await q.delete(desc.queueId, ALICE)
    t.equal((await errorOf(q.delete(desc.queueId, ALICE))).code, 'BAD_EVENT_QUEUE_ID')
    await harness.store.append(item({ type: 'alert_words', alert_words: [] }))
    t.equal((await errorOf(q.getEvents({ queueId: desc.queueId, userId: ALICE, lastEventId: -1, dontBlock: true }))).code, 'BAD_EVENT_QUEUE_ID')
  })

  t.test("lists a user's live queues, oldest first, and forgets deleted ones", async (t) => {
    const q = node()
    const first = await register(q, { eventTypes: ['message'] })
    await new Promise((resolve) => setTimeout(resolve, 5))
    const second = await register(q)
    await q.register({ userId: BOB, userEmail: 'bob@example.com', realmId: REALM })
    t.same((await harness.store.queuesOf(ALICE)).map((d) => d.queueId), [first.queueId, second.queueId])
    t.same((await harness.store.queuesOf(ALICE))[0]?.eventTypes, ['message'])
    await q.delete(first.queueId, ALICE)
    t.same((await harness.store.queuesOf(ALICE)).map((d) => d.queueId), [second.queueId])
    t.same(await harness.store.queuesOf(999), [])
  })

  t.test('drain answers held polls and keeps their events for the retry', async (t) => {
    const a = node()
    const b = node()
    const desc = await register(a)
    const poll = a.getEvents({ queueId: desc.queueId, userId: ALICE, lastEventId: -1 })
    await waitForHeld(a)
    a.drain()
    t.same(await withTimeout(poll), [])
    t.same(await a.getEvents({ queueId: desc.queueId, userId: ALICE, lastEventId: -1 }), [], 'a draining node holds no new polls')
    await harness.store.append(item({ type: 'alert_words', alert_words: [] }))
    t.match(await withTimeout(b.getEvents({ queueId: desc.queueId, userId: ALICE, lastEventId: -1 })), [{ id: 0 }])
  })
}

/** Resolves once the node holds a poll and the store knows it (test helper: checks every 5 ms). */
export async function waitForHeld(q: EventQueues, count = 1): Promise<void> {
  await eventually('a held poll', () => q.heldPolls >= count, { intervalMs: 5 })
}
