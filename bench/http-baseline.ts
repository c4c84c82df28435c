// HTTP baseline: requests/s of Roost against a bare Fastify route returning
// the same JSON, measured in the same run on the same machine.
//
//   npm run bench                     (builds, then runs this file)
//
// Both servers run as child processes (Roost as `node dist/src/server.js`
// with RATE_LIMITING=off); autocannon runs in this process. Roost uses
// PostgreSQL by default — PGlite runs every query on the main thread with
// fsync off and is not meant for latency figures — unless BENCH_EMBEDDED=1.
//
// Environment: BENCH_DURATION (seconds per run, default 10), BENCH_WARMUP
// (default 2), BENCH_CONNECTIONS (default 10), ROOST_BENCH_DATABASE_URL
// (default postgresql://postgres@127.0.0.1:5432/roost_bench, recreated).
// Prints figures only; nothing here asserts a time.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:net'
import { cpus, tmpdir } from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import autocannon, { type Result } from 'autocannon'
import { SERVER_NODE_OPTIONS } from '../src/node-options.js'

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..')
const DURATION = Number(process.env.BENCH_DURATION ?? 10)
const WARMUP = Number(process.env.BENCH_WARMUP ?? 2)
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 10)
const EMBEDDED = process.env.BENCH_EMBEDDED === '1'
const DATABASE_URL = process.env.ROOST_BENCH_DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/roost_bench'
const OWNER = { email: 'bench-owner@example.com', password: 'bench-password-1' }

const children: ChildProcess[] = []
const scratch = mkdtempSync(path.join(tmpdir(), 'roost-bench-'))

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer()
    probe.on('error', reject)
    probe.listen(0, '127.0.0.1', () => {
      const address = probe.address()
      probe.close(() => resolve(typeof address === 'object' && address ? address.port : 0))
    })
  })
}

/** Spawns a node script and resolves once its output matches `ready`. */
function startProcess(args: string[], env: Record<string, string>, ready: RegExp): Promise<ChildProcess> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...SERVER_NODE_OPTIONS, ...args], { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] })
    children.push(child)
    let out = ''
    const timer = setTimeout(() => reject(new Error(`${args[0]} did not start in 120 s:\n${out}`)), 120_000)
    const onData = (chunk: Buffer) => {
      out += chunk.toString()
      if (ready.test(out)) {
        clearTimeout(timer)
        resolve(child)
      }
    }
    child.stdout?.on('data', onData)
    child.stderr?.on('data', (chunk: Buffer) => (out += chunk.toString()))
    child.on('exit', (code) => {
      clearTimeout(timer)
      reject(new Error(`${args[0]} exited with ${code}:\n${out}`))
    })
  })
}

function runNode(args: string[], env: Record<string, string>): void {
  const res = spawnSync(process.execPath, args, { cwd: ROOT, env: { ...process.env, ...env }, stdio: 'inherit' })
  if (res.status !== 0) throw new Error(`node ${args.join(' ')} exited with ${res.status}`)
}

async function startRoost(): Promise<{ base: string; auth: string }> {
  const port = await freePort()
  const env: Record<string, string> = {
    PORT: String(port),
    HOST: '127.0.0.1',
    RATE_LIMITING: 'off',
    LOG_LEVEL: 'warn',
    BOOTSTRAP_REALM_NAME: 'Roost bench',
    BOOTSTRAP_OWNER_EMAIL: OWNER.email,
    BOOTSTRAP_OWNER_PASSWORD: OWNER.password,
    DATA_DIR: path.join(scratch, 'data'),
  }
  if (!EMBEDDED) {
    runNode(['scripts/ensure-test-db.mjs', '--fresh', DATABASE_URL], {})
    runNode(['dist/src/db/migrate-cli.js'], { DATABASE_URL })
    env.DATABASE_URL = DATABASE_URL
  }
  await startProcess(['dist/src/server.js'], env, /roost: serving /)
  const base = `http://127.0.0.1:${port}`
  const res = await fetch(`${base}/api/v1/fetch_api_key`, { method: 'POST', body: new URLSearchParams({ username: OWNER.email, password: OWNER.password }) })
  const body = (await res.json()) as { api_key?: string }
  // Without a key the authenticated row is skipped below (its request fails).
  if (!body.api_key) console.log(`fetch_api_key failed: ${res.status} ${JSON.stringify(body)}`)
  return { base, auth: `Basic ${Buffer.from(`${OWNER.email}:${body.api_key ?? ''}`).toString('base64')}` }
}

