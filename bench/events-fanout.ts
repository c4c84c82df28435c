// Benchmark (c): fan-out. POST /messages to a channel with 1,000 subscribers
// on PostgreSQL, one request at a time: p50 against a raw baseline through the
// pg driver in the same run — a single-row insert plus a 1,000-row set-based
// insert (INSERT … SELECT unnest($1::int[])), the two statements a send needs,
// into the same `message` and `user_message` tables Roost writes (their foreign
// keys and the partial indexes of the unread, starred and mention queries
// included). Target ≤ 2×, with the node's event-loop delay p99
// (perf_hooks.monitorEventLoopDelay, measured inside the node) ≤ 20 ms.
// For reference it also prints the same inserts into bare two-column tables
// (what the schema's keys and indexes cost), and the sends again after every
// subscriber registered an event queue, so that each send also appends to
// 1,000 queues in Redis before it answers.
//
//   npm run build && node dist/bench/events-fanout.js
//
// The node is a child process (bench/roost-node.ts: PostgreSQL, Redis bus,
// RATE_LIMITING=off, LOG_LEVEL=warn). The 999 extra users are inserted by this
// process through Roost's own insertUser (no password, so no hashing); they join
// the default channel `general`, which then has 1,000 subscribers.
// Env: BENCH_REQUESTS (default 100), BENCH_WARMUP (requests, default 10),
// BENCH_SUBSCRIBERS (default 1000), BENCH_QUEUES (queues registered for the
// second run, one per subscriber, default 1000; 0 skips that run).
import pg from 'pg'
import { openDatabase } from '../src/db/client.js'
import { insertUser } from '../src/actions/user-rows.js'
import { api, type Child, clock, clusterEnv, fmt, machine, markdownTable, ownerAuth, percentile, recordResult, run, startChild, table } from './support.js'

const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 100)
const WARMUP = Number(process.env.BENCH_WARMUP ?? 10)
const SUBSCRIBERS = Number(process.env.BENCH_SUBSCRIBERS ?? 1000)
const QUEUES = Number(process.env.BENCH_QUEUES ?? 1000)

async function seedUsers(databaseUrl: string): Promise<void> {
  const database = await openDatabase({ databaseUrl })
  const realm = await database.prisma.realm.findFirstOrThrow({ where: { stringId: '' } })
  for (let done = 1; done < SUBSCRIBERS; ) {
    const batch = Math.min(100, SUBSCRIBERS - done)
    await database.prisma.$transaction(async (tx) => {
      for (let i = 0; i < batch; i++) await insertUser(tx, realm, { email: `sub${done + i}@example.com`, fullName: `Subscriber ${done + i}`, dateJoined: new Date(), emailDomain: 'example.com' })
    }, { timeout: 120_000 })
    done += batch
  }
  await database.close()
}

/** The same two inserts into bare two-column tables with only a primary key (for reference). */
async function measureRaw(databaseUrl: string): Promise<number[]> {
  const client = new pg.Client({ connectionString: databaseUrl })
  await client.connect()
  await client.query('CREATE TABLE IF NOT EXISTS bench_message (id bigserial PRIMARY KEY, sender_id int NOT NULL, content text NOT NULL, rendered text NOT NULL, sent_at timestamptz NOT NULL)')
  await client.query('CREATE TABLE IF NOT EXISTS bench_user_message (user_id int NOT NULL, message_id bigint NOT NULL, flags int NOT NULL, PRIMARY KEY (user_id, message_id))')
  const userIds = Array.from({ length: SUBSCRIBERS }, (_, i) => i + 1)
  const times: number[] = []
  for (let i = 0; i < WARMUP + REQUESTS; i++) {
    const start = clock()
    const { rows } = await client.query<{ id: string }>('INSERT INTO bench_message (sender_id, content, rendered, sent_at) VALUES ($1, $2, $3, now()) RETURNING id', [1, `m${i}`, `<p>m${i}</p>`])
    await client.query('INSERT INTO bench_user_message (user_id, message_id, flags) SELECT u, $2, 0 FROM unnest($1::int[]) AS u', [userIds, rows[0]?.id])
    if (i >= WARMUP) times.push(clock() - start)
  }
  await client.query('DROP TABLE bench_user_message, bench_message')
  await client.end()
  return times
}

/**
 * The baseline: the two raw statements of a send into Roost's own `message` and
 * `user_message` tables (with their foreign keys and the partial indexes the
 * unread, starred and mention queries need).
 */
async function measureRawRoostTables(databaseUrl: string): Promise<number[]> {
  const client = new pg.Client({ connectionString: databaseUrl })
  await client.connect()
  const { rows: streams } = await client.query<{ id: number; realm_id: number }>("SELECT id, realm_id FROM stream WHERE name = 'general'")
  const stream = streams[0]
  if (!stream) throw new Error('no channel general')
  const { rows: users } = await client.query<{ id: number }>('SELECT id FROM user_profile WHERE realm_id = $1 ORDER BY id LIMIT $2', [stream.realm_id, SUBSCRIBERS])
  const userIds = users.map((u) => u.id)
  const times: number[] = []
  for (let i = 0; i < WARMUP + REQUESTS; i++) {
    const start = clock()
    const { rows } = await client.query<{ id: string }>(
      `INSERT INTO message (realm_id, sender_id, stream_id, topic, content, rendered_content, date_sent, client, has_link, has_image, has_attachment)
       VALUES ($1, $2, $3, 'raw', $4, $5, now(), 'bench', false, false, false) RETURNING id`,
      [stream.realm_id, userIds[0], stream.id, `m${i}`, `<p>m${i}</p>`],
    )
    // The trigger that announces user_message inserts (migration *_user_data_invalidation) silenced, as a send's own statement does:
    // the baseline is the writes alone, without the announcement a send makes after its commit.
    await client.query(
      `WITH quiet AS (SELECT set_config('roost.user_data_notify', 'sender', true))
       INSERT INTO user_message (user_id, message_id, flags) SELECT u, $2, 0 FROM unnest($1::int[]) AS u, quiet`,
      [userIds, rows[0]?.id],
    )
    if (i >= WARMUP) times.push(clock() - start)
  }
  await client.end()
  return times
}

