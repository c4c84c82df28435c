// Load simulation (issue 16, item 1): simulated active users against two
// Roost nodes on PostgreSQL + Redis, then against bare Fastify faking the same
// endpoints (bench/load-stub.ts), ramping the number of users in steps until a
// step fails.
//
// Each simulated user registers an event queue (message,
// update_message_flags, presence, subscription) and keeps a long-poll held
// on it; pings POST /users/me/presence every minute (the interval the server
// announces, as real clients do), sends to its team's channel (50 members
// each) every 5 minutes and loads GET /messages (newest 50 of that channel)
// every 2 minutes. Those real intervals are divided by BENCH_COMPRESSION
// (default 10: every 6 s, 30 s and 12 s, the issue's workload), each ±20 %
// jitter. Users alternate between the two nodes; a user's
// poll goes to the other node than its other requests.
//
// A step passes when the requests completed during it (presence, send, GET
// /messages) average ≤ 100 ms with p99 ≤ 2 s and no error (an error is a
// non-success answer, a failed connection or a long-poll failing).
// Past saturation (BENCH_FAILED_STEPS_ALLOWED > 0) a node refuses what it
// cannot serve (503 with Retry-After, docs/operations.md "Overload"): the
// simulated users do what clients do, wait Retry-After and send the request
// again (up to 3 attempts; a poll, until answered). Each step reports goodput
// (requests answered with success per second), refusals (503 answers per
// second, retries included) and requests that got no answer at all within
// 30 s; latencies are those of the successful requests, from their first
// attempt. Users are
// created in bulk before the run (set-based inserts through Prisma, before
// any node has served a request, so no cache holds an older state).
//
//   node dist/bench/load-simulation.js
// Environment: BENCH_USERS_START (250), BENCH_USERS_STEP (250),
// BENCH_USERS_MAX (2000), BENCH_STEP_SECONDS (30), BENCH_COMPRESSION (10),
// BENCH_FAILED_STEPS_ALLOWED (0: the ramp stops at its first failing step),
// BENCH_NOTE (a sentence for the recorded result, e.g. what else ran),
// BENCH_TARGETS (roost,stub), BENCH_KINDS (presence,send,messages: the
// requests the users make besides their long-polls), BENCH_NODE_ARGS (node options of the Roost nodes,
// e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof"), ROOST_BENCH_DATABASE_URL,
// ROOST_BENCH_REDIS_URL.
// Prints figures only; nothing here asserts a time.
import pg from 'pg'
import { Client, Pool, type Dispatcher } from 'undici'
import { randomBytes } from 'node:crypto'
import { loadavg } from 'node:os'
import { openDatabase } from '../src/db/client.js'
import { applyMigrations } from '../src/db/migrate.js'
import { ROLE } from '../src/domain/roles.js'
import { pickStreamColor } from '../src/actions/user-rows.js'
import { roleGroupName } from '../src/domain/system-groups.js'
import { insertInSlices } from './bulk-users.js'
import { clusterEnv, clock, cpuSeconds, cpuSecondsBetween, cpuSecondsByProcess, fmt, machine, machineBusySeconds, markdownTable, percentile, recordResult, run, startChild, table, type Child } from './support.js'

const START = Number(process.env.BENCH_USERS_START ?? 250)
const STEP = Number(process.env.BENCH_USERS_STEP ?? 250)
const MAX = Number(process.env.BENCH_USERS_MAX ?? 2000)
const STEP_SECONDS = Number(process.env.BENCH_STEP_SECONDS ?? 30)
const COMPRESSION = Number(process.env.BENCH_COMPRESSION ?? 10)
const TARGETS = (process.env.BENCH_TARGETS ?? 'roost,stub').split(',')
const NODE_ARGS = (process.env.BENCH_NODE_ARGS ?? '').split(' ').filter(Boolean)
const TEAM_SIZE = 50
const PRESENCE_MS = 60_000 / COMPRESSION
const SEND_MS = 300_000 / COMPRESSION
const MESSAGES_MS = 120_000 / COMPRESSION
const REQUEST_TIMEOUT_MS = 30_000
/** Failing steps the ramp goes on past (default 0: it stops at the first); e.g. to watch a cold start recover. */
const FAILED_STEPS_ALLOWED = Number(process.env.BENCH_FAILED_STEPS_ALLOWED ?? 0)
const POLL_TIMEOUT_MS = 120_000

