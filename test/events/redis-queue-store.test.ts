import { randomUUID } from 'node:crypto'
import t, { type Test } from 'tap'
import { Redis } from 'ioredis'
import { RedisConnection } from '../../src/redis-connection.js'
import { RedisQueueStore } from '../../src/events/queues/redis-store.js'
import { EventQueues } from '../../src/events/queues/index.js'
import type { QueueDescriptor, QueuedEvent } from '../../src/events/queues/index.js'
import { ApiError } from '../../src/errors.js'
import { ACK, FETCH, PARK, PARK_ACK, TOUCH } from '../../src/events/queues/lua.js'
import { hashSlot } from '../../src/events/queues/slots.js'
import { queueStoreContract, waitForHeld, withTimeout } from './queue-store.contract.js'
import { crossSlotCommands } from '../support/cross-slot.js'
import { eventually } from '../support/eventually.js'

const REDIS_URL = process.env.ROOST_TEST_REDIS_URL || 'redis://127.0.0.1:6379'

/** One node's store over a connection of its own (the store alone: no bus). */
async function storeNode(prefix: string, options: { groupBySlot?: boolean } = {}) {
  const connection = await RedisConnection.open({ kind: 'single', url: REDIS_URL })
  const redis = connection.client
  if (!(redis instanceof Redis)) throw new Error('a single server was asked for')
  const queues = new RedisQueueStore(redis, prefix, { groupBySlot: options.groupBySlot })
  return {
    redis,
    queues,
    prefix,
    async close() {
      await queues.close()
      await connection.close()
    },
  }
}

// Each run of the contract in its own subtest: its hooks apply to every descendant test.
t.test('one server', async (t) => {
  queueStoreContract(t, async () => {
    const node = await storeNode(`test:${randomUUID()}`)
    return { store: node.queues, close: () => node.close(), answersFromMemory: true }
  })
})

// The code path of a Redis Cluster (work split per hash slot), on one server;
// a command naming keys of two slots fails the test that sent it.
t.test('grouped by cluster slot', async (t) => {
  queueStoreContract(t, async () => {
    const node = await storeNode(`test:${randomUUID()}`, { groupBySlot: true })
    const crossSlot = crossSlotCommands(node.redis)
    return {
      store: node.queues,
      close: async () => {
        await node.close()
        if (crossSlot.length > 0) throw new Error(`commands across slots: ${crossSlot.slice(0, 5).join('; ')}`)
      },
    }
  })
})

t.test("a queue's events are a stream with entry IDs <event id>-1, trimmed as they are acknowledged", async (t) => {
  const prefix = `test:${randomUUID()}`
  const store = await storeNode(prefix)
  const node = new EventQueues(store.queues, { nodeId: randomUUID(), heartbeatSecs: 60, defaultLifespanSecs: 600 })
  t.teardown(async () => {
    await node.close()
    await store.close()
  })
  const desc = await node.register({ userId: 1, userEmail: 'a@example.com', realmId: 1 })
  const stream = `${prefix}:q:{${desc.queueId}}:e`
  for (const word of ['a', 'b', 'c']) await store.queues.append({ realmId: 1, userIds: [1], event: { type: 'alert_words', alert_words: [word] }, origin: 'test' })
  const entries = await store.redis.xrange(stream, '-', '+')
  t.same(entries.map(([id]) => id), ['0-1', '1-1', '2-1'])
  t.same(JSON.parse(entries[0]?.[1][1] ?? ''), { type: 'alert_words', alert_words: ['a'] }, 'the event, its ID in the entry ID')
  t.match(await node.getEvents({ queueId: desc.queueId, userId: 1, lastEventId: 1, dontBlock: true }), [{ id: 2, alert_words: ['c'] }])
  t.same((await store.redis.xrange(stream, '-', '+')).map(([id]) => id), ['2-1'], 'acknowledged entries trimmed')
  const bytes = Buffer.byteLength(JSON.stringify({ type: 'alert_words', alert_words: ['a'] }))
  t.same(
    await store.redis.hgetall(`${prefix}:q:{${desc.queueId}}:m`),
    { last: '2', pruned: '1', total: String(3 * bytes), acked: String(2 * bytes) },
    'the cursor beside it, with the bytes appended and acknowledged',
  )
  t.equal(entries[2]?.[1][3], String(3 * bytes), "each entry carries the queue's byte total after it")
  const pttl = await store.redis.pttl(stream)
  t.ok(pttl > 500_000 && pttl <= 610_000, 'the stream carries the queue’s TTL (its lifespan and the 10 s refresh slack)')
  const keys = ['', ':m', ':e', ':h', ':w', ':s'].map((part) => `${prefix}:q:{${desc.queueId}}${part}`)
  t.equal(new Set(keys.map(hashSlot)).size, 1, "all of a queue's keys share one slot")
})