async function getJson(url: string, headers: Record<string, string> = {}): Promise<unknown> {
  const res = await fetch(url, { headers })
  if (res.status !== 200) throw new Error(`GET ${url} answered ${res.status}: ${await res.text()}`)
  return res.json()
}

async function measure(url: string, headers: Record<string, string>): Promise<Result> {
  if (WARMUP > 0) await autocannon({ url, headers, connections: CONNECTIONS, duration: WARMUP })
  return autocannon({ url, headers, connections: CONNECTIONS, duration: DURATION })
}

const targets = [
  { name: 'GET /api/v1/server_settings', path: '/api/v1/server_settings', auth: false },
  { name: 'GET /api/v1/users/me (Basic auth)', path: '/api/v1/users/me', auth: true },
]

async function main(): Promise<void> {
  const roost = await startRoost()
  // The bare server answers each path with exactly the body Roost returned.
  const bodies: Record<string, unknown> = {}
  const available = []
  for (const t of targets) {
    try {
      bodies[t.path] = await getJson(roost.base + t.path, t.auth ? { authorization: roost.auth } : {})
      available.push(t)
    } catch (error) {
      console.log(`skipping ${t.name}: ${error instanceof Error ? error.message : String(error)}`)
    }
  }
  const routesFile = path.join(scratch, 'routes.json')
  writeFileSync(routesFile, JSON.stringify(bodies))
  const barePort = await freePort()
  await startProcess(['dist/bench/bare-fastify.js', routesFile, String(barePort)], {}, /listening/)
  const bare = `http://127.0.0.1:${barePort}`

  console.log(`node ${process.version}, ${cpus().length} CPUs (${cpus()[0]?.model ?? '?'}), database: ${EMBEDDED ? 'embedded PGlite' : 'PostgreSQL'}`)
  console.log(`autocannon: ${CONNECTIONS} connections, ${WARMUP} s warm-up, ${DURATION} s measured per row\n`)
  const rows: string[][] = [['endpoint', 'Roost req/s', 'bare req/s', 'Roost/bare', 'Roost p50/p99 ms', 'bare p50/p99 ms', 'non-2xx']]
  for (const t of available) {
    const headers: Record<string, string> = t.auth ? { authorization: roost.auth } : {}
    const r = await measure(roost.base + t.path, headers)
    const b = await measure(bare + t.path, headers)
    rows.push([
      t.name,
      r.requests.average.toFixed(0),
      b.requests.average.toFixed(0),
      (r.requests.average / b.requests.average).toFixed(2),
      `${r.latency.p50}/${r.latency.p99}`,
      `${b.latency.p50}/${b.latency.p99}`,
      `${r.non2xx + r.errors}/${b.non2xx + b.errors}`,
    ])
  }
  const widths = rows[0].map((_, i) => Math.max(...rows.map((row) => row[i].length)))
  for (const row of rows) console.log(row.map((cell, i) => (i === 0 ? cell.padEnd(widths[i]) : cell.padStart(widths[i]))).join('  '))
}

function cleanup(): void {
  for (const child of children) if (child.exitCode === null) child.kill('SIGTERM')
  rmSync(scratch, { recursive: true, force: true })
}

main()
  .then(() => {
    cleanup()
    process.exit(0)
  })
  .catch((error: unknown) => {
    console.error(error)
    cleanup()
    process.exit(1)
  })
