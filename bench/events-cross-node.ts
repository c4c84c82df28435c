// Benchmark (b): cross-node delivery. 100 receivers hold long-polls on node B,
// each on its own queue; node A accepts POST /messages, one every 50 ms.
// Latency = the message event entering the bus on A (reported by A over IPC,
// clock shared by the processes of this machine) → the long-poll response
// written by B (the 'finish' of the response, reported by B over IPC: the
// issue's "publish → response-written"); for reference also → the response
// received and parsed by the receiver (in this process, over loopback HTTP,
// which adds this process's own HTTP and JSON work for 100 responses). Baseline in
// the same run: 100 raw Redis blocked readers (XREAD BLOCK on one stream, one
// ioredis connection each) woken by an XADD every 50 ms, XADD → reply received.
// Targets: p50 ≤ 3×, p99 ≤ 5× the Redis wake-up.
//
//   npm run build && node dist/bench/events-cross-node.js
//
// Nodes A and B are child processes (bench/roost-node.ts: PostgreSQL, Redis bus,
// RATE_LIMITING=off, LOG_LEVEL=warn). The 100 queues belong to one user (the
// owner, who sends the messages), so the database side of a send stays small.
// Env: BENCH_RECEIVERS (default 100), BENCH_MESSAGES (default 100), BENCH_INTERVAL_MS (default 50).
import { randomUUID } from 'node:crypto'
import { Agent, request } from 'node:http'
import { setTimeout as delay } from 'node:timers/promises'
import { Redis } from 'ioredis'
import { api, BENCH_REDIS_URL, clock, clusterEnv, fmt, machine, markdownTable, ownerAuth, percentile, recordResult, run, startChild, table, withTimeout } from './support.js'

const RECEIVERS = Number(process.env.BENCH_RECEIVERS ?? 100)
const MESSAGES = Number(process.env.BENCH_MESSAGES ?? 100)
const INTERVAL = Number(process.env.BENCH_INTERVAL_MS ?? 50)

function get(agent: Agent, port: number, path: string, auth: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, agent, headers: { authorization: auth } }, (res) => {
      let body = ''
      res.setEncoding('utf8')
      res.on('data', (chunk: string) => (body += chunk))
      res.on('end', () => resolve(body))
    })
    req.on('error', reject)
    req.end()
  })
}

interface PolledEvent {
  id: number
  type: string
  message?: { content: string }
}

async function measureRoost(): Promise<{ latencies: number[]; received: number[]; postMs: number[] }> {
  const env = clusterEnv('cross')
  const a = await startChild('roost-node', { ...env, BENCH_REPORT_PUBLISH: '1' })
  const b = await startChild('roost-node', { ...env, BENCH_REPORT_WRITES: '1' })
  const baseA = `http://127.0.0.1:${a.port}`
  const auth = await ownerAuth(baseA)
  await api(baseA, auth, 'POST', '/users/me/subscriptions', { subscriptions: [{ name: 'bench' }] })
  const published = new Map<number, number>()
  a.onMessage((m) => {
    const n = /x(\d+)/.exec(String(m.content))
    if (m.kind === 'publish' && n) published.set(Number(n[1]), m.at as number)
  })
  const queues: string[] = []
  for (let i = 0; i < RECEIVERS; i++) queues.push((await api(`http://127.0.0.1:${b.port}`, auth, 'POST', '/register', { event_types: ['message'], fetch_event_types: [] })).queue_id as string)

  const agent = new Agent({ keepAlive: true, maxSockets: RECEIVERS * 2 })
  const arrivals: Array<{ n: number; at: number }> = []
  let stopping = false
  const receivers = queues.map(async (queueId) => {
    let cursor = -1
    let seen = 0
    while (seen < MESSAGES && !stopping) {
      const body = JSON.parse(await get(agent, b.port, `/api/v1/events?queue_id=${queueId}&last_event_id=${cursor}`, auth)) as { events: PolledEvent[] }
      const at = clock()
      for (const e of body.events) {
        cursor = e.id
        const n = e.type === 'message' ? /x(\d+)/.exec(e.message?.content ?? '') : null
        if (n) {
          arrivals.push({ n: Number(n[1]), at })
          seen++
        }
      }
    }
  })
  while ((await b.ask<{ heldPolls: number }>({ kind: 'stats' })).heldPolls < RECEIVERS) await delay(20)

  const postMs: number[] = []
  const sends: Array<Promise<void>> = []
  for (let i = 0; i < MESSAGES; i++) {
    const start = clock()
    sends.push(api(baseA, auth, 'POST', '/messages', { type: 'stream', to: 'bench', topic: 'latency', content: `x${i}` }).then(() => void postMs.push(clock() - start)))
    await delay(INTERVAL)
  }
  await Promise.all(sends)
  await withTimeout(Promise.all(receivers), 60_000, 'receivers').finally(() => {
    stopping = true
  })
  agent.destroy()
  const writes = await b.ask<Array<[number, number]>>({ kind: 'writes' })
  await a.stop()
  await b.stop()
  const sincePublish = (n: number, at: number) => at - (published.get(n) ?? NaN)
  const latencies = writes.map(([n, at]) => sincePublish(n, at)).filter(Number.isFinite)
  const received = arrivals.map(({ n, at }) => sincePublish(n, at)).filter(Number.isFinite)
  return { latencies, received, postMs }
}

