// The failure tests' own infrastructure, as real processes on free loopback
// ports, never the shared PostgreSQL and Redis:
//   startRedis()     redis-server --save "" --appendonly no (a restart loses everything)
//   startPostgres()  initdb + postgres in a temp dir (as the `postgres` user when run as root)
//   startNode()      `node dist/src/server.js` on them, so SIGKILL is a real node loss
//   delayProxy()     a TCP proxy that delays every chunk both ways (added Redis latency)
//   Client           HTTP over node:http, reporting connection errors as values
// (test/support/redis-topology.ts builds a Redis Cluster and a Sentinel setup
// from the same pieces: track, tempDir, redisPing.)
// Every process and temp dir is removed by the test's teardown, and by an exit
// hook if the test process dies first.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs'
import { Agent, request, type IncomingHttpHeaders } from 'node:http'
import { createConnection, createServer, type Server, type Socket } from 'node:net'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { setTimeout as delay } from 'node:timers/promises'
import pg from 'pg'
import { freePort, SERVER_ENTRY } from '../e2e/start-server.js'
import { eventually } from '../support/eventually.js'
import { ROOT } from '../support/root.js'
import type { Tap } from '../support/app.js'
import { SERVER_NODE_OPTIONS } from '../../src/node-options.js'

export { freePort }

// ------------------------------------------------------------------ clean-up

const live = new Set<ChildProcess>()
const tempDirs = new Set<string>()
process.on('exit', () => {
  for (const child of live) child.kill('SIGKILL')
  for (const dir of tempDirs) rmSync(dir, { recursive: true, force: true })
})

export function track(child: ChildProcess): ChildProcess {
  live.add(child)
  child.once('exit', () => live.delete(child))
  return child
}

export function tempDir(prefix: string): string {
  const dir = mkdtempSync(path.join(tmpdir(), prefix))
  tempDirs.add(dir)
  return dir
}

export function removeDir(dir: string): void {
  rmSync(dir, { recursive: true, force: true })
  tempDirs.delete(dir)
}

/** Resolves with the exit code (or signal) once the child has exited. */
export function exited(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve()
  return new Promise((resolve) => child.once('exit', () => resolve()))
}

// ------------------------------------------------------------------ Redis

export interface RedisProcess {
  port: number
  url: string
  /** SIGKILL: the process is gone at once (no persistence, so are its keys). */
  kill(): Promise<void>
  /** Starts it again on the same port, empty. */
  start(): Promise<void>
}

export async function startRedis(t: Tap): Promise<RedisProcess> {
  const port = await freePort()
  let child: ChildProcess | undefined
  let out = ''
  const start = async () => {
    out = ''
    const c = track(
      spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--daemonize', 'no', '--loglevel', 'warning'], {
        stdio: ['ignore', 'pipe', 'pipe'],
      }),
    )
    c.stdout?.on('data', (chunk: Buffer) => (out += chunk.toString()))
    c.stderr?.on('data', (chunk: Buffer) => (out += chunk.toString()))
    child = c
    await eventually(`redis-server on ${port}`, () => redisPing(port), { timeoutMs: 10_000, intervalMs: 50, detail: () => out, giveUp: () => exitedWith(c) })
  }
  const kill = async () => {
    const c = child
    child = undefined
    if (!c) return
    c.kill('SIGKILL')
    await exited(c)
  }
  await start()
  t.teardown(kill)
  return { port, url: `redis://127.0.0.1:${port}`, kill, start }
}

/** PING over a raw socket (no client library, so no reconnect logic in the way). */
export function redisPing(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ host: '127.0.0.1', port })
    const done = (ok: boolean) => {
      socket.destroy()
      resolve(ok)
    }
    socket.setTimeout(1_000, () => done(false))
    socket.once('error', () => done(false))
    socket.once('connect', () => socket.write('PING\r\n'))
    socket.once('data', (chunk) => done(chunk.toString().startsWith('+PONG')))
  })
}

// ------------------------------------------------------------------ PostgreSQL

export interface PostgresProcess {
  port: number
  /** postgresql://postgres@127.0.0.1:<port>/roost */
  url: string
  /** Fast shutdown (SIGINT): open transactions are rolled back, sessions cut. */
  stop(): Promise<void>
  start(): Promise<void>
  /** A query on a connection of its own, closed afterwards. */
  query<Row extends Record<string, unknown>>(sql: string, params?: unknown[]): Promise<Row[]>
}

