#!/usr/bin/env node
// The runner behind `npm test` (which builds first). Runs the compiled tap
// tests under dist/test, each file a plain node process
// (scripts/run-test-files.mjs; ROOST_TEST_JOBS at a time, 2 by default), in
// phases:
//
//   unit      every test except test/cluster, test/failure, test/e2e,
//             test/topology, test/browser and test/authz, on in-memory PGlite
//   postgres  on PostgreSQL (ROOST_TEST_DATABASE_URL, a fresh roost_test
//             database): the SQL-sensitive files of the unit phase again
//             (SQL_SENSITIVE below), and the authorization matrix (test/authz),
//             which runs only here: it checks the routes' rules, which do not
//             depend on the database
//   cluster   test/cluster: several nodes sharing PostgreSQL and Redis
//   failure   test/failure: three server processes on a PostgreSQL and a Redis
//             the tests start, stop, kill and slow down themselves (one file
//             at a time; the open-files limit raised for the reconnect storm)
//   topology  test/topology: a Redis Cluster (3 masters + 3 replicas) and a
//             Sentinel setup the tests start from redis-server: the bus,
//             presence and rate-limiter contracts on them, a cluster master
//             killed, a Sentinel failover, startup errors (one file at a time)
//   e2e       test/e2e: the real server process, driven over HTTP
//   browser   test/browser: the web app in Debian's Chromium (playwright-core)
//             against Roost nodes the tests start (one browser and one server
//             per file; one file at a time)
//   sentinel  the files of test/cluster that depend on Redis routing
//             (REDIS_ROUTING below) again, their nodes reaching Redis through
//             Sentinel (a master, a replica and three Sentinels started for
//             the phase by scripts/redis-topology.mjs)
//   redis-cluster  the same files on a Redis Cluster of 3 masters + 3 replicas
//             (started for the phase by scripts/redis-topology.mjs)
//
//   node scripts/test.mjs [phase …]      (default: all, in the lanes of LANES below)
//   node scripts/test.mjs --list [phase …]   the files of each phase, and why
//                                         a file runs in a second phase
//
// Which files run twice is decided per file, in the two tables below, each
// entry with its reason; a test file that uses the database and is in
// neither SQL_SENSITIVE nor SQL_ONCE runs once (unit phase), unless its
// source shows an SQL signal (SQL_SIGNAL: raw SQL, transactions, a database
// of its own): then it runs on PostgreSQL too, and the runner asks for it to
// be classified. A test/cluster file in neither REDIS_ROUTING nor
// REDIS_INDEPENDENT runs on every topology, and is named likewise. A table
// entry naming no test file is printed.
//
// Only tests whose TypeScript source still exists are run, so a stale file
// left in dist/ by a deleted test never runs. Every phase runs even when an
// earlier one failed; the exit code is non-zero if any failed.
import { spawn } from 'node:child_process'
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { runTestFiles } from './run-test-files.mjs'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const DATABASE_URL = process.env.ROOST_TEST_DATABASE_URL || 'postgresql://postgres@127.0.0.1:5432/roost_test'
const REDIS_URL = process.env.ROOST_TEST_REDIS_URL || 'redis://127.0.0.1:6379'
/** Test files run at once in a phase that does not say otherwise (ROOST_TEST_JOBS). */
const JOBS = Number(process.env.ROOST_TEST_JOBS) || 2

/** test/**\/*.test.ts, as paths relative to test/, sorted. */
function sourceTests(dir = path.join(root, 'test'), prefix = '') {
  const found = []
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const rel = prefix ? `${prefix}/${entry.name}` : entry.name
    if (entry.isDirectory()) found.push(...sourceTests(path.join(dir, entry.name), rel))
    else if (entry.name.endsWith('.test.ts')) found.push(rel)
  }
  return found.sort()
}