// Two nodes, each with its own connections, sharing one Redis prefix.
async function twoNodes(t: Test) {
  const prefix = `test:${randomUUID()}`
  const a = await storeNode(prefix)
  const b = await storeNode(prefix)
  const nodeA = new EventQueues(a.queues, { nodeId: randomUUID(), heartbeatSecs: 60, defaultLifespanSecs: 600 })
  t.teardown(async () => {
    await nodeA.close()
    await a.close()
    await b.close()
  })
  return { a, b, nodeA, prefix }
}

/** Counts the calls of the FETCH script (reads of a queue) made on a connection. */
function countFetches(redis: Redis): () => number {
  const calls = countScripts(redis)
  return () => calls().fetch
}

/** Counts the calls of each queue script a poll may make, on a connection. */
function countScripts(redis: Redis): () => Record<'fetch' | 'ack' | 'park' | 'parkAck' | 'touch', number> {
  const calls = { fetch: 0, ack: 0, park: 0, parkAck: 0, touch: 0 }
  const scripts = { fetch: FETCH.shas, ack: ACK.shas, park: PARK.shas, parkAck: PARK_ACK.shas, touch: [TOUCH.sha] }
  const original = redis.evalsha.bind(redis)
  Object.assign(redis, {
    evalsha: (...args: Parameters<typeof original>) => {
      for (const [name, shas] of Object.entries(scripts)) if (shas.includes(String(args[0]))) calls[name as keyof typeof calls]++
      return original(...args)
    },
  })
  return () => ({ ...calls })
}

/** Retries a non-blocking fetch until `done` accepts its outcome (the other node's wake-up travels through Redis). */
async function pollUntil(q: EventQueues, queueId: string, done: (outcome: QueuedEvent[] | ApiError) => boolean, userId = 1): Promise<QueuedEvent[] | ApiError> {
  const fetch = () =>
    q.getEvents({ queueId, userId, lastEventId: -1, dontBlock: true }).catch((error: unknown) => {
      if (error instanceof ApiError) return error
      throw error
    })
  return eventually('the wake-up from the other node', fetch, { timeoutMs: 5_000, intervalMs: 5, until: done, rethrow: true })
}

t.test('a node answers a poll with nothing new from memory and still sees what another node appends', async (t) => {
  const { a, b, nodeA } = await twoNodes(t)
  const desc = await nodeA.register({ userId: 1, userEmail: 'a@example.com', realmId: 1 })
  const poll = () => nodeA.getEvents({ queueId: desc.queueId, userId: 1, lastEventId: -1, dontBlock: true })
  t.same(await poll(), [])
  const scripts = countFetches(a.redis)
  t.same(await poll(), [])
  t.same(await poll(), [])
  t.equal(scripts(), 0, 'no round trip to Redis')
  await b.queues.append({ realmId: 1, userIds: [1], event: { type: 'alert_words', alert_words: ['x'] }, origin: 'b' })
  t.match(await pollUntil(nodeA, desc.queueId, (o) => Array.isArray(o) && o.length > 0), [{ id: 0, type: 'alert_words' }])
})

t.test('an append through the same store is seen by the very next poll', async (t) => {
  const { a, nodeA } = await twoNodes(t)
  const desc = await nodeA.register({ userId: 1, userEmail: 'a@example.com', realmId: 1 })
  t.same(await nodeA.getEvents({ queueId: desc.queueId, userId: 1, lastEventId: -1, dontBlock: true }), [])
  await a.queues.append({ realmId: 1, userIds: [1], event: { type: 'alert_words', alert_words: ['x'] }, origin: 'a' })
  t.match(await nodeA.getEvents({ queueId: desc.queueId, userId: 1, lastEventId: -1, dontBlock: true }), [{ id: 0 }])
})

