// Benchmark (c): fan-out. POST /messages to a channel with 1,000 subscribers
// on PostgreSQL, one request at a time: p50 against a raw baseline through the
// pg driver in the same run — a single-row insert plus a 1,000-row set-based
// insert (INSERT … SELECT unnest($1::int[])) into scratch tables. Target ≤ 2×,
// with the node's event-loop delay p99 (perf_hooks.monitorEventLoopDelay,
// measured inside the node) ≤ 20 ms during the run.
//
//   npm run build && node dist/bench/events-fanout.js
//
// The node is a child process (bench/roost-node.ts: PostgreSQL, Redis bus,
// RATE_LIMITING=off, LOG_LEVEL=warn). The 999 extra users are inserted by this
// process through Roost's own insertUser (no password, so no hashing); they join
// the default channel `general`, which then has 1,000 subscribers. No queue is
// registered, so the Redis side of the fan-out is one append with no target.
// Env: BENCH_REQUESTS (default 100), BENCH_WARMUP (requests, default 10), BENCH_SUBSCRIBERS (default 1000).
import pg from 'pg'
import { openDatabase } from '../src/db/client.js'
import { insertUser } from '../src/actions/user-rows.js'
import { api, clock, clusterEnv, fmt, machine, markdownTable, ownerAuth, percentile, recordResult, run, startChild, table } from './support.js'

const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 100)
const WARMUP = Number(process.env.BENCH_WARMUP ?? 10)
const SUBSCRIBERS = Number(process.env.BENCH_SUBSCRIBERS ?? 1000)
const QUEUES = Number(process.env.BENCH_QUEUES ?? 0)

async function seedUsers(databaseUrl: string): Promise<void> {
  const database = await openDatabase({ databaseUrl })
  const realm = await database.prisma.realm.findFirstOrThrow({ where: { stringId: '' } })
  for (let done = 1; done < SUBSCRIBERS; ) {
    const batch = Math.min(100, SUBSCRIBERS - done)
    await database.prisma.$transaction(async (tx) => {
      for (let i = 0; i < batch; i++) await insertUser(tx, realm, { email: `sub${done + i}@example.com`, fullName: `Subscriber ${done + i}`, dateJoined: new Date() })
    }, { timeout: 120_000 })
    done += batch
  }
  await database.close()
}

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
 * The same two raw statements into Roost's own `message` and `user_message`
 * tables (with their foreign keys and the partial indexes the unread, starred
 * and mention queries need): the database's share of a send, for reference.
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
    await client.query('INSERT INTO user_message (user_id, message_id, flags) SELECT u, $2, 0 FROM unnest($1::int[]) AS u', [userIds, rows[0]?.id])
    if (i >= WARMUP) times.push(clock() - start)
  }
  await client.end()
  return times
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

  if (QUEUES > 0) {
    const client = new pg.Client({ connectionString: databaseUrl })
    await client.connect()
    const { rows } = await client.query<{ email: string; api_key: string }>('SELECT email, api_key FROM user_profile WHERE is_active ORDER BY id LIMIT $1', [QUEUES])
    await client.end()
    let registered = 0
    for (const u of rows) {
      const userAuth = `Basic ${Buffer.from(`${u.email}:${u.api_key}`).toString('base64')}`
      await api(base, userAuth, 'POST', '/register', { event_types: ['message'], fetch_event_types: [] })
      registered++
    }
    console.log(`registered ${registered} queues`)
  }
  const before = machine()
  const send = (i: number) => api(base, auth, 'POST', '/messages', { type: 'stream', to: 'general', topic: 'fan-out', content: `message ${i}` })
  for (let i = 0; i < WARMUP; i++) await send(i)
  await node.ask({ kind: 'eld-start' })
  const roost: number[] = []
  for (let i = 0; i < REQUESTS; i++) {
    const start = clock()
    await send(i)
    roost.push(clock() - start)
  }
  const eld = await node.ask<{ p50: number; p99: number; max: number }>({ kind: 'eld-stop' })
  await node.stop()
  const raw = await measureRaw(databaseUrl)
  const rawRoost = await measureRawRoostTables(databaseUrl)
  const after = machine()

  const r50 = percentile(roost, 50)
  const b50 = percentile(raw, 50)
  const rows = [
    ['', 'p50 ms', 'p99 ms', 'event-loop delay p99 ms'],
    [`Roost POST /messages, ${subscribers} subscribers`, fmt(r50), fmt(percentile(roost, 99)), `${fmt(eld.p99)} (max ${fmt(eld.max)})`],
    [`raw pg: 1-row insert + ${SUBSCRIBERS}-row unnest insert`, fmt(b50), fmt(percentile(raw, 99)), ''],
    ['ratio Roost/raw', fmt(r50 / b50), '', ''],
    [`(for reference) the same raw inserts into Roost's message and user_message tables`, fmt(percentile(rawRoost, 50)), fmt(percentile(rawRoost, 99)), ''],
    ['(for reference) ratio Roost/raw into Roost\'s tables', fmt(r50 / percentile(rawRoost, 50)), '', ''],
  ]
  console.log(`${before}\n${REQUESTS} sequential requests after ${WARMUP} warm-up\n`)
  console.log(table(rows))
  const verdict = [
    `p50 ${fmt(r50 / b50)}× raw (target ≤ 2×): ${r50 / b50 <= 2 ? 'met' : 'MISSED'}`,
    `event-loop delay p99 ${fmt(eld.p99)} ms (target ≤ 20 ms): ${eld.p99 <= 20 ? 'met' : 'MISSED'}`,
  ]
  console.log(`\n${verdict.join('\n')}`)
  recordResult(
    'events-fanout',
    [
      `### (c) Fan-out to 1,000 subscribers — \`node dist/bench/events-fanout.js\``,
      '',
      `Run ${new Date().toISOString()}; machine at start: ${before}; at end: load average ${after.split('load average ')[1]}.`,
      `${REQUESTS} sequential POST /messages after ${WARMUP} warm-up; node: child process, PostgreSQL + Redis bus, no queues registered; event-loop delay measured inside the node; raw baseline through pg in this process, same database.`,
      '',
      markdownTable(rows),
      '',
      ...verdict.map((v) => `- ${v}`),
    ].join('\n'),
  )
})
