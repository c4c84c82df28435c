// Redis memory per event queue (one stream per queue), on a
// private redis-server (so no other client's keys move `used_memory`):
// USERS users with QUEUES_PER_USER queues each, then EVENTS events published
// to every user (each reaches all of the user's queues) and left
// unacknowledged, then every queue acknowledges them all. Figures: bytes of
// `used_memory` per queue over the empty server, at each step; and Redis's
// CPU (INFO cpu, user + sys: its scripts and its network I/O) per event
// queued and per acknowledging read (one FETCH per queue).
//   node dist/bench/redis-queue-memory.js
// Env: BENCH_USERS (default 2000). Scenarios: 1 and 3 queues per user; 1 and 10 events.
import { randomUUID } from 'node:crypto'
import { Redis } from 'ioredis'
import { RedisConnection } from '../src/redis-connection.js'
import { RedisQueueStore } from '../src/events/queues/redis-store.js'
import { EventQueues, type QueueDescriptor } from '../src/events/queues/index.js'
import type { ChatEvent } from '../src/events/bus.js'
import { startRedis } from '../test/failure/processes.js'
import { fmt, machine, markdownTable, recordResult, run, table } from './support.js'

const USERS = Number(process.env.BENCH_USERS ?? 2000)

async function usedMemory(redis: Redis): Promise<number> {
  const info = await redis.info('memory')
  return Number(/^used_memory:(\d+)/m.exec(info)?.[1])
}

/** Redis's own CPU so far (INFO cpu, user + sys), µs. */
async function redisCpu(redis: Redis): Promise<{ cpu: number }> {
  const cpu = await redis.info('cpu')
  const field = (name: string) => Number(new RegExp(`^${name}:([\\d.]+)`, 'm').exec(cpu)?.[1])
  return { cpu: (field('used_cpu_user') + field('used_cpu_sys')) * 1e6 }
}

interface Figures {
  /** Redis µs per event delivered to a queue (the appends), CPU and command time. */
  appendCpu: number
  /** Redis µs per acknowledging read of a queue. */
  ackCpu: number
  queues: number
  empty: number
  pending: number
  acked: number
}

async function measure(url: string, perUser: number, events: number): Promise<Figures> {
  const admin = new Redis(url)
  await admin.flushall()
  const before = await usedMemory(admin)
  const connection = await RedisConnection.open({ kind: 'single', url })
  const prefix = `bench:${randomUUID().slice(0, 8)}`
  const store = new RedisQueueStore(connection.client, prefix)
  store.setMaxQueuesPerUser(perUser + 1)
  const node = new EventQueues(store, { nodeId: randomUUID(), heartbeatSecs: 3600, defaultLifespanSecs: 600 })
  const descs: QueueDescriptor[] = []
  const userIds = Array.from({ length: USERS }, (_, i) => i + 1)
  for (let start = 0; start < USERS; start += 100) {
    const batch = userIds.slice(start, start + 100)
    for (let q = 0; q < perUser; q++) descs.push(...(await Promise.all(batch.map((userId) => node.register({ userId, userEmail: `u${userId}@example.com`, realmId: 1, eventTypes: ['message', 'alert_words'] })))))
  }
  const empty = await usedMemory(admin)
  const cpu0 = await redisCpu(admin)
  for (let e = 0; e < events; e++) {
    // A message-sized event, the same for every recipient (as a channel message's is, up to its flags).
    const event: ChatEvent = { type: 'message', message: { id: e + 1, type: 'stream', stream_id: 1, display_recipient: 'general', subject: 'lunch', sender_id: 1, sender_email: 'bob@example.com', content: `<p>message number ${e} with some text in it</p>`, raw_content: `message number ${e} with some text in it` } }
    await store.append({ realmId: 1, userIds, event, perUser: Object.fromEntries(userIds.map((id) => [id, { flags: [] }])), origin: 'bench' })
  }
  const pending = await usedMemory(admin)
  const cpu1 = await redisCpu(admin)
  for (let start = 0; start < descs.length; start += 200) await Promise.all(descs.slice(start, start + 200).map((desc) => store.fetch(desc, events - 1)))
  const acked = await usedMemory(admin)
  const cpu2 = await redisCpu(admin)
  await node.close()
  await store.close()
  await connection.close()
  admin.disconnect()
  const n = descs.length
  const delivered = n * events
  return {
    appendCpu: (cpu1.cpu - cpu0.cpu) / delivered,
    ackCpu: (cpu2.cpu - cpu1.cpu) / n,
    queues: n,
    empty: (empty - before) / n, pending: (pending - before) / n, acked: (acked - before) / n }
}

run(async () => {
  const teardowns: (() => unknown)[] = []
  const redis = await startRedis({ teardown: (fn) => teardowns.push(fn) })
  const rows: string[][] = [
    ['queues per user', 'events', 'queues', 'B/queue, no events', 'B/queue, events pending', 'B/queue, all acknowledged', 'Redis CPU µs per queued event', 'Redis CPU µs per acknowledging read'],
  ]
  const start = machine()
  // Warm-up, not recorded: the first run on a fresh server also pays for the scripts' cache and the allocator's first pages.
  await measure(redis.url, 1, 1)
  for (const perUser of [1, 3]) {
    for (const events of [1, 10]) {
      const f = await measure(redis.url, perUser, events)
      rows.push([String(perUser), String(events), String(f.queues), fmt(f.empty, 0), fmt(f.pending, 0), fmt(f.acked, 0), fmt(f.appendCpu, 1), fmt(f.ackCpu, 1)])
      console.log(table(rows))
    }
  }
  for (const fn of teardowns.reverse()) await fn()
  recordResult(
    'redis-queue-memory',
    `### Redis memory per queue — \`node dist/bench/redis-queue-memory.js\`\n\nRun ${new Date().toISOString()}; ${start}. Private redis-server (${(await import('node:child_process')).spawnSync('redis-server', ['--version'], { encoding: 'utf8' }).stdout.trim().split(' ').slice(0, 3).join(' ')}, default stream-node-max-bytes 4096), \`used_memory\` over the empty server; ${USERS} users; event_types message and alert_words; a ~400-byte message event published to every user.\n\n${markdownTable(rows)}`,
  )
})