/** What each simulated user registers for. */
const REGISTER_PARAMS = { event_types: JSON.stringify(['message', 'update_message_flags', 'presence', 'subscription']) }

type Kind = 'presence' | 'send' | 'messages'
const KINDS: Kind[] = ['presence', 'send', 'messages']
/** The kinds of request the users make (BENCH_KINDS, default all): leaving one out shows, by difference, what it costs in place. */
const ACTIVE_KINDS = new Set((process.env.BENCH_KINDS ?? KINDS.join(',')).split(',').filter(Boolean))
for (const kind of ACTIVE_KINDS) if (!KINDS.includes(kind as Kind)) throw new Error(`BENCH_KINDS: unknown kind ${kind} (known: ${KINDS.join(', ')})`)

interface SimUser { index: number; email: string; apiKey: string; streamId: number }

/**
 * The generator's HTTP client is undici: on this box the load generator shares
 * the two cores with what it measures, and undici's client took a quarter to a
 * third less CPU than node:http's (bare stub, 1,000 and 2,000 users). Short
 * requests share 64 keep-alive connections per node. Each user's held poll
 * has a connection of its own, as a real client's has: an undici Client per
 * user. (One Pool without a bound for all of them looked for a free
 * connection among every busy one on each poll: 2.3 % of the generator's
 * samples at 1,500 users, a tenth of its CPU.)
 */
const requestPools = new Map<number, Pool>()
const pollClients = new Set<Client>()
function poolOf(port: number): Pool {
  let pool = requestPools.get(port)
  if (!pool) {
    pool = new Pool(`http://127.0.0.1:${port}`, { connections: 64, pipelining: 1, keepAliveTimeout: 600_000, headersTimeout: REQUEST_TIMEOUT_MS, bodyTimeout: REQUEST_TIMEOUT_MS })
    requestPools.set(port, pool)
  }
  return pool
}
function pollClient(port: number): Client {
  const client = new Client(`http://127.0.0.1:${port}`, { pipelining: 1, keepAliveTimeout: 600_000, headersTimeout: POLL_TIMEOUT_MS, bodyTimeout: POLL_TIMEOUT_MS })
  pollClients.add(client)
  return client
}
async function closePools(): Promise<void> {
  await Promise.all([...requestPools.values(), ...pollClients].map((dispatcher) => dispatcher.destroy()))
  requestPools.clear()
  pollClients.clear()
}

interface Answer {
  ok: boolean
  body: Record<string, unknown> | undefined
  /** A 503 refusal, and the seconds its Retry-After names. */
  refusedFor?: number
  /** No answer at all: the connection failed or the request timed out. */
  unanswered?: boolean
}

async function call(pool: Dispatcher, auth: string, method: 'GET' | 'POST', path: string, params: Record<string, string>): Promise<Answer> {
  const encoded = new URLSearchParams(params).toString()
  const inQuery = method === 'GET'
  try {
    const res = await pool.request({
      method,
      path: `/api/v1${path}${inQuery ? `?${encoded}` : ''}`,
      headers: inQuery ? { authorization: auth } : { authorization: auth, 'content-type': 'application/x-www-form-urlencoded' },
      body: inQuery ? undefined : encoded,
    })
    const body = JSON.parse(await res.body.text()) as Record<string, unknown>
    if (res.statusCode === 503) return { ok: false, body, refusedFor: Number(res.headers['retry-after'] ?? 1) || 1 }
    return { ok: res.statusCode === 200 && body.result === 'success', body }
  } catch {
    return { ok: false, body: undefined, unanswered: true }
  }
}

const jitter = (ms: number): number => ms * (0.8 + 0.4 * Math.random())

interface Sample { kind: Kind; at: number; ms: number; ok: boolean; unanswered: boolean }

/** Attempts a simulated user makes at a refused request (the first and two retries after Retry-After). */
const ATTEMPTS = 3
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