function postgresBin(): string {
  const base = '/usr/lib/postgresql'
  const versions = existsSync(base)
    ? readdirSync(base)
        .filter((v) => existsSync(path.join(base, v, 'bin/postgres')))
        .sort((a, b) => Number(b) - Number(a))
    : []
  const found = process.env.ROOST_TEST_PG_BIN ?? (versions[0] ? path.join(base, versions[0], 'bin') : undefined)
  if (!found) throw new Error('PostgreSQL server binaries not found under /usr/lib/postgresql/*/bin (set ROOST_TEST_PG_BIN)')
  return found
}

/** initdb and postgres refuse to run as root: run them as `postgres` then. */
function runAs(): { uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined
  const id = (flag: string) => Number(spawnSync('id', [flag, 'postgres'], { encoding: 'utf8' }).stdout.trim())
  const uid = id('-u')
  const gid = id('-g')
  if (!Number.isInteger(uid) || uid <= 0) throw new Error("running as root: a 'postgres' user is needed to run PostgreSQL")
  return { uid, gid }
}

export async function startPostgres(t: Tap): Promise<PostgresProcess> {
  const bin = postgresBin()
  const user = runAs()
  const dir = tempDir('roost-failure-pg-')
  if (user) chownSync(dir, user.uid, user.gid)
  const data = path.join(dir, 'data')
  const init = spawnSync(path.join(bin, 'initdb'), ['-D', data, '-U', 'postgres', '-A', 'trust', '-E', 'UTF8', '--no-sync', '--locale=C'], {
    encoding: 'utf8',
    ...user,
    env: { ...process.env, LC_ALL: 'C' },
  })
  if (init.status !== 0) throw new Error(`initdb failed (${init.status}):\n${init.stdout}\n${init.stderr}`)
  const port = await freePort()
  const admin = `postgresql://postgres@127.0.0.1:${port}/postgres`
  let child: ChildProcess | undefined
  let out = ''
  const start = async () => {
    out = ''
    const c = track(
      spawn(
        path.join(bin, 'postgres'),
        ['-D', data, '-p', String(port), '-k', dir, '-c', 'listen_addresses=127.0.0.1', '-c', 'fsync=off', '-c', 'synchronous_commit=off', '-c', 'full_page_writes=off', '-c', 'max_connections=300'],
        { stdio: ['ignore', 'pipe', 'pipe'], ...user },
      ),
    )
    c.stdout?.on('data', (chunk: Buffer) => (out += chunk.toString()))
    c.stderr?.on('data', (chunk: Buffer) => (out += chunk.toString()))
    child = c
    await eventually(`postgres on ${port}`, async () => (await pgQuery(admin, 'SELECT 1'), true), { timeoutMs: 30_000, intervalMs: 50, detail: () => out, giveUp: () => exitedWith(c) })
  }
  const stop = async () => {
    const c = child
    child = undefined
    if (!c) return
    c.kill('SIGINT')
    const timer = setTimeout(() => c.kill('SIGKILL'), 30_000)
    await exited(c)
    clearTimeout(timer)
  }
  await start()
  await pgQuery(admin, 'CREATE DATABASE roost')
  t.teardown(async () => {
    await stop()
    removeDir(dir)
  })
  const url = `postgresql://postgres@127.0.0.1:${port}/roost`
  return { port, url, stop, start, query: (sql, params) => pgQuery(url, sql, params) }
}

async function pgQuery<Row extends Record<string, unknown>>(url: string, sql: string, params: unknown[] = []): Promise<Row[]> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2_000 })
  client.on('error', () => {})
  await client.connect()
  try {
    return (await client.query<Row>(sql, params)).rows
  } finally {
    await client.end().catch(() => {})
  }
}

// ------------------------------------------------------------------ Roost nodes

export const OWNER = { email: 'owner@failure.example.com', password: 'failure-password-1' }

export interface RoostNode {
  name: string
  port: number
  base: string
  child: ChildProcess
  output(): string
  /** SIGKILL: no drain, no goodbye; the kernel resets its connections. */
  kill(): Promise<void>
  /** SIGTERM and wait (drains held polls). */
  stop(): Promise<void>
}

export interface NodeOptions {
  databaseUrl: string
  redisUrl: string
  env?: Record<string, string>
}