const under = (dir) => (rel) => rel.startsWith(`${dir}/`)
const all = sourceTests()
const isCluster = under('cluster')
const isE2e = under('e2e')
const isFailure = under('failure')
const isAuthz = under('authz')
const isTopology = under('topology')
const isBrowser = under('browser')
const source = (rel) => readFileSync(path.join(root, 'test', rel), 'utf8')
const usesDatabase = (rel) => /support\/app\.js['"]/.test(source(rel))

/**
 * Files of the unit phase that run on PostgreSQL too: they exercise what can
 * behave differently on PGlite (one connection in this process) and on
 * PostgreSQL (a server, many connections, the pg driver's own decoding):
 * raw and prepared statements, plans, locking, transactions and snapshots,
 * LISTEN/NOTIFY, concurrent requests. Route tests that only pass through the
 * same code paths run once, on PGlite.
 */
const SQL_SENSITIVE = {
  'db/fast-query.test.ts': "named statements through the pg driver; a plan PostgreSQL refuses after a migration (0A000)",
  'db/flag-sql.test.ts': "PostgreSQL's generic plans must use the partial indexes",
  'db/hot-queries.test.ts': 'hot-path lookups through the pg driver return what Prisma returns',
  'db/message-reads.test.ts': "GET /messages' named statements: generic plans (pg_prepared_statements)",
  'db/send-queries.test.ts': "the send statements through the pg driver return what Prisma returns",
  'events/register-race.test.ts': 'the repeatable-read snapshot and transaction IDs of POST /register',
  'http/auth-cache.test.ts': 'the authentication cache emptied by NOTIFY; transactions',
  'http/register-core.test.ts': "the register state in one statement's snapshot and in a repeatable-read transaction",
  'http/messages-get.test.ts': "every narrow's statement through the pg driver (fastQuery) and its plan",
  'http/limits.test.ts': 'concurrent role changes (locking); bounded work per request',
  'http/user-groups.test.ts': 'concurrent subgroup additions (row locks against a cycle)',
  'notifications/missed-message-emails.test.ts': "the email loop's claims (FOR UPDATE SKIP LOCKED, leases)",
  'notifications/push-notifications.test.ts': "the push loop's claims (FOR UPDATE SKIP LOCKED, leases)",
  'notifications/notification-metrics.test.ts': 'gauges counted over a database of its own (ownDatabase)',
  'scheduler/due-probe.test.ts': "the loops' idle probe and claims: statements and transactions",
  'jobs/leased.test.ts': 'leases taken by several nodes: FOR UPDATE SKIP LOCKED claims and timestamptz arithmetic',
}

/** Files with an SQL signal that still run once (unit phase, PGlite), and why. */
const SQL_ONCE = {
  'http/outbound-requests.test.ts': 'the outbound policy; raw SQL only makes rows due (the claims: push-notifications)',
  'http/set-based.test.ts': 'counts statements, which are the same on both drivers (support/statements.ts); pg_notify only empties a cache',
  'notifications/push-apns.test.ts': "the APNs transport; raw SQL only makes rows due (the claims: push-notifications)",
  'notifications/push-bouncer.test.ts': "the bouncer transport; raw SQL only makes rows due (the claims: push-notifications)",
  'notifications/push-fcm.test.ts': "the FCM transport; raw SQL only makes rows due (the claims: push-notifications)",
}

/** A sign in a test's source that it may be SQL-sensitive (see SQL_SENSITIVE). */
const SQL_SIGNAL = /\$queryRaw|\$executeRaw|\$transaction|FOR UPDATE|SKIP LOCKED|ownDatabase|twoNodesOwnConnections|TEST_DATABASE_URL/

/** test/cluster files that run again on Sentinel and on a Redis Cluster: what they check travels through Redis (keys, slots, pub/sub, failover). */
const REDIS_ROUTING = {
  'cluster/acknowledgements.test.ts': 'queue pruning in Redis and the pub/sub message to the nodes watching the queue',
  'cluster/event-queues.test.ts': "queues in Redis served by any node; the bus's pub/sub",
  'cluster/event-system.test.ts': 'register, poll and produce on different nodes; heartbeats and garbage collection of Redis queues',
  'cluster/presence-copies.test.ts': 'presence rows read from Redis on every request',
  'cluster/register-consistency.test.ts': "events through the bus into Redis queues against the register snapshot",
}

/** test/cluster files that run once (cluster phase, one Redis): what they check travels through PostgreSQL. */
const REDIS_INDEPENDENT = {
  'cluster/auth-cache.test.ts': "the authentication cache across nodes: PostgreSQL's NOTIFY",
  'cluster/missed-message-emails.test.ts': 'exactly-once emails: claims and leases in PostgreSQL',
  'cluster/push-notifications.test.ts': 'exactly-once pushes: claims and leases in PostgreSQL',
  'cluster/scheduled-delivery.test.ts': 'exactly-once delivery: claims in PostgreSQL',
  'cluster/user-data-cache.test.ts': "the user-data cache across nodes: PostgreSQL's NOTIFY",
  'cluster/web-sessions.test.ts': 'browser sessions across nodes: rows in the shared database',
}

const problems = []
// A stale entry: printed, so that it is removed.
for (const [name, table] of Object.entries({ SQL_SENSITIVE, SQL_ONCE, REDIS_ROUTING, REDIS_INDEPENDENT })) {
  for (const rel of Object.keys(table)) if (!all.includes(rel)) problems.push(`${name} names test/${rel}, which does not exist`)
}
for (const problem of problems) console.error(`test: ${problem}`)
const unclassified = []
/** Whether a test/cluster file runs again on Sentinel and on a Redis Cluster. */
function onTopologies(rel) {
  if (rel in REDIS_ROUTING) return true
  if (rel in REDIS_INDEPENDENT) return false
  unclassified.push(rel)
  return true
}
/** Why a unit-phase file runs on PostgreSQL too, or undefined. */
function onPostgres(rel) {
  if (rel in SQL_SENSITIVE) return SQL_SENSITIVE[rel]
  if (rel in SQL_ONCE || !usesDatabase(rel) || !SQL_SIGNAL.test(source(rel))) return undefined
  unclassified.push(rel)
  return 'not classified yet: it shows an SQL signal'
}

const withoutDb = { ROOST_TEST_DATABASE_URL: undefined }
/** The test database's URL with `suffix` added to its name. */
const databaseNamed = (suffix) => DATABASE_URL.replace(/\/([^/?]*)(\?|$)/, (_, name, rest) => `/${name}_${suffix}${rest}`)
// The lanes beside the postgres phase, which makes its database afresh, each have a database of their own.
const TOPOLOGY_DATABASE_URL = databaseNamed('redis_topologies')
const topologyDb = () => run(process.execPath, [path.join(root, 'scripts/ensure-test-db.mjs'), TOPOLOGY_DATABASE_URL], {})
const BROWSER_DATABASE_URL = databaseNamed('browser')
const browserDb = () => run(process.execPath, [path.join(root, 'scripts/ensure-test-db.mjs'), BROWSER_DATABASE_URL], {})
const clusterTwice = all.filter(isCluster).filter(onTopologies)
const unitFiles = all.filter((f) => !isCluster(f) && !isE2e(f) && !isFailure(f) && !isAuthz(f) && !isTopology(f) && !isBrowser(f))
const phases = {
  // Files of these two phases share worker processes (scripts/test-batch.mjs): nothing in them outlives its own tests.
  unit: { files: unitFiles, env: withoutDb, batch: true },
  postgres: {
    batch: true,
    files: all.filter((f) => isAuthz(f) || (unitFiles.includes(f) && onPostgres(f) !== undefined)),
    env: { ROOST_TEST_DATABASE_URL: DATABASE_URL },
    before: () => run(process.execPath, [path.join(root, 'scripts/ensure-test-db.mjs'), '--fresh', DATABASE_URL], {}),
  },
  cluster: {
    files: all.filter(isCluster),
    env: { ROOST_TEST_DATABASE_URL: TOPOLOGY_DATABASE_URL, ROOST_TEST_REDIS_URL: REDIS_URL },
    before: topologyDb,
  },
  // Each file starts its own processes; one at a time keeps them from starving each other of CPU.
  failure: { files: all.filter(isFailure), env: withoutDb, jobs: 1, timeoutSeconds: 900, raiseOpenFiles: true },
  // Each file starts its own Redis servers (6 for the cluster, 5 for Sentinel); one at a time.
  topology: { files: all.filter(isTopology), env: { ...withoutDb, ROOST_TEST_REDIS_URL: REDIS_URL }, jobs: 1, timeoutSeconds: 600 },
  e2e: { files: all.filter(isE2e), env: withoutDb },
  // The cluster file needs PostgreSQL and Redis; the others run embedded.
  browser: {
    files: all.filter(isBrowser),
    env: { ROOST_TEST_DATABASE_URL: undefined, ROOST_BROWSER_DATABASE_URL: BROWSER_DATABASE_URL, ROOST_TEST_REDIS_URL: REDIS_URL },
    jobs: 1,
    timeoutSeconds: 600,
    before: browserDb,
  },
  sentinel: { files: clusterTwice, env: { ROOST_TEST_DATABASE_URL: TOPOLOGY_DATABASE_URL }, redisTopology: 'sentinel', before: topologyDb },
  'redis-cluster': { files: clusterTwice, env: { ROOST_TEST_DATABASE_URL: TOPOLOGY_DATABASE_URL }, redisTopology: 'cluster', before: topologyDb },
}

/** Starts scripts/redis-topology.mjs; resolves with its environment for the tests and a stop function. */
function startRedisTopology(kind) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [path.join(root, 'scripts/redis-topology.mjs'), kind], { cwd: root, stdio: ['pipe', 'pipe', 'inherit'] })
    let out = ''
    child.stdout.on('data', (chunk) => {
      out += chunk.toString()
      const line = out.split('\n').find((l) => l.startsWith('{'))
      if (!line) return
      const stop = () =>
        new Promise((done) => {
          child.once('close', done)
          child.stdin.end()
        })
      resolve({ env: JSON.parse(line), stop })
    })
    child.on('close', (code) => reject(new Error(`redis-topology ${kind} exited with ${code}`)))
  })
}