class Simulation {
  samples: Sample[] = []
  pollAnswers = 0
  pollErrors = 0
  /** 503 refusals (requests and polls, retries included). */
  refusals = 0
  private stopped = false
  private timers = new Set<NodeJS.Timeout>()
  private running = 0

  constructor(private readonly ports: number[], private readonly users: SimUser[]) {}

  get active(): number {
    return this.running
  }

  /** Starts users until `count` run, spread over a second. */
  grow(count: number): void {
    while (this.running < count) {
      const user = this.users[this.running]
      if (!user) throw new Error(`only ${this.users.length} users exist`)
      this.running++
      this.later(Math.random() * 1000, () => void this.live(user))
    }
  }

  stop(): void {
    this.stopped = true
    for (const timer of this.timers) clearTimeout(timer)
  }

  private later(ms: number, fn: () => void): void {
    const timer = setTimeout(() => {
      this.timers.delete(timer)
      if (!this.stopped) fn()
    }, ms)
    this.timers.add(timer)
  }

  private async live(user: SimUser): Promise<void> {
    const auth = `Basic ${Buffer.from(`${user.email}:${user.apiKey}`).toString('base64')}`
    const requests = poolOf(this.ports[user.index % this.ports.length] as number)
    const polls = pollClient(this.ports[(user.index + 1) % this.ports.length] as number)
    const timed = async (kind: Kind, method: 'GET' | 'POST', path: string, params: Record<string, string>) => {
      const start = clock()
      let answer = await call(requests, auth, method, path, params)
      for (let attempt = 1; answer.refusedFor !== undefined && attempt < ATTEMPTS && !this.stopped; attempt++) {
        this.refusals++
        await sleep(answer.refusedFor * 1000)
        answer = await call(requests, auth, method, path, params)
      }
      if (answer.refusedFor !== undefined) this.refusals++
      if (!this.stopped) this.samples.push({ kind, at: clock(), ms: clock() - start, ok: answer.ok, unanswered: answer.unanswered === true })
    }
    const every = (ms: number, kind: Kind, fn: () => Promise<void>) => {
      if (!ACTIVE_KINDS.has(kind)) return
      const tick = () => void fn().finally(() => this.later(jitter(ms), tick))
      this.later(jitter(ms) * Math.random(), tick)
    }
    let registered = await call(requests, auth, 'POST', '/register', REGISTER_PARAMS)
    while (registered.refusedFor !== undefined && !this.stopped) {
      this.refusals++
      await sleep(registered.refusedFor * 1000)
      registered = await call(requests, auth, 'POST', '/register', REGISTER_PARAMS)
    }
    if (!registered.ok || !registered.body) {
      this.pollErrors++
      return
    }
    let queueId = registered.body.queue_id as string
    let lastEventId = registered.body.last_event_id as number
    every(PRESENCE_MS, 'presence', () => timed('presence', 'POST', '/users/me/presence', { status: 'active', new_user_input: 'true', ping_only: 'true' }))
    every(SEND_MS, 'send', () => timed('send', 'POST', '/messages', { type: 'stream', to: String(user.streamId), topic: 'sim', content: `hello from ${user.index}` }))
    every(MESSAGES_MS, 'messages', () =>
      timed('messages', 'GET', '/messages', { anchor: 'newest', num_before: '50', num_after: '0', narrow: JSON.stringify([{ operator: 'stream', operand: user.streamId }]) }),
    )
    while (!this.stopped) {
      const answer = await call(polls, auth, 'GET', '/events', { queue_id: queueId, last_event_id: String(lastEventId) })
      if (this.stopped) break
      const events = answer.body?.events as Array<{ id: number }> | undefined
      if (answer.ok && events) {
        this.pollAnswers++
        for (const e of events) lastEventId = Math.max(lastEventId, e.id)
        continue
      }
      if (answer.refusedFor !== undefined) {
        this.refusals++
        await sleep(answer.refusedFor * 1000)
        continue
      }
      this.pollErrors++
      if (answer.body?.code === 'BAD_EVENT_QUEUE_ID') {
        const again = await call(requests, auth, 'POST', '/register', REGISTER_PARAMS)
        if (again.ok && again.body) {
          queueId = again.body.queue_id as string
          lastEventId = again.body.last_event_id as number
        }
      }
      await new Promise((resolve) => setTimeout(resolve, 500))
    }
  }
}