/** `node dist/src/server.js` with the given backends; the first node on a database creates the organization. */
export async function startNode(t: Tap, name: string, options: NodeOptions): Promise<RoostNode> {
  const port = await freePort()
  const dataDir = tempDir(`roost-failure-${name}-`)
  const env: Record<string, string | undefined> = {
    ...process.env,
    PORT: String(port),
    HOST: '127.0.0.1',
    DATA_DIR: dataDir,
    DATABASE_URL: options.databaseUrl,
    REDIS_URL: options.redisUrl,
    BOOTSTRAP_REALM_NAME: 'Failure tests',
    BOOTSTRAP_OWNER_EMAIL: OWNER.email,
    BOOTSTRAP_OWNER_PASSWORD: OWNER.password,
    RATE_LIMITING: 'off',
    LOG_LEVEL: 'warn',
    // The tests hold thousands of queues of one user (the owner); the default cap (50) would drop them.
    EVENT_QUEUES_PER_USER: '10000',
    ...options.env,
  }
  delete env.EXTERNAL_URL
  const child = track(spawn(process.execPath, [...SERVER_NODE_OPTIONS, SERVER_ENTRY], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] }))
  let out = ''
  child.stdout?.on('data', (chunk: Buffer) => (out += chunk.toString()))
  child.stderr?.on('data', (chunk: Buffer) => (out += chunk.toString()))
  await eventually(`node ${name}`, () => /^roost: serving /m.test(out), { timeoutMs: 180_000, intervalMs: 50, detail: () => out, giveUp: () => exitedWith(child) })
  const kill = async () => {
    child.kill('SIGKILL')
    await exited(child)
  }
  const node: RoostNode = {
    name,
    port,
    base: `http://127.0.0.1:${port}`,
    child,
    output: () => out,
    kill,
    async stop() {
      child.kill('SIGTERM')
      const timer = setTimeout(() => child.kill('SIGKILL'), 15_000)
      await exited(child)
      clearTimeout(timer)
    },
  }
  t.teardown(async () => {
    await kill()
    removeDir(dataDir)
    if (process.env.ROOST_FAILURE_LOGS === '1') process.stderr.write(`---- node ${name} output:\n${out}\n`)
  })
  return node
}

/** Three nodes on one database and one Redis (the first bootstraps the organization, then two more start together). */
export async function startCluster(t: Tap, options: NodeOptions, names = ['a', 'b', 'c']): Promise<RoostNode[]> {
  const [first, ...rest] = names as [string, ...string[]]
  const a = await startNode(t, first, options)
  return [a, ...(await Promise.all(rest.map((n) => startNode(t, n, options))))]
}

// ------------------------------------------------------------------ latency

export interface DelayProxy {
  port: number
  url: string
  /** Bytes relayed (both ways). */
  relayed(): number
}