t.test('a queue deleted on another node stops being answered from memory', async (t) => {
  const { b, nodeA } = await twoNodes(t)
  const desc = await nodeA.register({ userId: 1, userEmail: 'a@example.com', realmId: 1 })
  t.same(await nodeA.getEvents({ queueId: desc.queueId, userId: 1, lastEventId: -1, dontBlock: true }), [])
  t.ok(await b.queues.remove(desc))
  const outcome = await pollUntil(nodeA, desc.queueId, (o) => o instanceof ApiError)
  t.equal((outcome as ApiError).code, 'BAD_EVENT_QUEUE_ID')
})

t.test('polls answered from memory still refresh the queue’s life, in one batch, once the refresh slack has passed', async (t) => {
  const { a, nodeA, prefix } = await twoNodes(t)
  // A 10 s lifespan: its refresh slack is a tenth of it, 1 s, and a refresh gives it 11 s.
  const desc = await nodeA.register({ userId: 1, userEmail: 'a@example.com', realmId: 1, lifespanSecs: 10 })
  // The default 600 s lifespan: a slack of 10 s (refreshes give 610 s).
  const long = await nodeA.register({ userId: 2, userEmail: 'b@example.com', realmId: 1 })
  const descKey = (queueId: string) => `${prefix}:q:{${queueId}}`
  for (const { queueId, userId } of [desc, long]) {
    t.same(await nodeA.getEvents({ queueId, userId, lastEventId: -1, dontBlock: true }), [])
    await a.redis.pexpire(descKey(queueId), 5_000)
  }
  // Within the slack of the read that refreshed the queue a poll owes it no touch; past it, it does.
  t.same(await nodeA.getEvents({ queueId: desc.queueId, userId: 1, lastEventId: -1, dontBlock: true }), [])
  await a.queues.flushTouches()
  t.ok((await a.redis.pttl(descKey(desc.queueId))) <= 5_000, 'no touch right after the read')
  await new Promise((resolve) => setTimeout(resolve, 1_100))
  for (const { queueId, userId } of [desc, long]) t.same(await nodeA.getEvents({ queueId, userId, lastEventId: -1, dontBlock: true }), [])
  t.ok((await a.redis.pttl(descKey(desc.queueId))) <= 5_000, 'not touched yet')
  await a.queues.flushTouches()
  t.ok((await a.redis.pttl(descKey(desc.queueId))) > 10_000, 'touched: the whole lifespan and the slack again')
  t.ok((await a.redis.pttl(descKey(long.queueId))) <= 5_000, 'a 600 s queue read 1.1 s after its refresh is within its 10 s slack: not touched')
})

t.test('when its subscription drops, a node forgets what it knew and its held polls read again', async (t) => {
  const { a, b, nodeA, prefix } = await twoNodes(t)
  const desc = await nodeA.register({ userId: 1, userEmail: 'a@example.com', realmId: 1 })
  t.same(await nodeA.getEvents({ queueId: desc.queueId, userId: 1, lastEventId: -1, dontBlock: true }), [])
  const poll = nodeA.getEvents({ queueId: desc.queueId, userId: 1, lastEventId: -1 })
  await waitForHeld(nodeA)
  // Cut node A's subscriber connection; an event appended meanwhile sends its wake-up to nobody.
  const clients = String(await a.redis.call('CLIENT', 'LIST', 'TYPE', 'pubsub'))
  const line = clients.split('\n').find((l) => l.includes(`name=${prefix}:subscriber`))
  const id = line?.match(/\bid=(\d+)/)?.[1]
  t.ok(id, 'found the subscriber connection')
  await a.redis.call('CLIENT', 'KILL', 'ID', String(id))
  await b.queues.append({ realmId: 1, userIds: [1], event: { type: 'alert_words', alert_words: ['x'] }, origin: 'b' })
  t.match(await withTimeout(poll, 10_000, 'the held poll after the reconnection'), [{ id: 0, type: 'alert_words' }])
  // Signals flow again: a later append reaches the node.
  await b.queues.append({ realmId: 1, userIds: [1], event: { type: 'alert_words', alert_words: ['y'] }, origin: 'b' })
  const later = withTimeout(nodeA.getEvents({ queueId: desc.queueId, userId: 1, lastEventId: 0 }), 10_000, 'a poll after the reconnection')
  t.match(await later, [{ id: 1, alert_words: ['y'] }])
})

