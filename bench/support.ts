// Shared by the event-system benchmarks (events-*.ts): child processes with an
// IPC channel, the machine description, percentiles, and bench/results/.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:net'
import { cpus, loadavg } from 'node:os'
import path from 'node:path'
import { performance } from 'node:perf_hooks'
import { fileURLToPath } from 'node:url'
import autocannon from 'autocannon'
import { SERVER_NODE_OPTIONS } from '../src/node-options.js'

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..')
export const BENCH_DATABASE_URL = process.env.ROOST_BENCH_DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/roost_bench'
export const BENCH_REDIS_URL = process.env.ROOST_BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379'
/**
 * ROOST_BENCH_REDIS_CLUSTER_NODES (host:port,…): the nodes run on that Redis
 * Cluster (REDIS_CLUSTER_NODES) instead of BENCH_REDIS_URL; raw-Redis
 * baselines stay on BENCH_REDIS_URL. Start one with
 * `node scripts/redis-topology.mjs cluster` (3 masters, 3 replicas).
 */
export const BENCH_REDIS_CLUSTER_NODES = process.env.ROOST_BENCH_REDIS_CLUSTER_NODES
/** Database names: <prefix><benchmark> (ROOST_BENCH_DB_PREFIX, default roost_bench_; must start roost_bench or roost_redis_bench). */
const BENCH_DB_PREFIX = process.env.ROOST_BENCH_DB_PREFIX ?? 'roost_bench_'
/** What the results are of, when not the defaults: a Redis Cluster. Each variant records its own result block. */
export const BENCH_VARIANT = BENCH_REDIS_CLUSTER_NODES ? 'cluster' : ''
export const OWNER = { email: 'bench-owner@example.com', password: 'bench-password-1' }

/** Wall-clock milliseconds with sub-millisecond resolution, comparable across processes of this machine. */
export const clock = (): number => performance.timeOrigin + performance.now()

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer()
    probe.on('error', reject)
    probe.listen(0, '127.0.0.1', () => {
      const address = probe.address()
      probe.close(() => resolve(typeof address === 'object' && address ? address.port : 0))
    })
  })
}

export interface Child {
  process: ChildProcess
  port: number
  /** Sends an IPC request and resolves with the child's reply. */
  ask<T>(message: Record<string, unknown>): Promise<T>
  /** IPC messages the child sends unasked (e.g. publish timestamps). */
  onMessage(fn: (message: Record<string, unknown>) => void): void
  stop(): Promise<void>
}

const children: ChildProcess[] = []

