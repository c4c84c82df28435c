// Benchmark (a): GET /events?dont_block=true on an empty queue, one node,
// 100 connections (autocannon), against a bare Fastify route doing the same
// Basic-auth parse and answering an empty event list; same run, same machine.
// Targets: req/s ≥ 0.5× bare (issue 16: ≥ 0.7×), p99 ≤ 2× bare.
//
//   npm run build && node dist/bench/events-empty-poll.js
//
// Both servers are child processes (bench/roost-node.ts over PostgreSQL and the
// Redis bus, RATE_LIMITING=off, LOG_LEVEL=warn; bench/bare-node.ts).
// The two are measured in turn, BENCH_ROUNDS times (default 3): the verdict
// takes the median round's ratios, so one noisy run on a shared machine does
// not decide it alone.
// Env: BENCH_DURATION (s, default 10), BENCH_WARMUP (s, default 3), BENCH_CONNECTIONS (default 100), BENCH_ROUNDS (default 3).
import autocannon, { type Result } from 'autocannon'
import { api, clusterEnv, fmt, machine, markdownTable, ownerAuth, percentile, recordResult, run, startChild, table } from './support.js'

const DURATION = Number(process.env.BENCH_DURATION ?? 10)
const WARMUP = Number(process.env.BENCH_WARMUP ?? 3)
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 100)
const ROUNDS = Math.max(1, Number(process.env.BENCH_ROUNDS ?? 3))

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
  const rounds: Array<{ roost: Result; bare: Result; rps: number; p99: number }> = []
  for (let i = 0; i < ROUNDS; i++) {
    const roostResult = await measure(`${base}/api/v1/events?${query}`, { authorization: auth })
    const bareResult = await measure(`http://127.0.0.1:${bare.port}/api/v1/events?${query}`, { authorization: auth })
    rounds.push({ roost: roostResult, bare: bareResult, rps: roostResult.requests.average / bareResult.requests.average, p99: roostResult.latency.p99 / bareResult.latency.p99 })
  }
  const after = machine()
  const rps = percentile(rounds.map((round) => round.rps), 50)
  const p99 = percentile(rounds.map((round) => round.p99), 50)
  const rows = [
    ['', 'req/s', 'p50 ms', 'p99 ms', 'errors+non-2xx'],
    ...rounds.flatMap((round, i) => {
      const label = ROUNDS > 1 ? ` (round ${i + 1})` : ''
      return [
        [`Roost GET /events?dont_block=true${label}`, fmt(round.roost.requests.average, 0), String(round.roost.latency.p50), String(round.roost.latency.p99), String(round.roost.errors + round.roost.non2xx)],
        [`bare Fastify, Basic-auth parse${label}`, fmt(round.bare.requests.average, 0), String(round.bare.latency.p50), String(round.bare.latency.p99), String(round.bare.errors + round.bare.non2xx)],
        [`ratio Roost/bare${label}`, fmt(round.rps), '', fmt(round.p99), ''],
      ]
    }),
    ...(ROUNDS > 1 ? [['ratio Roost/bare, median of the rounds', fmt(rps), '', fmt(p99), '']] : []),
  ]
  console.log(`${before}\n${CONNECTIONS} connections, ${WARMUP} s warm-up, ${DURATION} s measured, ${ROUNDS} round(s)\n`)
  console.log(table(rows))
  const verdict = [
    `req/s ${fmt(rps)}× bare (target ≥ 0.5×): ${rps >= 0.5 ? 'met' : 'MISSED'}`,
    `req/s ${fmt(rps)}× bare (issue 16's target ≥ 0.7×): ${rps >= 0.7 ? 'met' : 'MISSED'}`,
    `p99 ${fmt(p99)}× bare (target ≤ 2×): ${p99 <= 2 ? 'met' : 'MISSED'}`,
  ]
  console.log(`\n${verdict.join('\n')}`)
  recordResult(
    'events-empty-poll',
    [
      `### (a) GET /events?dont_block=true, empty queue — \`node dist/bench/events-empty-poll.js\``,
      '',
      `Run ${new Date().toISOString()}; machine at start: ${before}; at end: load average ${after.split('load average ')[1]}.`,
      `${CONNECTIONS} connections, ${WARMUP} s warm-up, ${DURATION} s measured, Roost then bare in each of ${ROUNDS} round(s); the verdict takes the median round's ratios. Roost: child process, PostgreSQL + Redis bus; bare: child process.`,
      '',
      markdownTable(rows),
      '',
      ...verdict.map((v) => `- ${v}`),
    ].join('\n'),
  )
})