t.test('a woken poll is answered from the events its wake-up carried, with no read from Redis', async (t) => {
  const { a, b, nodeA } = await twoNodes(t)
  const desc = await nodeA.register({ userId: 1, userEmail: 'a@example.com', realmId: 1 })
  t.same(await nodeA.getEvents({ queueId: desc.queueId, userId: 1, lastEventId: -1, dontBlock: true }), [])
  const poll = nodeA.getEvents({ queueId: desc.queueId, userId: 1, lastEventId: -1 })
  await waitForHeld(nodeA)
  const scripts = countFetches(a.redis)
  await b.queues.append({ realmId: 1, userIds: [1], event: { type: 'alert_words', alert_words: ['x'] }, origin: 'b' })
  t.same(await withTimeout(poll), [{ id: 0, type: 'alert_words', alert_words: ['x'] }])
  t.equal(scripts(), 0, 'no read of the queue')
  // The acknowledgement is kept in memory and reaches Redis with the next touch batch.
  t.same(await nodeA.getEvents({ queueId: desc.queueId, userId: 1, lastEventId: 0, dontBlock: true }), [])
  await a.queues.flushTouches()
  const error = await nodeA.getEvents({ queueId: desc.queueId, userId: 1, lastEventId: -1, dontBlock: true }).catch((e: unknown) => e)
  t.match(error, { code: 'BAD_REQUEST', msg: 'An event newer than -1 has already been pruned!' })
})

t.test('one wake-up carries each event variant once; every woken queue gets its own, with its own IDs', async (t) => {
  const { a, b, nodeA } = await twoNodes(t)
  const users = [1, 2, 3]
  const descs = await Promise.all(users.map((userId) => nodeA.register({ userId, userEmail: `u${userId}@example.com`, realmId: 1 })))
  // User 1's queue already holds an event, so its IDs differ from the others'.
  await b.queues.append({ realmId: 1, userIds: [1], event: { type: 'alert_words', alert_words: ['x'] }, origin: 'b' })
  const polls = descs.map((desc) => (desc.userId === 1 ? nodeA.getEvents({ queueId: desc.queueId, userId: 1, lastEventId: 0 }) : nodeA.getEvents({ queueId: desc.queueId, userId: desc.userId, lastEventId: -1 })))
  await waitForHeld(nodeA, 3)
  const published: string[] = []
  const subscriber = a.redis.duplicate()
  t.teardown(() => subscriber.disconnect())
  await subscriber.psubscribe(`${b.prefix}:node:*`)
  subscriber.on('pmessage', (_pattern: string, _channel: string, message: string) => published.push(message))
  const scripts = countFetches(a.redis)
  const message = { id: 5, type: 'stream', content: 'hi', raw_content: 'hi' }
  const unread = { flags: [] }
  await b.queues.append({ realmId: 1, userIds: users, event: { type: 'message', message }, perUser: { 1: { flags: ['read'] }, 2: unread, 3: unread }, origin: 'b' })
  const answers = await withTimeout(Promise.all(polls))
  // These queues did not ask for rendered content: they get the Markdown source.
  const delivered = { id: 5, type: 'stream', content: 'hi', content_type: 'text/x-markdown' }
  t.same(answers, [
    [{ id: 1, type: 'message', message: delivered, flags: ['read'] }],
    [{ id: 0, type: 'message', message: delivered, flags: [] }],
    [{ id: 0, type: 'message', message: delivered, flags: [] }],
  ])
  t.equal(scripts(), 0, 'no read of the queues')
  const wake = await eventually('the wake-up published', () => published.find((m) => m.includes('"message"')), { timeoutMs: 5_000 }).catch(() => undefined)
  t.ok(wake, 'the wake-up was published')
  t.equal(wake?.match(/"message":/g)?.length, 2, 'two variants (read by user 1, unread by the others), each sent once')
})