/** Starts `node dist/bench/<script>.js` with IPC; resolves once it prints "listening". */
export async function startChild(script: string, env: Record<string, string>, nodeArgs: string[] = []): Promise<Child> {
  const port = await freePort()
  const child = spawn(process.execPath, [...SERVER_NODE_OPTIONS, ...nodeArgs, path.join(ROOT, 'dist/bench', `${script}.js`)], {
    cwd: ROOT,
    // Benchmarks hold thousands of queues of one user: EVENT_QUEUES_PER_USER at its maximum.
    env: { ...process.env, RATE_LIMITING: 'off', LOG_LEVEL: 'warn', EVENT_QUEUES_PER_USER: '10000', PORT: String(port), HOST: '127.0.0.1', ...env },
    stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
  })
  children.push(child)
  let out = ''
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${script} did not start in 120 s:\n${out}`)), 120_000)
    const onData = (chunk: Buffer) => {
      out += chunk.toString()
      if (/listening/.test(out)) {
        clearTimeout(timer)
        resolve()
      }
    }
    child.stdout?.on('data', onData)
    child.stderr?.on('data', (chunk: Buffer) => {
      out += chunk.toString()
      process.stderr.write(`[${script}] ${chunk.toString()}`)
    })
    child.once('exit', (code) => {
      clearTimeout(timer)
      reject(new Error(`${script} exited with ${code}:\n${out}`))
    })
  })
  let nextId = 0
  const pending = new Map<number, (value: unknown) => void>()
  const listeners: Array<(message: Record<string, unknown>) => void> = []
  child.on('message', (raw) => {
    const message = raw as Record<string, unknown>
    if (typeof message.replyTo === 'number') {
      pending.get(message.replyTo)?.(message.value)
      pending.delete(message.replyTo)
    } else for (const fn of listeners) fn(message)
  })
  return {
    process: child,
    port,
    ask<T>(message: Record<string, unknown>): Promise<T> {
      const id = nextId++
      return new Promise<T>((resolve) => {
        pending.set(id, (value) => resolve(value as T))
        child.send({ ...message, id })
      })
    },
    onMessage: (fn) => void listeners.push(fn),
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve()
        child.once('exit', () => resolve())
        child.kill('SIGTERM')
      }),
  }
}

export function stopAll(): void {
  for (const child of children) if (child.exitCode === null) child.kill('SIGTERM')
}

/** Drops and recreates a roost_bench* database. */
export function freshDatabase(url: string): void {
  const res = spawnSync(process.execPath, [path.join(ROOT, 'scripts/ensure-test-db.mjs'), '--fresh', url], { cwd: ROOT, stdio: 'inherit' })
  if (res.status !== 0) throw new Error(`ensure-test-db exited with ${res.status}`)
}

export function benchDatabase(name: string): string {
  const url = new URL(BENCH_DATABASE_URL)
  url.pathname = `/${BENCH_DB_PREFIX}${name}`
  return url.toString()
}

/**
 * A fresh roost_bench_<name> database and the environment of a node on it:
 * PostgreSQL, the Redis bus under a new prefix, and the bench owner (the
 * bootstrap runs on the first node started; later nodes find the realm).
 */
export function clusterEnv(name: string): Record<string, string> {
  const databaseUrl = benchDatabase(name)
  freshDatabase(databaseUrl)
  return {
    DATABASE_URL: databaseUrl,
    ...(BENCH_REDIS_CLUSTER_NODES ? { REDIS_CLUSTER_NODES: BENCH_REDIS_CLUSTER_NODES } : { REDIS_URL: BENCH_REDIS_URL }),
    BENCH_REDIS_PREFIX: `bench:${randomUUID()}`,
    BOOTSTRAP_REALM_NAME: 'Roost bench',
    BOOTSTRAP_OWNER_EMAIL: OWNER.email,
    BOOTSTRAP_OWNER_PASSWORD: OWNER.password,
  }
}

export async function ownerAuth(base: string): Promise<string> {
  const res = await fetch(`${base}/api/v1/fetch_api_key`, { method: 'POST', body: new URLSearchParams({ username: OWNER.email, password: OWNER.password }) })
  const body = (await res.json()) as { api_key?: string }
  if (!body.api_key) throw new Error(`fetch_api_key failed: ${res.status} ${JSON.stringify(body)}`)
  return `Basic ${Buffer.from(`${OWNER.email}:${body.api_key}`).toString('base64')}`
}

// Response bodies are read loosely (as in test/support/expect.ts); `any` keeps field access short.
export type Json = Record<string, any>

export async function api(base: string, auth: string, method: string, url: string, params: Record<string, unknown> = {}): Promise<Json> {
  const encoded = new URLSearchParams(Object.entries(params).map(([k, v]) => [k, typeof v === 'string' ? v : JSON.stringify(v)]))
  const inQuery = method === 'GET'
  const res = await fetch(`${base}/api/v1${url}${inQuery ? `?${encoded}` : ''}`, {
    method,
    headers: { authorization: auth, ...(inQuery ? {} : { 'content-type': 'application/x-www-form-urlencoded' }) },
    ...(inQuery ? {} : { body: encoded.toString() }),
  })
  const body = (await res.json()) as Json
  if (body.result !== 'success') throw new Error(`${method} ${url}: ${res.status} ${JSON.stringify(body).slice(0, 300)}`)
  return body
}

export function percentile(values: number[], p: number): number {
  if (values.length === 0) return NaN
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))] as number
}

/** CPU seconds (user + system) process `pid` has used so far (Linux /proc; 100 clock ticks per second). */
export function cpuSeconds(pid: number): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? []
    // After "pid (comm) ": state is field 0; utime and stime are fields 11 and 12.
    return (Number(fields[11]) + Number(fields[12])) / 100
  } catch {
    return 0 // the process has exited
  }
}

/** One request type autocannon sends, as measureRequests() takes it. */
export interface RequestTarget {
  name: string
  method: 'GET' | 'POST'
  path: string
  /** urlencoded form body */
  body?: string
}

export interface RequestFigures {
  rps: number
  p50: number
  p99: number
  /** CPU time of process `pid` per answered request, µs. */
  cpuUs: number
  /** CPU time of every PostgreSQL and every Redis process on the machine per answered request, µs (other tenants included). */
  postgresCpuUs: number
  redisCpuUs: number
  errors: number
}

/** Sends `target` with autocannon for 2 s (warm-up), then `duration` s measured: throughput, latency and the CPU of `pid` per request. */
export async function measureRequests(pid: number, base: string, auth: string, target: RequestTarget, options: { connections: number; duration: number }): Promise<RequestFigures> {
  const request = {
    url: base + target.path,
    method: target.method,
    headers: { authorization: auth, ...(target.body ? { 'content-type': 'application/x-www-form-urlencoded' } : {}) },
    ...(target.body ? { body: target.body } : {}),
    connections: options.connections,
  }
  await autocannon({ ...request, duration: 2 })
  const readings = () => ({ node: cpuSeconds(pid), postgres: cpuSecondsByProcess(['postgres']), redis: cpuSecondsByProcess(['redis-server']) })
  const before = readings()
  const result = await autocannon({ ...request, duration: options.duration })
  const after = readings()
  const perRequest = (seconds: number) => (seconds * 1e6) / Math.max(1, result.requests.total)
  return {
    rps: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    cpuUs: perRequest(after.node - before.node),
    postgresCpuUs: perRequest(cpuSecondsBetween(before.postgres, after.postgres)),
    redisCpuUs: perRequest(cpuSecondsBetween(before.redis, after.redis)),
    errors: result.non2xx + result.errors,
  }
}

/** CPU seconds used so far by each process whose command name is one of `names` (e.g. postgres, redis-server), by PID. */
export function cpuSecondsByProcess(names: string[]): Map<number, number> {
  const out = new Map<number, number>()
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    try {
      if (names.includes(readFileSync(`/proc/${entry}/comm`, 'utf8').trim())) out.set(Number(entry), cpuSeconds(Number(entry)))
    } catch {
      // gone meanwhile
    }
  }
  return out
}

/**
 * CPU seconds the processes spent between two cpuSecondsByProcess readings:
 * a process started meanwhile counts whole, one that ended meanwhile is not
 * counted (its time is gone with it; short-lived PostgreSQL workers).
 */
export function cpuSecondsBetween(before: Map<number, number>, after: Map<number, number>): number {
  let total = 0
  for (const [pid, seconds] of after) total += seconds - (before.get(pid) ?? 0)
  return total
}

/** CPU seconds the whole machine has spent busy so far (not idle, not waiting for I/O), over all cores. */
export function machineBusySeconds(): number {
  const [, ...ticks] = (readFileSync('/proc/stat', 'utf8').split('\n')[0] ?? '').trim().split(/\s+/).map(Number)
  const [user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0, steal = 0] = ticks
  void idle
  void iowait
  return (user + nice + system + irq + softirq + steal) / 100
}

export function machine(): string {
  let model = cpus()[0]?.model ?? '?'
  try {
    model = /model name\s*:\s*(.*)/.exec(readFileSync('/proc/cpuinfo', 'utf8'))?.[1] ?? model
  } catch {
    // not Linux
  }
  const nproc = spawnSync('nproc', { encoding: 'utf8' }).stdout.trim() || String(cpus().length)
  return `${nproc} CPUs (${model}), node ${process.version}, load average ${loadavg().map((l) => l.toFixed(2)).join(' ')}`
}

export const fmt = (n: number, digits = 2): string => (Number.isFinite(n) ? n.toFixed(digits) : String(n))

/**
 * Writes this run's figures to bench/results/<date>-<name>[-variant].md (a
 * new file each run: -2, -3… when the name is taken) with the date, the
 * machine and the commit. bench/README.md's table of current figures is
 * updated by hand from it.
 */
export function recordResult(name: string, markdown: string): void {
  if (BENCH_VARIANT) {
    name = `${name}-${BENCH_VARIANT}`
    markdown = `${markdown.trim()}\n\nVariant: nodes on a 3-master Redis Cluster (ROOST_BENCH_REDIS_CLUSTER_NODES).`
  }
  const dir = path.join(ROOT, 'bench/results')
  mkdirSync(dir, { recursive: true })
  const now = new Date()
  const date = now.toISOString().slice(0, 10)
  let file = path.join(dir, `${date}-${name}.md`)
  for (let n = 2; existsSync(file); n++) file = path.join(dir, `${date}-${name}-${n}.md`)
  const commit = spawnSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: ROOT, encoding: 'utf8' }).stdout.trim() || 'unknown'
  const dirty = spawnSync('git', ['status', '--porcelain', '--untracked-files=no'], { cwd: ROOT, encoding: 'utf8' }).stdout.trim() !== ''
  const header = [`# ${name}`, '', `- date: ${now.toISOString()}`, `- machine: ${machine()}`, `- commit: ${commit}${dirty ? ' (with uncommitted changes)' : ''}`, '']
  writeFileSync(file, `${header.join('\n')}\n${markdown.trim()}\n`)
  console.log(`\nrecorded in ${path.relative(ROOT, file)}`)
}