interface StepResult { users: number; pass: boolean; row: string[] }

function summarize(users: number, samples: Sample[], pollAnswers: number, pollErrors: number, refusals: number): StepResult {
  const answered = samples.filter((s) => s.ok)
  const ms = answered.map((s) => s.ms)
  const errors = samples.filter((s) => !s.ok).length + pollErrors
  const unanswered = samples.filter((s) => s.unanswered).length
  const avg = ms.reduce((a, b) => a + b, 0) / Math.max(1, ms.length)
  const p99 = percentile(ms, 99)
  const pass = ms.length > 0 && avg <= 100 && p99 <= 2000 && errors === 0
  const perKind = KINDS.map((kind) => {
    const of = answered.filter((s) => s.kind === kind).map((s) => s.ms)
    return `${fmt(of.reduce((a, b) => a + b, 0) / Math.max(1, of.length), 1)}/${fmt(percentile(of, 99), 0)}`
  })
  const rate = (n: number) => fmt(n / STEP_SECONDS, 0)
  return {
    users,
    pass,
    row: [String(users), rate(samples.length), rate(answered.length), rate(refusals), String(unanswered), rate(pollAnswers), fmt(avg, 1), fmt(p99, 0), ...perKind, String(errors), loadavg()[0]?.toFixed(1) ?? '?', pass ? 'pass' : 'FAIL'],
  }
}

interface CpuReading {
  servers: number
  postgres: Map<number, number>
  redis: Map<number, number>
  generator: number
  machine: number
}

/** CPU seconds used so far: the servers under test, each PostgreSQL and Redis process, this load generator and the whole machine. */
function cpuNow(serverPids: number[]): CpuReading {
  const own = process.cpuUsage()
  return {
    servers: serverPids.reduce((sum, pid) => sum + cpuSeconds(pid), 0),
    postgres: cpuSecondsByProcess(['postgres']),
    redis: cpuSecondsByProcess(['redis-server']),
    generator: (own.user + own.system) / 1e6,
    machine: machineBusySeconds(),
  }
}

/** Each share as a percentage of one core over the step: where the machine's CPU went (PostgreSQL and Redis as cpuSecondsBetween counts them). */
function cpuShares(before: CpuReading, after: CpuReading): string {
  const spent = [
    after.servers - before.servers,
    cpuSecondsBetween(before.postgres, after.postgres),
    cpuSecondsBetween(before.redis, after.redis),
    after.generator - before.generator,
    after.machine - before.machine,
  ]
  return spent.map((seconds) => fmt((100 * seconds) / STEP_SECONDS, 0)).join('/')
}

async function ramp(name: string, ports: number[], serverPids: number[], users: SimUser[]): Promise<StepResult[]> {
  const sim = new Simulation(ports, users)
  const results: StepResult[] = []
  console.log(`\n${name}`)
  const header = ['users', 'req/s', 'goodput/s', 'refused/s', 'no answer', 'polls/s', 'avg ms', 'p99 ms', 'presence avg/p99', 'send avg/p99', 'messages avg/p99', 'errors', 'load', '', 'CPU % srv/pg/redis/sim/all']
  console.log(table([header]))
  for (let count = START; count <= MAX; count += STEP) {
    sim.grow(count)
    // Let the new users register and settle before measuring.
    await new Promise((resolve) => setTimeout(resolve, Math.max(2000, PRESENCE_MS * 2)))
    sim.samples = []
    sim.pollAnswers = 0
    sim.pollErrors = 0
    sim.refusals = 0
    const cpuBefore = cpuNow(serverPids)
    await new Promise((resolve) => setTimeout(resolve, STEP_SECONDS * 1000))
    const result = summarize(count, sim.samples, sim.pollAnswers, sim.pollErrors, sim.refusals)
    result.row.push(cpuShares(cpuBefore, cpuNow(serverPids)))
    results.push(result)
    console.log(table([header.map(() => ''), result.row]).split('\n')[1])
    if (!result.pass && results.filter((r) => !r.pass).length > FAILED_STEPS_ALLOWED) break
  }
  sim.stop()
  await closePools()
  return results
}