/** The process environment with `env` applied (an undefined value removes the variable). */
function environment(env) {
  const merged = { ...process.env }
  for (const [k, v] of Object.entries(env)) {
    if (v === undefined) delete merged[k]
    else merged[k] = v
  }
  return merged
}

function run(command, args, env) {
  return new Promise((resolve) => {
    const child = spawn(command, args, { cwd: root, env: environment(env), stdio: ['ignore', 'inherit', 'inherit'] })
    child.on('close', (code, signal) => resolve(code ?? (signal ? 1 : 0)))
  })
}

const listing = process.argv[2] === '--list'
const requested = process.argv.slice(listing ? 3 : 2)
for (const name of requested) {
  if (!(name in phases)) {
    console.error(`test: unknown phase '${name}' (phases: ${Object.keys(phases).join(', ')})`)
    process.exit(2)
  }
}
/**
 * `npm test` runs its phases in lanes: the phases of a lane one after the
 * other, the lanes at the same time. The unit and postgres phases keep the
 * CPU busy; the Redis-topology and failure phases spend most of their time
 * waiting (for servers to start, for failovers, for outages to last their
 * length), so the cluster phase shares their lane. The e2e and browser
 * phases, which use about half a core (servers starting, a browser
 * rendering), follow the failure phase in the third lane, which ends well
 * before the first; their servers have 90 s to start. The second lane and the browser
 * phase have PostgreSQL databases of their own, since the postgres phase
 * makes its database afresh. Phases named on the command line run one after
 * the other, in the order given.
 */
