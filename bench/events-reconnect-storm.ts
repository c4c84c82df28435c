// Benchmark: the reconnect storm. N clients (BENCH_POLLS, default 5,000) hold
// long-polls on one node; the node is lost (SIGSTOP, then an event is sent
// through another node, then SIGKILL, so every connection is reset at once and
// every client has something to fetch); each client re-polls a survivor at
// once with its last_event_id. Re-poll latency: the client seeing its
// connection reset → the survivor's answer (with the event) received. Printed
// as p50/p99/max against bare Fastify doing the same (held requests on a
// killed bare server, re-requested from a bare survivor answering at once), in
// the same run, at the same listen backlog; and, for reference, Roost at
// Node's default backlog (511), which drops the burst's SYNs (each dropped SYN
// costs the client a 1 s, then 3 s, retransmission). Ratios are printed, never
// asserted.
//
//   npm run build && node dist/bench/events-reconnect-storm.js
//
// Roost nodes: bench/roost-node.ts (PostgreSQL, Redis bus, RATE_LIMITING=off,
// LOG_LEVEL=warn), LISTEN_BACKLOG per row; one more node registers the queues
// and sends the events. The queues belong to one user (the owner). The kernel
// caps a listen backlog at net.core.somaxconn (printed). Each client's socket
// is an open file here and on the survivor: the script stops early when
// `ulimit -n` is too small for BENCH_POLLS.
// Env: BENCH_POLLS (default 5000), BENCH_BACKLOG (default 8192, Roost's LISTEN_BACKLOG default).
import { readFileSync } from 'node:fs'
import { Agent, request } from 'node:http'
import { setTimeout as delay } from 'node:timers/promises'
import { DEFAULT_LISTEN_BACKLOG } from '../src/config.js'
import { api, type Child, clock, clusterEnv, fmt, machine, markdownTable, ownerAuth, percentile, recordResult, run, startChild, table, withTimeout } from './support.js'

const POLLS = Number(process.env.BENCH_POLLS ?? 5000)
const BACKLOG = Number(process.env.BENCH_BACKLOG ?? DEFAULT_LISTEN_BACKLOG)
const NODE_DEFAULT_BACKLOG = 511

interface Reply {
  status: number
  body: string
}

function get(agent: Agent, port: number, path: string, auth: string): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, agent, headers: { authorization: auth } }, (res) => {
      let body = ''
      res.setEncoding('utf8')
      res.on('data', (chunk: string) => (body += chunk))
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }))
    })
    req.on('error', reject)
    req.end()
  })
}

interface StormResult {
  latencies: number[]
  errors: number
}

/**
 * Holds one request per path on `victim`, freezes it, runs `beforeKill`, kills it,
 * and re-sends each request to `survivor` (path given by `retryPath`) as soon as its connection fails.
 */
async function storm(victim: Child, survivor: Child, paths: string[], auth: string, retryPath: (i: number) => string, beforeKill: () => Promise<unknown>, onAnswer: (i: number, body: string) => void): Promise<StormResult> {
  const agent = new Agent({ keepAlive: false, maxSockets: Infinity })
  let errors = 0
  const latencies: number[] = []
  const clients = paths.map(async (path, i) => {
    try {
      await get(agent, victim.port, path, auth)
      errors++ // answered by a frozen node: not expected
      return
    } catch {
      // the kill: re-poll the survivor at once
    }
    const cut = clock()
    try {
      const res = await get(agent, survivor.port, retryPath(i), auth)
      if (res.status !== 200) errors++
      else latencies.push(clock() - cut)
      onAnswer(i, res.body)
    } catch {
      errors++
    }
  })
  await withTimeout(
    (async () => {
      while ((await victim.ask<{ heldPolls: number }>({ kind: 'stats' })).heldPolls < paths.length) await delay(100)
    })(),
    600_000,
    'holding every poll',
  )
  await delay(500)
  victim.process.kill('SIGSTOP')
  await beforeKill()
  victim.process.kill('SIGKILL')
  await withTimeout(Promise.all(clients), 600_000, 're-polls')
  agent.destroy()
  return { latencies, errors }
}

function openFilesLimit(): number {
  const line = /^Max open files\s+(\S+)/m.exec(readFileSync('/proc/self/limits', 'utf8'))
  return line?.[1] === 'unlimited' ? Infinity : Number(line?.[1] ?? 1024)
}

function somaxconn(): string {
  try {
    return readFileSync('/proc/sys/net/core/somaxconn', 'utf8').trim()
  } catch {
    return '?'
  }
}