/** Relays TCP to 127.0.0.1:target, holding every chunk `delayMs` in each direction (order kept). */
export async function delayProxy(t: Tap, target: number, delayMs: number): Promise<DelayProxy> {
  const sockets = new Set<Socket>()
  let bytes = 0
  const relay = (from: Socket, to: Socket) => {
    from.on('data', (chunk: Buffer) => {
      bytes += chunk.length
      setTimeout(() => {
        if (!to.destroyed) to.write(chunk)
      }, delayMs)
    })
    from.on('end', () => setTimeout(() => to.end(), delayMs))
    from.on('error', () => to.destroy())
    from.on('close', () => setTimeout(() => to.destroy(), delayMs))
  }
  const server: Server = createServer((client) => {
    const upstream = createConnection({ host: '127.0.0.1', port: target })
    for (const s of [client, upstream]) {
      s.setNoDelay(true)
      sockets.add(s)
      s.on('close', () => sockets.delete(s))
    }
    relay(client, upstream)
    relay(upstream, client)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const address = server.address()
  const port = typeof address === 'object' && address ? address.port : 0
  t.teardown(async () => {
    for (const s of sockets) s.destroy()
    await new Promise<void>((resolve) => server.close(() => resolve()))
  })
  return { port, url: `redis://127.0.0.1:${port}`, relayed: () => bytes }
}

// ------------------------------------------------------------------ HTTP client

// Response bodies are read loosely (as in bench/support.ts); `any` keeps field access short.
export type Json = Record<string, any>

/** A reply, or the connection error (ECONNRESET, ECONNREFUSED, "socket hang up"…) instead. */
export type Outcome = { status: number; body: Json; headers: IncomingHttpHeaders } | { error: string }

export function isReply(outcome: Outcome): outcome is { status: number; body: Json; headers: IncomingHttpHeaders } {
  return 'status' in outcome
}

/** Attempts Client.ok makes of a request refused by admission control. */
const OVERLOAD_RETRIES = 30

/** A node's admission control refused the request before doing anything (src/http/admission.ts). */
function isOverloaded(res: Outcome): res is { status: 503; body: Json; headers: IncomingHttpHeaders } {
  return isReply(res) && res.status === 503 && res.headers['retry-after'] !== undefined && /overloaded/.test(String(res.body.msg))
}

export class Client {
  private readonly agent = new Agent({ keepAlive: true, maxSockets: Infinity })

  constructor(readonly auth: string) {}

  static async login(node: RoostNode, who = OWNER): Promise<Client> {
    const plain = new Client('')
    const res = await plain.call(node, 'POST', '/fetch_api_key', { username: who.email, password: who.password })
    plain.close()
    if (!isReply(res) || res.body.result !== 'success') throw new Error(`fetch_api_key failed: ${JSON.stringify(res)}`)
    return new Client(`Basic ${Buffer.from(`${who.email}:${res.body.api_key as string}`).toString('base64')}`)
  }

  /**
   * GET parameters in the query string, the rest as a form; arrays and
   * objects JSON-encoded. With timeoutMs, a request not answered in time is
   * abandoned and reported as the error 'timeout' (a hang).
   */
  call(node: Pick<RoostNode, 'port'>, method: string, url: string, params: Record<string, unknown> = {}, timeoutMs?: number): Promise<Outcome> {
    const encoded = new URLSearchParams(Object.entries(params).map(([k, v]) => [k, typeof v === 'string' ? v : JSON.stringify(v)])).toString()
    const inQuery = method === 'GET' || method === 'DELETE'
    const headers: Record<string, string> = this.auth ? { authorization: this.auth } : {}
    if (!inQuery) {
      headers['content-type'] = 'application/x-www-form-urlencoded'
      headers['content-length'] = String(Buffer.byteLength(encoded))
    }
    return new Promise((resolve) => {
      const req = request(
        { host: '127.0.0.1', port: node.port, method, path: `/api/v1${url}${inQuery && encoded ? `?${encoded}` : ''}`, headers, agent: this.agent },
        (res) => {
          let text = ''
          res.setEncoding('utf8')
          res.on('data', (chunk: string) => (text += chunk))
          res.on('end', () => {
            try {
              resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) as Json, headers: res.headers })
            } catch {
              resolve({ status: res.statusCode ?? 0, body: { unparsable: text }, headers: res.headers })
            }
          })
          res.on('error', (error) => resolve({ error: errorName(error) }))
        },
      )
      req.on('error', (error) => resolve({ error: errorName(error) }))
      if (timeoutMs !== undefined) {
        req.setTimeout(timeoutMs, () => {
          resolve({ error: 'timeout' })
          req.destroy()
        })
      }
      if (!inQuery) req.write(encoded)
      req.end()
    })
  }

  /**
   * A successful reply's body, or an error describing what came instead.
   * A refusal by admission control (503 with Retry-After: the node is
   * overloaded, as it can be on a loaded machine) is sent again after the
   * pause it asks for, as clients do; the request was not processed.
   */
  async ok(node: Pick<RoostNode, 'port'>, method: string, url: string, params: Record<string, unknown> = {}): Promise<Json> {
    for (let attempt = 1; ; attempt++) {
      const res = await this.call(node, method, url, params)
      if (isReply(res) && res.status === 200 && res.body.result === 'success') return res.body
      if (attempt >= OVERLOAD_RETRIES || !isOverloaded(res)) throw new Error(`${method} ${url}: ${JSON.stringify(res).slice(0, 500)}`)
      await delay(1_000 * Number(res.headers['retry-after'] ?? 1))
    }
  }

  close(): void {
    this.agent.destroy()
  }
}

function errorName(error: Error): string {
  return (error as { code?: string }).code ?? error.message
}

/** GET /readyz: its status code, or 0 when the node does not answer. */
export function readiness(node: Pick<RoostNode, 'port'>): Promise<number> {
  return new Promise((resolve) => {
    const req = request({ host: '127.0.0.1', port: node.port, path: '/readyz', agent: false }, (res) => {
      res.resume()
      res.on('end', () => resolve(res.statusCode ?? 0))
    })
    req.setTimeout(10_000, () => req.destroy())
    req.on('error', () => resolve(0))
    req.end()
  })
}

/** Why waiting for `child` is pointless (it has exited), or undefined while it runs. */
export function exitedWith(child: ChildProcess): string | undefined {
  if (child.exitCode !== null) return `exited with ${child.exitCode}`
  if (child.signalCode !== null) return `killed by ${child.signalCode}`
  return undefined
}