async function registerQueues(base: string, databaseUrl: string): Promise<number> {
  const client = new pg.Client({ connectionString: databaseUrl })
  await client.connect()
  const { rows } = await client.query<{ email: string; api_key: string }>('SELECT email, api_key FROM user_profile WHERE is_active ORDER BY id LIMIT $1', [QUEUES])
  await client.end()
  for (const u of rows) {
    const userAuth = `Basic ${Buffer.from(`${u.email}:${u.api_key}`).toString('base64')}`
    await api(base, userAuth, 'POST', '/register', { event_types: ['message'], fetch_event_types: [] })
  }
  return rows.length
}

interface Phase {
  times: number[]
  eld: { p50: number; p99: number; max: number }
}

async function measureSends(node: Child, send: (i: number) => Promise<unknown>): Promise<Phase> {
  for (let i = 0; i < WARMUP; i++) await send(i)
  await node.ask({ kind: 'eld-start' })
  const times: number[] = []
  for (let i = 0; i < REQUESTS; i++) {
    const start = clock()
    await send(i)
    times.push(clock() - start)
  }
  return { times, eld: await node.ask<Phase['eld']>({ kind: 'eld-stop' }) }
}

run(async () => {
  const env = clusterEnv('fanout')
  const node = await startChild('roost-node', env)
  const databaseUrl = env.DATABASE_URL as string
  await seedUsers(databaseUrl)
  const base = `http://127.0.0.1:${node.port}`
  const auth = await ownerAuth(base)
  const subs = (await api(base, auth, 'GET', '/users/me/subscriptions', { include_subscribers: true })).subscriptions as Array<{ name: string; subscribers: number[] }>
  const subscribers = subs.find((s) => s.name === 'general')?.subscribers.length ?? 0

  const before = machine()
  const send = (i: number) => api(base, auth, 'POST', '/messages', { type: 'stream', to: 'general', topic: 'fan-out', content: `message ${i}` })
  const quiet = await measureSends(node, send)
  const queues = QUEUES > 0 ? await registerQueues(base, databaseUrl) : 0
  const live = queues > 0 ? await measureSends(node, send) : undefined
  await node.stop()
  const raw = await measureRawRoostTables(databaseUrl)
  const scratch = await measureRaw(databaseUrl)
  const after = machine()

  const b50 = percentile(raw, 50)
  const q50 = percentile(quiet.times, 50)
  const eldP99 = Math.max(quiet.eld.p99, live?.eld.p99 ?? 0)
  const phaseRow = (label: string, phase: Phase) => [label, fmt(percentile(phase.times, 50)), fmt(percentile(phase.times, 99)), `${fmt(phase.eld.p99)} (max ${fmt(phase.eld.max)})`, fmt(percentile(phase.times, 50) / b50)]
  const rows = [
    ['', 'p50 ms', 'p99 ms', 'event-loop delay p99 ms', 'p50 / raw'],
    phaseRow(`Roost POST /messages, ${subscribers} subscribers`, quiet),
    ...(live ? [phaseRow(`(for reference) the same with an event queue registered by each of ${queues} subscribers`, live)] : []),
    [`raw pg: 1-row insert into message + ${SUBSCRIBERS}-row unnest insert into user_message`, fmt(b50), fmt(percentile(raw, 99)), '', '1.00'],
    [`(for reference) raw pg: the same two inserts into bare two-column tables`, fmt(percentile(scratch, 50)), fmt(percentile(scratch, 99)), '', fmt(percentile(scratch, 50) / b50)],
  ]
  console.log(`${before}\n${REQUESTS} sequential requests after ${WARMUP} warm-up\n`)
  console.log(table(rows))
  const verdict = [
    `p50 ${fmt(q50 / b50)}× raw (target ≤ 2×): ${q50 / b50 <= 2 ? 'met' : 'MISSED'}`,
    `event-loop delay p99 ${fmt(eldP99)} ms (target ≤ 20 ms, both runs): ${eldP99 <= 20 ? 'met' : 'MISSED'}`,
  ]
  console.log(`\n${verdict.join('\n')}`)
  recordResult(
    'events-fanout',
    [
      `### (c) Fan-out to 1,000 subscribers — \`node dist/bench/events-fanout.js\``,
      '',
      `Run ${new Date().toISOString()}; machine at start: ${before}; at end: load average ${after.split('load average ')[1]}.`,
      `${REQUESTS} sequential POST /messages after ${WARMUP} warm-up, then the same after every subscriber registered an event queue (its appends are part of each request); node: child process, PostgreSQL + Redis bus; event-loop delay measured inside the node; raw baseline through pg in this process, same database, same tables, after the node stopped.`,
      '',
      markdownTable(rows),
      '',
      ...verdict.map((v) => `- ${v}`),
    ].join('\n'),
  )
})