export function table(rows: string[][]): string {
  const widths = rows[0]?.map((_, i) => Math.max(...rows.map((row) => (row[i] ?? '').length))) ?? []
  return rows.map((row) => row.map((cell, i) => (i === 0 ? cell.padEnd(widths[i] ?? 0) : cell.padStart(widths[i] ?? 0))).join('  ')).join('\n')
}

export function markdownTable(rows: string[][]): string {
  const [head, ...body] = rows
  if (!head) return ''
  return [`| ${head.join(' | ')} |`, `|${head.map(() => '---').join('|')}|`, ...body.map((r) => `| ${r.join(' | ')} |`)].join('\n')
}

export function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} timed out after ${ms} ms`)), ms)
  })
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer))
}

export function run(main: () => Promise<void>): void {
  main()
    .then(() => {
      stopAll()
      process.exit(0)
    })
    .catch((error: unknown) => {
      console.error(error)
      stopAll()
      process.exit(1)
    })
}

/**
 * The process's memory (call after a full GC): resident set size, and the
 * live memory V8 and Node account for (heap in use, external and array
 * buffers), which unlike RSS shrinks when objects are freed.
 */
export function memoryAfterGc(): { rss: number; live: number } {
  const usage = process.memoryUsage()
  return { rss: usage.rss, live: usage.heapUsed + usage.external + usage.arrayBuffers }
}