t.test('the marks of polls answered together are cleared together; a mark a newer poll took over stays', async (t) => {
  const { a, b, nodeA, prefix } = await twoNodes(t)
  const nodeB = new EventQueues(b.queues, { nodeId: randomUUID(), heartbeatSecs: 60, defaultLifespanSecs: 600 })
  t.teardown(() => nodeB.close())
  const [one, two] = await Promise.all([1, 2].map(() => nodeA.register({ userId: 1, userEmail: 'a@example.com', realmId: 1 })))
  if (!one || !two) throw new Error('no queues')
  const holderKey = (queueId: string) => `${prefix}:q:{${queueId}}:h`
  const polls = [one, two].map((desc) => nodeA.getEvents({ queueId: desc.queueId, userId: 1, lastEventId: -1 }))
  await waitForHeld(nodeA, 2)
  t.ok(await a.redis.get(holderKey(one.queueId)), 'held polls are marked')
  await b.queues.append({ realmId: 1, userIds: [1], event: { type: 'alert_words', alert_words: ['x'] }, origin: 'b' })
  t.same((await withTimeout(Promise.all(polls))).map((events) => events.length), [1, 1])
  await eventually('both marks cleared', async () => (await a.redis.exists(holderKey(one.queueId), holderKey(two.queueId))) === 0, { timeoutMs: 5_000, intervalMs: 5 })
  t.pass('both marks cleared')

  // A poll on node B takes queue one over while node A still holds it: A's poll is answered, B's mark stays.
  const held = nodeA.getEvents({ queueId: one.queueId, userId: 1, lastEventId: 0 })
  await waitForHeld(nodeA, 1)
  const takeover = nodeB.getEvents({ queueId: one.queueId, userId: 1, lastEventId: 0 })
  await waitForHeld(nodeB, 1)
  t.same(await withTimeout(held), [], 'the older poll is answered')
  await new Promise((r) => setTimeout(r, 50))
  t.match(await a.redis.get(holderKey(one.queueId)), /\|/, 'the newer poll’s mark stays')
  await b.queues.append({ realmId: 1, userIds: [1], event: { type: 'alert_words', alert_words: ['y'] }, origin: 'b' })
  t.same((await withTimeout(takeover)).map((e) => e.alert_words), [['y']])
})

t.test('a poll that acknowledges what it was answered and then waits makes one call to Redis for both', async (t) => {
  const { a, b, nodeA, prefix } = await twoNodes(t)
  const desc = await nodeA.register({ userId: 1, userEmail: 'a@example.com', realmId: 1 })
  t.same(await nodeA.getEvents({ queueId: desc.queueId, userId: 1, lastEventId: -1, dontBlock: true }), [])
  await b.queues.append({ realmId: 1, userIds: [1], event: { type: 'alert_words', alert_words: ['x'] }, origin: 'b' })
  t.match(await pollUntil(nodeA, desc.queueId, (o) => Array.isArray(o) && o.length > 0), [{ id: 0 }])
  const scripts = countScripts(a.redis)
  const held = nodeA.getEvents({ queueId: desc.queueId, userId: 1, lastEventId: 0 })
  await waitForHeld(nodeA)
  t.same(scripts(), { fetch: 0, ack: 0, park: 0, parkAck: 1, touch: 0 }, 'acknowledged and parked in one call, no read and no touch')
  const bytes = Buffer.byteLength(JSON.stringify({ type: 'alert_words', alert_words: ['x'] }))
  t.same(await a.redis.hgetall(`${prefix}:q:{${desc.queueId}}:m`), { last: '0', pruned: '0', total: String(bytes), acked: String(bytes) }, 'acknowledged in Redis')
  t.equal(await a.redis.xlen(`${prefix}:q:{${desc.queueId}}:e`), 0, 'the acknowledged event trimmed')
  t.match(await a.redis.get(`${prefix}:q:{${desc.queueId}}:h`), /\|/, 'the poll is marked as held')
  await b.queues.append({ realmId: 1, userIds: [1], event: { type: 'alert_words', alert_words: ['y'] }, origin: 'b' })
  t.same(await withTimeout(held), [{ id: 1, type: 'alert_words', alert_words: ['y'] }])
  // A non-blocking poll owing an acknowledgement still makes it (ACK, no park).
  // (The answered poll's release goes with the next batch of marks, a PARK_ACK call of its own here.)
  t.same(await nodeA.getEvents({ queueId: desc.queueId, userId: 1, lastEventId: 1, dontBlock: true }), [])
  t.match(scripts(), { fetch: 0, ack: 1, park: 0, touch: 0 })
  t.same(await a.redis.hgetall(`${prefix}:q:{${desc.queueId}}:m`), { last: '1', pruned: '1', total: String(2 * bytes), acked: String(2 * bytes) })
})