const LANES = [['unit', 'postgres'], ['cluster', 'topology', 'sentinel', 'redis-cluster'], ['failure', 'e2e', 'browser']]
const selected = requested.length > 0 ? requested : LANES.flat()
for (const name of Object.keys(phases)) if (!selected.includes(name) && requested.length === 0) throw new Error(`phase ${name} is in no lane`)
for (const rel of new Set(unclassified)) {
  console.error(
    isCluster(rel)
      ? `test: test/${rel} runs on Sentinel and on a Redis Cluster too until it is added to REDIS_ROUTING or REDIS_INDEPENDENT in scripts/test.mjs`
      : `test: test/${rel} shows an SQL signal: it runs on PostgreSQL too until it is added to SQL_SENSITIVE or SQL_ONCE in scripts/test.mjs`,
  )
}
if (listing) {
  const why = (name, rel) =>
    name === 'postgres' && !isAuthz(rel) ? `  (${onPostgres(rel)})` : name === 'sentinel' || name === 'redis-cluster' ? `  (${REDIS_ROUTING[rel] ?? 'not classified yet'})` : ''
  for (const name of selected) {
    console.log(`${name}: ${phases[name].files.length} file(s)`)
    for (const rel of phases[name].files) console.log(`  ${rel}${why(name, rel)}`)
  }
  process.exit(0)
}
const totals = { pass: 0, fail: 0, files: 0 }
const failedPhases = []
const failedFiles = []
/** The failing assertions of each failed file, repeated after the summary so that the end of a long log shows why. */
const failureExcerpts = []
// Longest first, so that the last file of a phase is a short one: the
// durations of the previous run (.tap/test-durations.json), else the compiled
// file's size.
const durationsFile = path.join(root, '.tap/test-durations.json')
const durations = existsSync(durationsFile) ? JSON.parse(readFileSync(durationsFile, 'utf8')) : {}
const weight = (file) => durations[file] ?? statSync(path.join(root, file)).size / 1_000

