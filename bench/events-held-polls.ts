// Benchmark (d): held long-polls on one node, each on its own registered
// queue. Resident memory per held poll against bare Fastify holding the same
// number of idle requests (target ≤ 3×), and the time to release them all by
// one broadcast — one POST /messages that every queue receives — against the
// bare server answering all its held requests on one POST /release (target ≤ 3×).
// Release time: trigger sent → last response received, in this process.
//
//   npm run build && node dist/bench/events-held-polls.js
//
// Both servers are child processes run with --expose-gc (RSS is read after a
// full GC, over IPC; bench/roost-node.ts: PostgreSQL, Redis bus,
// RATE_LIMITING=off, LOG_LEVEL=warn; bench/bare-node.ts). RSS before is read
// after every queue is registered and before any poll is held, so the figure
// is the cost of holding, not of the queue. The queues belong to one user (the
// owner, who sends the broadcast).
// Env: BENCH_POLLS (default 10000, the figure; about a minute here).
import { Agent, request } from 'node:http'
import { setTimeout as delay } from 'node:timers/promises'
import { api, type Child, clock, clusterEnv, fmt, machine, markdownTable, ownerAuth, recordResult, run, startChild, table, withTimeout } from './support.js'

const POLLS = Number(process.env.BENCH_POLLS ?? 10000)

function get(agent: Agent, port: number, path: string, auth: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, agent, headers: { authorization: auth } }, (res) => {
      res.resume()
      res.on('end', () => resolve(clock()))
    })
    req.on('error', reject)
    req.end()
  })
}

interface Stats {
  rss: number
  live: number
  heldPolls: number
}

async function hold(child: Child, paths: string[], auth: string, trigger: () => Promise<unknown>): Promise<{ perPoll: number; livePerPoll: number; releaseMs: number; before: Stats; held: Stats }> {
  const agent = new Agent({ keepAlive: true, maxSockets: Infinity })
  await delay(500)
  const before = await child.ask<Stats>({ kind: 'stats' })
  const responses = paths.map((p) => get(agent, child.port, p, auth))
  await withTimeout(
    (async () => {
      while ((await child.ask<Stats>({ kind: 'stats' })).heldPolls < paths.length) await delay(50)
    })(),
    600_000,
    'holding every poll',
  )
  await delay(500)
  const held = await child.ask<Stats>({ kind: 'stats' })
  const start = clock()
  await trigger()
  const ends = await withTimeout(Promise.all(responses), 600_000, 'release')
  agent.destroy()
  return { perPoll: (held.rss - before.rss) / paths.length, livePerPoll: (held.live - before.live) / paths.length, releaseMs: Math.max(...ends) - start, before, held }
}

run(async () => {
  const startMachine = machine()
  const roost = await startChild('roost-node', { ...clusterEnv('held'), HEARTBEAT_INTERVAL_SECONDS: '3600' }, ['--expose-gc'])
  const base = `http://127.0.0.1:${roost.port}`
  const auth = await ownerAuth(base)
  await api(base, auth, 'POST', '/users/me/subscriptions', { subscriptions: [{ name: 'broadcast' }] })
  const paths: string[] = []
  for (let i = 0; i < POLLS; i += 50) {
    const batch = await Promise.all(
      Array.from({ length: Math.min(50, POLLS - i) }, () => api(base, auth, 'POST', '/register', { event_types: ['message'], fetch_event_types: [] })),
    )
    for (const reg of batch) paths.push(`/api/v1/events?queue_id=${reg.queue_id}&last_event_id=-1`)
  }
  const r = await hold(roost, paths, auth, () => api(base, auth, 'POST', '/messages', { type: 'stream', to: 'broadcast', topic: 'wake', content: 'everyone' }))
  await roost.stop()

  const bare = await startChild('bare-node', {}, ['--expose-gc'])
  const b = await hold(bare, Array.from({ length: POLLS }, () => '/hold'), auth, () => fetch(`http://127.0.0.1:${bare.port}/release`, { method: 'POST' }))
  await bare.stop()
  const endMachine = machine()

  const mib = (n: number) => fmt(n / 1048576, 1)
  const kib = (n: number) => fmt(n / 1024, 1)
  const rows = [
    ['', 'RSS before MiB', 'RSS held MiB', 'RSS KiB per held poll', 'live KiB per held poll', 'release all ms'],
    [`Roost, ${POLLS} polls on their own queues`, mib(r.before.rss), mib(r.held.rss), kib(r.perPoll), kib(r.livePerPoll), fmt(r.releaseMs, 0)],
    [`bare Fastify, ${POLLS} idle requests`, mib(b.before.rss), mib(b.held.rss), kib(b.perPoll), kib(b.livePerPoll), fmt(b.releaseMs, 0)],
    ['ratio Roost/bare', '', '', fmt(r.perPoll / b.perPoll), fmt(r.livePerPoll / b.livePerPoll), fmt(r.releaseMs / b.releaseMs)],
  ]
  console.log(`${startMachine}\n${POLLS} held polls\n`)
  console.log(table(rows))
  const verdict = [
    `live memory per held poll ${fmt(r.livePerPoll / b.livePerPoll)}× bare (target ≤ 3×): ${r.livePerPoll / b.livePerPoll <= 3 ? 'met' : 'MISSED'}`,
    r.perPoll > 0
      ? `resident memory per held poll ${fmt(r.perPoll / b.perPoll)}× bare (target ≤ 3×): ${r.perPoll / b.perPoll <= 3 ? 'met' : 'MISSED'} (see the RSS caveat in bench/README.md)`
      : `resident memory per held poll: Roost's RSS did not grow while holding (pages freed after registering the queues were reused; see the RSS caveat in bench/README.md), so the live figure is the one to read`,
    `release by one broadcast ${fmt(r.releaseMs / b.releaseMs)}× bare (target ≤ 3×): ${r.releaseMs / b.releaseMs <= 3 ? 'met' : 'MISSED'}`,
  ]
  console.log(`\n${verdict.join('\n')}`)
  recordResult(
    'events-held-polls',
    [
      `### (d) Held long-polls — \`node dist/bench/events-held-polls.js\` (${POLLS} polls)`,
      '',
      `Run ${new Date().toISOString()}; machine at start: ${startMachine}; at end: load average ${endMachine.split('load average ')[1]}.`,
      `${POLLS} polls (BENCH_POLLS, default 10,000). Servers: child processes with --expose-gc, memory read after a full GC (live = V8 heap in use + external + array buffers); Roost on PostgreSQL + Redis bus.`,
      '',
      markdownTable(rows),
      '',
      ...verdict.map((v) => `- ${v}`),
    ].join('\n'),
  )
})