t.test('the polls of one turn that acknowledge and wait park in one call; a life refreshed within the refresh slack is left as it is', async (t) => {
  const { a, b, nodeA, prefix } = await twoNodes(t)
  const users = [1, 2, 3]
  const descs = await Promise.all(users.map((userId) => nodeA.register({ userId, userEmail: `u${userId}@example.com`, realmId: 1 })))
  for (const desc of descs) t.same(await nodeA.getEvents({ queueId: desc.queueId, userId: desc.userId, lastEventId: -1, dontBlock: true }), [])
  await b.queues.append({ realmId: 1, userIds: users, event: { type: 'alert_words', alert_words: ['x'] }, origin: 'b' })
  for (const desc of descs) await pollUntil(nodeA, desc.queueId, (o) => Array.isArray(o) && o.length > 0, desc.userId)
  const descKey = (queueId: string) => `${prefix}:q:{${queueId}}`
  const [fresh, old, third] = descs as [QueueDescriptor, QueueDescriptor, QueueDescriptor]
  // A refresh gives a 600 s queue 610 s (its lifespan and a 10 s slack). One queue's life
  // was refreshed half a second ago, another's long ago (5 s left).
  const life = 610_000
  await a.redis.pexpire(descKey(fresh.queueId), life - 500)
  await a.redis.pexpire(descKey(old.queueId), 5_000)
  await a.redis.pexpire(`${descKey(old.queueId)}:m`, 5_000)
  const scripts = countScripts(a.redis)
  const held = descs.map((desc) => nodeA.getEvents({ queueId: desc.queueId, userId: desc.userId, lastEventId: 0 }))
  await waitForHeld(nodeA, 3)
  t.same(scripts(), { fetch: 0, ack: 0, park: 0, parkAck: 1, touch: 0 }, 'three acknowledgements and parks, one call')
  for (const desc of descs) {
    t.match(await a.redis.hgetall(`${descKey(desc.queueId)}:m`), { last: '0', pruned: '0' }, 'acknowledged in Redis')
    t.match(await a.redis.get(`${descKey(desc.queueId)}:h`), /\|/, 'marked as held')
  }
  const freshLeft = await a.redis.pttl(descKey(fresh.queueId))
  t.ok(freshLeft <= life - 500, 'a life refreshed within the slack is not refreshed again')
  t.ok(freshLeft >= 600_000, 'and the queue still outlives the poll by its whole lifespan')
  t.ok((await a.redis.pttl(`${descKey(fresh.queueId)}:h`)) <= life - 500, 'and the mark does not outlive the queue')
  t.ok((await a.redis.pttl(descKey(old.queueId))) > 600_000, 'an older life is refreshed, to more than the lifespan')
  t.ok((await a.redis.pttl(`${descKey(old.queueId)}:m`)) > 600_000, 'with the queue’s other keys')
  t.ok((await a.redis.pttl(descKey(third.queueId))) > 600_000)
  await b.queues.append({ realmId: 1, userIds: users, event: { type: 'alert_words', alert_words: ['y'] }, origin: 'b' })
  for (const poll of held) t.same(await withTimeout(poll), [{ id: 1, type: 'alert_words', alert_words: ['y'] }])
})