/** The tables autovacuum's analyze rule picks now, quoted (reltuples is -1 before a table's first analysis). */
const ANALYZE_DUE_SQL = `SELECT format('%I.%I', s.schemaname, s.relname) AS name
  FROM pg_stat_user_tables s JOIN pg_class c ON c.oid = s.relid
  WHERE s.n_mod_since_analyze > current_setting('autovacuum_analyze_threshold')::float8
    + current_setting('autovacuum_analyze_scale_factor')::float8 * greatest(c.reltuples, 0)`

/**
 * With the server's autovacuum off (as on the CI machine, conf.d/90-ci.conf),
 * nothing updates the planner's statistics while the simulation fills its
 * tables from nothing: PostgreSQL then plans GET /messages for the empty
 * tables it last analyzed and reads a whole channel for every request (15 ms
 * instead of 0.2 ms at 1,300 messages a channel). A deployment's autovacuum
 * analyzes a table once the rows changed since its last analysis exceed
 * autovacuum_analyze_threshold + autovacuum_analyze_scale_factor × its rows
 * (50 + 10 % by default); this applies the same rule every `everyMs`, only
 * when autovacuum is off. Returns a stop function.
 */
async function keepStatisticsCurrent(databaseUrl: string, everyMs: number): Promise<() => Promise<void>> {
  const client = new pg.Client({ connectionString: databaseUrl })
  await client.connect()
  const { rows } = await client.query<{ autovacuum: string }>('SHOW autovacuum')
  if (rows[0]?.autovacuum === 'on') {
    await client.end()
    return async () => undefined
  }
  console.log('autovacuum is off on this PostgreSQL: every', everyMs / 1000, 's the simulation analyzes the tables autovacuum would')
  const analyzeDue = async () => {
    const due = await client.query<{ name: string }>(ANALYZE_DUE_SQL)
    for (const { name } of due.rows) await client.query(`ANALYZE ${name}`)
  }
  let running = Promise.resolve()
  const timer = setInterval(() => {
    running = running.then(analyzeDue).catch(() => undefined)
  }, everyMs)
  return async () => {
    clearInterval(timer)
    await running
    await client.end()
  }
}

/** Users sim-0 … sim-(n-1) with known API keys, in teams of 50 each with its own public channel; set-based inserts. */
async function createUsers(databaseUrl: string, n: number): Promise<SimUser[]> {
  const database = await openDatabase({ databaseUrl })
  await applyMigrations(database)
  const { prisma } = database
  try {
    const realm = await prisma.realm.findFirstOrThrow({ orderBy: { id: 'asc' } })
    const owner = await prisma.user.findFirstOrThrow({ where: { realmId: realm.id, role: ROLE.OWNER } })
    const group = async (name: string) => (await prisma.userGroup.findUniqueOrThrow({ where: { realmId_name: { realmId: realm.id, name } } })).id
    const memberGroup = await group(roleGroupName(ROLE.MEMBER))
    const adminGroup = await group(roleGroupName(ROLE.ADMIN))
    const teams = Math.ceil(n / TEAM_SIZE)
    const streams = await prisma.stream.createManyAndReturn({
      data: Array.from({ length: teams }, (_, i) => ({ realmId: realm.id, name: `team ${i}`, renderedDescription: '', canRemoveSubscribersGroupId: adminGroup, creatorId: owner.id, dateCreated: new Date() })),
      select: { id: true },
    })
    const keys = Array.from({ length: n }, () => randomBytes(16).toString('hex'))
    const data = keys.map((apiKey, i) => {
      const email = `sim-${i}@example.com`
      return { realmId: realm.id, email, deliveryEmail: email, fullName: `Sim ${i}`, apiKey, role: ROLE.MEMBER, dateJoined: new Date() }
    })
    const rows = await insertInSlices(data, (slice) => prisma.user.createManyAndReturn({ data: slice, select: { id: true, email: true, apiKey: true } }))
    await insertInSlices(rows, (slice) => prisma.userSettings.createMany({ data: slice.map((u) => ({ userId: u.id })) }))
    await insertInSlices(rows, (slice) => prisma.userGroupMember.createMany({ data: slice.map((u) => ({ groupId: memberGroup, userId: u.id })) }))
    const byEmail = new Map(rows.map((u) => [u.email, u]))
    const users = keys.map((apiKey, i) => ({ index: i, email: `sim-${i}@example.com`, apiKey, streamId: streams[Math.floor(i / TEAM_SIZE)]?.id as number, id: byEmail.get(`sim-${i}@example.com`)?.id as number }))
    await insertInSlices(users, (slice) => prisma.subscription.createMany({ data: slice.map((u) => ({ userId: u.id, streamId: u.streamId, color: pickStreamColor(0) })) }))
    return users
  } finally {
    await database.close()
  }
}

