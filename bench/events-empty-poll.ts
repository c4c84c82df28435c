// Benchmark (a): GET /events?dont_block=true on an empty queue, one node,
// 100 connections (autocannon), against a bare Fastify route doing the same
// Basic-auth parse and answering an empty event list; same run, same machine.
// Targets: req/s ≥ 0.5× bare, p99 ≤ 2× bare.
//
//   npm run build && node dist/bench/events-empty-poll.js
//
// Both servers are child processes (bench/roost-node.ts over PostgreSQL and the
// Redis bus, RATE_LIMITING=off, LOG_LEVEL=warn; bench/bare-node.ts).
// Env: BENCH_DURATION (s, default 10), BENCH_WARMUP (s, default 3), BENCH_CONNECTIONS (default 100).
import autocannon, { type Result } from 'autocannon'
import { api, clusterEnv, fmt, machine, markdownTable, ownerAuth, recordResult, run, startChild, table } from './support.js'

const DURATION = Number(process.env.BENCH_DURATION ?? 10)
const WARMUP = Number(process.env.BENCH_WARMUP ?? 3)
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 100)

async function measure(url: string, headers: Record<string, string>): Promise<Result> {
  if (WARMUP > 0) await autocannon({ url, headers, connections: CONNECTIONS, duration: WARMUP })
  return autocannon({ url, headers, connections: CONNECTIONS, duration: DURATION })
}

run(async () => {
  const roost = await startChild('roost-node', clusterEnv('events'))
  const bare = await startChild('bare-node', {})
  const base = `http://127.0.0.1:${roost.port}`
  const auth = await ownerAuth(base)
  const reg = await api(base, auth, 'POST', '/register', { event_types: ['message'], fetch_event_types: [] })
  const query = `queue_id=${reg.queue_id}&last_event_id=-1&dont_block=true`
  const check = await api(base, auth, 'GET', '/events', { queue_id: reg.queue_id, last_event_id: -1, dont_block: true })
  if ((check.events as unknown[]).length !== 0) throw new Error('the queue is not empty')

  const before = machine()
  const r = await measure(`${base}/api/v1/events?${query}`, { authorization: auth })
  const b = await measure(`http://127.0.0.1:${bare.port}/api/v1/events?${query}`, { authorization: auth })
  const after = machine()
  const rps = r.requests.average / b.requests.average
  const p99 = r.latency.p99 / b.latency.p99
  const rows = [
    ['', 'req/s', 'p50 ms', 'p99 ms', 'errors+non-2xx'],
    ['Roost GET /events?dont_block=true', fmt(r.requests.average, 0), String(r.latency.p50), String(r.latency.p99), String(r.errors + r.non2xx)],
    ['bare Fastify, Basic-auth parse', fmt(b.requests.average, 0), String(b.latency.p50), String(b.latency.p99), String(b.errors + b.non2xx)],
    ['ratio Roost/bare', fmt(rps), '', fmt(p99), ''],
  ]
  console.log(`${before}\n${CONNECTIONS} connections, ${WARMUP} s warm-up, ${DURATION} s measured\n`)
  console.log(table(rows))
  const verdict = [
    `req/s ${fmt(rps)}× bare (target ≥ 0.5×): ${rps >= 0.5 ? 'met' : 'MISSED'}`,
    `p99 ${fmt(p99)}× bare (target ≤ 2×): ${p99 <= 2 ? 'met' : 'MISSED'}`,
  ]
  console.log(`\n${verdict.join('\n')}`)
  recordResult(
    'events-empty-poll',
    [
      `### (a) GET /events?dont_block=true, empty queue — \`node dist/bench/events-empty-poll.js\``,
      '',
      `Run ${new Date().toISOString()}; machine at start: ${before}; at end: load average ${after.split('load average ')[1]}.`,
      `${CONNECTIONS} connections, ${WARMUP} s warm-up, ${DURATION} s measured. Roost: child process, PostgreSQL + Redis bus; bare: child process.`,
      '',
      markdownTable(rows),
      '',
      ...verdict.map((v) => `- ${v}`),
    ].join('\n'),
  )
})