run(async () => {
  if (openFilesLimit() < POLLS + 1000) throw new Error(`ulimit -n is ${openFilesLimit()}: raise it above ${POLLS + 1000} for ${POLLS} clients`)
  const startMachine = machine()
  const env = { ...clusterEnv('storm'), HEARTBEAT_INTERVAL_SECONDS: '3600' }
  const hub = await startChild('roost-node', env)
  const hubBase = `http://127.0.0.1:${hub.port}`
  const auth = await ownerAuth(hubBase)
  await api(hubBase, auth, 'POST', '/users/me/subscriptions', { subscriptions: [{ name: 'storm' }] })
  const queues: string[] = []
  for (let i = 0; i < POLLS; i += 20) {
    const batch = await Promise.all(
      Array.from({ length: Math.min(20, POLLS - i) }, () => api(hubBase, auth, 'POST', '/register', { event_types: ['message'], fetch_event_types: [] })),
    )
    for (const reg of batch) queues.push(reg.queue_id as string)
  }
  const cursors = queues.map(() => -1)
  const eventsPath = (i: number) => `/api/v1/events?queue_id=${queues[i]}&last_event_id=${cursors[i]}`

  const roostRound = async (backlog: number): Promise<StormResult> => {
    const victim = await startChild('roost-node', { ...env, LISTEN_BACKLOG: String(backlog) })
    const survivor = await startChild('roost-node', { ...env, LISTEN_BACKLOG: String(backlog) })
    const paths = queues.map((_, i) => eventsPath(i))
    let wrong = 0
    const result = await storm(
      victim,
      survivor,
      paths,
      auth,
      eventsPath,
      () => api(hubBase, auth, 'POST', '/messages', { type: 'stream', to: 'storm', topic: 'storm', content: `after backlog ${backlog}` }),
      (i, body) => {
        const events = (JSON.parse(body) as { events?: { id: number; type: string }[] }).events ?? []
        if (events.length !== 1 || events[0]?.type !== 'message') wrong++
        cursors[i] = events[events.length - 1]?.id ?? cursors[i] as number
      },
    )
    await survivor.stop()
    return { ...result, errors: result.errors + wrong }
  }

  const roost = await roostRound(BACKLOG)
  const roostDefault = await roostRound(NODE_DEFAULT_BACKLOG)
  await hub.stop()

  const bareVictim = await startChild('bare-node', { LISTEN_BACKLOG: String(BACKLOG) })
  const bareSurvivor = await startChild('bare-node', { LISTEN_BACKLOG: String(BACKLOG) })
  const bare = await storm(bareVictim, bareSurvivor, queues.map(() => '/hold'), auth, (i) => `/api/v1/events?queue_id=${queues[i]}`, async () => undefined, () => undefined)
  await bareSurvivor.stop()
  const endMachine = machine()

  const row = (name: string, r: StormResult) => [name, String(r.latencies.length), String(r.errors), fmt(percentile(r.latencies, 50), 1), fmt(percentile(r.latencies, 99), 1), fmt(Math.max(...r.latencies), 1)]
  const rows = [
    ['', 're-polls answered', 'errors', 'p50 ms', 'p99 ms', 'max ms'],
    row(`Roost, LISTEN_BACKLOG=${BACKLOG}`, roost),
    row(`bare Fastify, backlog ${BACKLOG}`, bare),
    row(`Roost, LISTEN_BACKLOG=${NODE_DEFAULT_BACKLOG} (Node's default)`, roostDefault),
  ]
  const ratio = (r: StormResult, p: number) => fmt(percentile(r.latencies, p) / percentile(bare.latencies, p))
  const ratios = [
    `Roost / bare Fastify at backlog ${BACKLOG}: p50 ${ratio(roost, 50)}×, p99 ${ratio(roost, 99)}×`,
    `Roost at Node's default backlog / bare Fastify: p50 ${ratio(roostDefault, 50)}×, p99 ${ratio(roostDefault, 99)}×`,
  ]
  const header = `${startMachine}; net.core.somaxconn ${somaxconn()} (the kernel's cap on any backlog)\n${POLLS} clients re-polling at once after their node is killed`
  console.log(`${header}\n`)
  console.log(table(rows))
  console.log(`\n${ratios.join('\n')}`)
  recordResult(
    'events-reconnect-storm',
    [
      `### Reconnect storm — \`node dist/bench/events-reconnect-storm.js\` (${POLLS} clients)`,
      '',
      `Run ${new Date().toISOString()}; machine at start: ${startMachine}; at end: load average ${endMachine.split('load average ')[1]}; net.core.somaxconn ${somaxconn()}.`,
      `${POLLS} long-polls held on one node, which is frozen (SIGSTOP) while one event is sent through another node, then killed (SIGKILL); every client re-polls a survivor as soon as its connection is reset. Latency: reset seen → the survivor's answer received. Roost nodes on PostgreSQL + Redis bus; bare Fastify holds and answers fixed JSON.`,
      '',
      markdownTable(rows),
      '',
      ...ratios.map((r) => `- ${r}`),
    ].join('\n'),
  )
})
