// The EXPERIMENTAL per-user layout (redis-user-store.ts: one stream per user,
// queues as cursors over it) through the same queue-store contract as the
// per-queue store, on one server and on the cluster code path, plus what is
// particular to its layout.
import { randomUUID } from 'node:crypto'
import t from 'tap'
import { Redis } from 'ioredis'
import { RedisConnection } from '../../src/backends/redis-connection.js'
import { RedisUserStreamStore } from '../../src/events/queues/redis-user-store.js'
import { EventQueues } from '../../src/events/queues/index.js'
import { hashSlot } from '../../src/events/queues/slots.js'
import { queueStoreContract } from './queue-store.contract.js'
import { crossSlotCommands } from '../support/cross-slot.js'
import { queueLayout } from '../../src/backends/index.js'

const REDIS_URL = process.env.ROOST_TEST_REDIS_URL || 'redis://127.0.0.1:6379'

async function storeNode(prefix: string, options: { groupBySlot?: boolean } = {}) {
  const connection = await RedisConnection.open({ kind: 'single', url: REDIS_URL })
  const redis = connection.client
  if (!(redis instanceof Redis)) throw new Error('a single server was asked for')
  const queues = new RedisUserStreamStore(redis, prefix, { groupBySlot: options.groupBySlot })
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

t.test('one server', async (t) => {
  queueStoreContract(t, async () => {
    const node = await storeNode(`test:${randomUUID()}`)
    return { store: node.queues, close: () => node.close() }
  })
})

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

t.test("a user's queues share one stream, each event stored once, trimmed to the slowest queue's acknowledgement", async (t) => {
  const prefix = `test:${randomUUID()}`
  const store = await storeNode(prefix)
  const node = new EventQueues(store.queues, { nodeId: randomUUID(), heartbeatSecs: 60, defaultLifespanSecs: 600 })
  t.teardown(async () => {
    await node.close()
    await store.close()
  })
  const one = await node.register({ userId: 1, userEmail: 'a@example.com', realmId: 1 })
  const two = await node.register({ userId: 1, userEmail: 'a@example.com', realmId: 1 })
  const typed = await node.register({ userId: 1, userEmail: 'a@example.com', realmId: 1, eventTypes: ['message'] })
  const stream = `${prefix}:u:{1}:e`
  for (const word of ['a', 'b', 'c']) await store.queues.append({ realmId: 1, userIds: [1], event: { type: 'alert_words', alert_words: [word] }, origin: 'test' })
  const entries = await store.redis.xrange(stream, '-', '+')
  t.equal(entries.length, 3, 'one entry per event, not per queue')
  t.equal(entries[0]?.[1].filter((f) => f.startsWith('{')).length, 1, 'the event JSON once')
  const fetch = (queueId: string, lastEventId: number) => node.getEvents({ queueId, userId: 1, lastEventId, dontBlock: true })
  t.same((await fetch(one.queueId, -1)).map((e) => e.id), [0, 1, 2], "each queue's own IDs")
  t.same(await fetch(typed.queueId, -1), [], 'filtered on write')
  t.match(await fetch(one.queueId, 2), [])
  t.equal((await store.redis.xrange(stream, '-', '+')).length, 3, 'kept while a sibling has not acknowledged')
  t.match(await fetch(two.queueId, 0), [{ id: 1 }, { id: 2 }])
  t.equal((await store.redis.xrange(stream, '-', '+')).length, 2, 'trimmed to the slowest queue')
  await node.delete(two.queueId, 1)
  t.equal(await store.redis.xlen(stream), 0, 'removing the laggard trims the rest (the typed queue never needed them)')
  const keys = [stream, `${prefix}:u:{1}:m`, `${prefix}:u:{1}:p`, `${prefix}:u:{1}:c:${one.queueId}`, `${prefix}:u:{1}:h:${one.queueId}`, `${prefix}:uq:{1}`]
  t.equal(new Set(keys.map(hashSlot)).size, 1, "a user's stream, cursors and index share one slot")
})

t.test('a user with more queues than one stream entry holds gets every event on every queue', async (t) => {
  const store = await storeNode(`test:${randomUUID()}`)
  store.queues.setMaxQueuesPerUser(2_200)
  const node = new EventQueues(store.queues, { nodeId: randomUUID(), heartbeatSecs: 60, defaultLifespanSecs: 600 })
  t.teardown(async () => {
    await node.close()
    await store.close()
  })
  const descs = []
  for (let i = 0; i < 2_100; i += 100) descs.push(...(await Promise.all(Array.from({ length: 100 }, () => node.register({ userId: 1, userEmail: 'a@example.com', realmId: 1 })))))
  await store.queues.append({ realmId: 1, userIds: [1], event: { type: 'alert_words', alert_words: ['x'] }, origin: 'test' })
  t.equal(await store.redis.xlen(`${store.prefix}:u:{1}:e`), 2, 'two entries')
  const first = await node.getEvents({ queueId: descs[0]!.queueId, userId: 1, lastEventId: -1, dontBlock: true })
  const last = await node.getEvents({ queueId: descs.at(-1)!.queueId, userId: 1, lastEventId: -1, dontBlock: true })
  t.match([first, last], [[{ id: 0, alert_words: ['x'] }], [{ id: 0, alert_words: ['x'] }]])
})

t.test('ROOST_QUEUE_LAYOUT chooses the layout: per-queue unless per-user is asked for; anything else names the variable', async (t) => {
  t.equal(queueLayout({}), 'per-queue')
  t.equal(queueLayout({ ROOST_QUEUE_LAYOUT: 'per-user' }), 'per-user')
  t.throws(() => queueLayout({ ROOST_QUEUE_LAYOUT: 'per-stream' }), /ROOST_QUEUE_LAYOUT must be per-queue or per-user/)
})