/** Runs one phase; records its counts and failures in the totals. */
async function runPhase(name) {
  const phase = phases[name]
  const started = Date.now()
  console.log(`\n=== ${name}: ${phase.files.length} test file(s) ===`)
  if (phase.files.length === 0) return
  const compiled = phase.files.map((f) => path.join('dist/test', f.replace(/\.ts$/, '.js')))
  const missing = compiled.filter((f) => !existsSync(path.join(root, f)))
  if (missing.length > 0) {
    console.error(`test: not compiled (did the build fail?): ${missing.join(', ')}`)
    failedPhases.push(name)
    totals.fail += 1
    return
  }
  if (phase.before && (await phase.before()) !== 0) {
    failedPhases.push(name)
    totals.fail += 1
    return
  }
  let topology
  if (phase.redisTopology) {
    try {
      topology = await startRedisTopology(phase.redisTopology)
    } catch (error) {
      console.error(`test: ${error.message}`)
      failedPhases.push(name)
      totals.fail += 1
      return
    }
  }
  const result = await runTestFiles(compiled, {
    root,
    env: environment({ ...phase.env, ...topology?.env }),
    jobs: phase.jobs ?? JOBS,
    timeoutSeconds: phase.timeoutSeconds ?? 300,
    raiseOpenFiles: phase.raiseOpenFiles,
    batch: phase.batch ?? false,
    full: process.env.ROOST_TEST_REPORTER === 'tap',
    weight,
    label: name,
    onFile: (file, seconds) => (durations[file] = Math.round(seconds)),
  })
  await topology?.stop()
  totals.pass += result.pass
  totals.fail += result.fail
  totals.files += result.files
  failedFiles.push(...result.failed.map((f) => `${f} (${name})`))
  for (const [file, excerpt] of Object.entries(result.excerpts)) failureExcerpts.push(`${file} (${name}):\n${excerpt}`)
  const ok = result.failed.length === 0
  console.log(`=== ${name}: ${ok ? 'passed' : 'FAILED'} in ${Math.round((Date.now() - started) / 1000)} s: ${result.pass} asserts passed, ${result.fail} failed ===`)
  if (!ok) failedPhases.push(name)
}

if (requested.length > 0) {
  for (const name of selected) await runPhase(name)
} else {
  await Promise.all(LANES.map(async (lane) => { for (const name of lane) await runPhase(name) }))
}
mkdirSync(path.dirname(durationsFile), { recursive: true })
writeFileSync(durationsFile, JSON.stringify(durations, null, 1))

for (const excerpt of failureExcerpts) console.log(`\ntest: ${excerpt.split('\n').slice(0, 30).join('\n').replace(/^/gm, '  | ')}`)
if (failedFiles.length > 0) console.log(`\ntest: failed files:\n${failedFiles.map((f) => `  ${f}`).join('\n')}`)
console.log(failedPhases.length > 0 ? `\ntest: failed phases: ${failedPhases.join(', ')}` : '\ntest: all phases passed')
console.log(`asserts: ${totals.pass} passed, ${totals.fail} failed, in ${totals.files} file runs`)
process.exit(failedPhases.length > 0 ? 1 : 0)