async function main(): Promise<void> {
  console.log(machine())
  console.log(`ramp ${START} → ${MAX} users by ${STEP}, ${STEP_SECONDS} s per step, time compressed ${COMPRESSION}× (presence every ${fmt(PRESENCE_MS / 1000)} s, send every ${fmt(SEND_MS / 1000)} s, GET /messages every ${fmt(MESSAGES_MS / 1000)} s, ±20 %)`)
  const sections: string[] = []
  const summary: string[] = []
  const header = ['users', 'req/s', 'goodput (successes/s)', 'refused/s (503)', 'no answer in 30 s', 'polls answered/s', 'avg ms', 'p99 ms', 'presence avg/p99', 'send avg/p99', 'GET /messages avg/p99', 'errors', 'load (1 min)', '', 'CPU % of a core: servers/PostgreSQL/Redis/load generator/machine']
  if (TARGETS.includes('roost')) {
    const env = clusterEnv('load_simulation')
    const a = await startChild('roost-node', env, NODE_ARGS)
    const users = await createUsers(env.DATABASE_URL as string, MAX)
    const b = await startChild('roost-node', env, NODE_ARGS)
    const stopAnalyzing = await keepStatisticsCurrent(env.DATABASE_URL as string, 10_000)
    const results = await ramp('two Roost nodes (PostgreSQL + Redis)', [a.port, b.port], [a.process.pid as number, b.process.pid as number], users)
    await stopAnalyzing()
    await Promise.all([a.stop(), b.stop()])
    const last = [...results].reverse().find((r) => r.pass)
    summary.push(`two Roost nodes: last passing step ${last?.users ?? 'none'}`)
    sections.push(`Two Roost nodes (PostgreSQL + Redis):\n\n${markdownTable([header, ...results.map((r) => r.row)])}`)
  }
  if (TARGETS.includes('stub')) {
    const stub: Child = await startChild('load-stub', {})
    const users = Array.from({ length: MAX }, (_, i) => ({ index: i, email: `sim-${i}@example.com`, apiKey: 'x'.repeat(32), streamId: Math.floor(i / TEAM_SIZE) }))
    const results = await ramp('bare Fastify stub (one process)', [stub.port], [stub.process.pid as number], users)
    await stub.stop()
    const last = [...results].reverse().find((r) => r.pass)
    summary.push(`bare Fastify stub: last passing step ${last?.users ?? 'none'}`)
    sections.push(`Bare Fastify stub faking the same endpoints (one process):\n\n${markdownTable([header, ...results.map((r) => r.row)])}`)
  }
  console.log(`\n${summary.join('\n')}`)
  const admission = Object.entries(process.env).filter(([name]) => name.startsWith('ADMISSION_')).map(([name, value]) => `${name}=${value}`)
  const config = [
    `Ramp ${START} → ${MAX} by ${STEP}, ${STEP_SECONDS} s per step, ${COMPRESSION}× compression, ${FAILED_STEPS_ALLOWED} failing steps allowed. ${machine()} (at the end).`,
    `Admission control: ${admission.length > 0 ? admission.join(', ') : 'the defaults'}.`,
    ...(process.env.BENCH_NOTE ? [process.env.BENCH_NOTE] : []),
  ].join(' ')
  recordResult('load-simulation', [config, summary.map((s) => `* ${s}`).join('\n'), ...sections].join('\n\n'))
}

run(main)