async function measureRedis(): Promise<number[]> {
  const key = `bench:${randomUUID()}:stream`
  const readers = await Promise.all(Array.from({ length: RECEIVERS }, async () => new Redis(BENCH_REDIS_URL)))
  const writer = new Redis(BENCH_REDIS_URL)
  const sentAt = new Map<string, number>()
  const arrivals: Array<{ n: string; at: number }> = []
  let blocked = 0
  const loops = readers.map(async (reader) => {
    let last = '0-0'
    let seen = 0
    while (seen < MESSAGES) {
      blocked++
      const reply = (await reader.xread('BLOCK', 0, 'STREAMS', key, last)) as Array<[string, Array<[string, string[]]>]> | null
      blocked--
      const at = clock()
      for (const [, entries] of reply ?? []) {
        for (const [id, fields] of entries) {
          last = id
          arrivals.push({ n: fields[1] ?? '', at })
          seen++
        }
      }
    }
  })
  while (blocked < RECEIVERS) await delay(20)
  for (let i = 0; i < MESSAGES; i++) {
    sentAt.set(String(i), clock())
    await writer.xadd(key, '*', 'n', String(i))
    await delay(INTERVAL)
  }
  await withTimeout(Promise.all(loops), 60_000, 'redis readers')
  await writer.del(key)
  for (const r of [...readers, writer]) r.disconnect()
  return arrivals.map(({ n, at }) => at - (sentAt.get(n) ?? NaN)).filter(Number.isFinite)
}

run(async () => {
  const before = machine()
  const roost = await measureRoost()
  const redis = await measureRedis()
  const after = machine()
  const r50 = percentile(roost.latencies, 50)
  const r99 = percentile(roost.latencies, 99)
  const b50 = percentile(redis, 50)
  const b99 = percentile(redis, 99)
  const rows = [
    ['', 'samples', 'p50 ms', 'p99 ms', 'max ms'],
    ['Roost: bus publish on A → poll response written on B', String(roost.latencies.length), fmt(r50), fmt(r99), fmt(Math.max(...roost.latencies))],
    ['raw Redis: XADD → XREAD BLOCK reply', String(redis.length), fmt(b50), fmt(b99), fmt(Math.max(...redis))],
    ['ratio Roost/Redis', '', fmt(r50 / b50), fmt(r99 / b99), ''],
    [
      '(for reference) Roost: bus publish on A → response received by the receiver',
      String(roost.received.length),
      fmt(percentile(roost.received, 50)),
      fmt(percentile(roost.received, 99)),
      fmt(Math.max(...roost.received)),
    ],
    ['(for reference) POST /messages on A, whole request', String(roost.postMs.length), fmt(percentile(roost.postMs, 50)), fmt(percentile(roost.postMs, 99)), ''],
  ]
  console.log(`${before}\n${RECEIVERS} receivers, ${MESSAGES} messages, one every ${INTERVAL} ms\n`)
  console.log(table(rows))
  const verdict = [
    `p50 ${fmt(r50 / b50)}× the Redis wake-up (target ≤ 3×): ${r50 / b50 <= 3 ? 'met' : 'MISSED'}`,
    `p99 ${fmt(r99 / b99)}× the Redis wake-up (target ≤ 5×): ${r99 / b99 <= 5 ? 'met' : 'MISSED'}`,
  ]
  console.log(`\n${verdict.join('\n')}`)
  recordResult(
    'events-cross-node',
    [
      `### (b) Cross-node delivery — \`node dist/bench/events-cross-node.js\``,
      '',
      `Run ${new Date().toISOString()}; machine at start: ${before}; at end: load average ${after.split('load average ')[1]}.`,
      `${RECEIVERS} receivers (one queue each, held on node B), ${MESSAGES} messages sent on node A, one every ${INTERVAL} ms. Nodes: child processes, PostgreSQL + Redis bus; receivers and the Redis baseline in the bench process.`,
      '',
      markdownTable(rows),
      '',
      ...verdict.map((v) => `- ${v}`),
    ].join('\n'),
  )
})