t.test('a release and a park of the same turn share one call; the release clears only the mark its poll still holds', async (t) => {
  const { a, b, nodeA, prefix } = await twoNodes(t)
  const [one, two] = (await Promise.all([1, 2].map((userId) => nodeA.register({ userId, userEmail: `u${userId}@example.com`, realmId: 1 })))) as [QueueDescriptor, QueueDescriptor]
  for (const desc of [one, two]) t.same(await nodeA.getEvents({ queueId: desc.queueId, userId: desc.userId, lastEventId: -1, dontBlock: true }), [])
  const holderKey = (queueId: string) => `${prefix}:q:{${queueId}}:h`
  // Queue one's poll is held; queue two has an event to acknowledge.
  const first = nodeA.getEvents({ queueId: one.queueId, userId: 1, lastEventId: -1 })
  await waitForHeld(nodeA, 1)
  await b.queues.append({ realmId: 1, userIds: [2], event: { type: 'alert_words', alert_words: ['x'] }, origin: 'b' })
  await pollUntil(nodeA, two.queueId, (o) => Array.isArray(o) && o.length > 0, 2)
  const scripts = countScripts(a.redis)
  // Queue one's poll is answered (its mark released) in the same turn as queue two's poll parks.
  await b.queues.append({ realmId: 1, userIds: [1], event: { type: 'alert_words', alert_words: ['y'] }, origin: 'b' })
  t.match(await withTimeout(first), [{ id: 0 }])
  const second = nodeA.getEvents({ queueId: two.queueId, userId: 2, lastEventId: 0 })
  await waitForHeld(nodeA, 1)
  t.same(scripts(), { fetch: 0, ack: 0, park: 0, parkAck: 1, touch: 0 }, 'the release and the park in one call')
  t.equal(await a.redis.exists(holderKey(one.queueId)), 0, 'the answered poll’s mark is cleared')
  t.match(await a.redis.get(holderKey(two.queueId)), /\|/, 'the waiting poll is marked')
  // A release whose mark a newer poll took over leaves that mark alone.
  const third = nodeA.getEvents({ queueId: one.queueId, userId: 1, lastEventId: 0 })
  await waitForHeld(nodeA, 2)
  const mark = await a.redis.get(holderKey(one.queueId))
  await a.queues.unpark([{ desc: one, holder: { nodeId: 'another', token: 'older' } }])
  t.equal(await a.redis.get(holderKey(one.queueId)), mark, 'a newer poll’s mark stays')
  await b.queues.append({ realmId: 1, userIds: [1, 2], event: { type: 'alert_words', alert_words: ['z'] }, origin: 'b' })
  t.match(await withTimeout(third), [{ id: 1 }])
  t.match(await withTimeout(second), [{ id: 1 }])
})

t.test('a poll whose acknowledgement the queue has moved past parks nothing and answers as a read of the queue', async (t) => {
  const { a, nodeA, prefix } = await twoNodes(t)
  const desc = await nodeA.register({ userId: 1, userEmail: 'a@example.com', realmId: 1 })
  for (const word of ['a', 'b', 'c']) await a.queues.append({ realmId: 1, userIds: [1], event: { type: 'alert_words', alert_words: [word] }, origin: 'a' })
  t.equal((await nodeA.getEvents({ queueId: desc.queueId, userId: 1, lastEventId: -1, dontBlock: true })).length, 3)
  // Another node appended and acknowledged event 3, and this node missed both messages.
  await a.redis.hset(`${prefix}:q:{${desc.queueId}}:m`, 'last', 3, 'pruned', 3)
  await a.redis.xtrim(`${prefix}:q:{${desc.queueId}}:e`, 'MINID', '4')
  const scripts = countScripts(a.redis)
  const error = await withTimeout(nodeA.getEvents({ queueId: desc.queueId, userId: 1, lastEventId: 2 }).catch((e: unknown) => e))
  t.match(error, { code: 'BAD_REQUEST', msg: 'An event newer than 2 has already been pruned!' })
  t.match(scripts(), { parkAck: 1, fetch: 1, park: 0 }, 'tried to acknowledge and park, then read the queue')
  t.equal(await a.redis.exists(`${prefix}:q:{${desc.queueId}}:h`), 0, 'nothing parked')
  t.equal(nodeA.heldPolls, 0)
})
