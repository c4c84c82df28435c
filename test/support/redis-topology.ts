// Private Redis topologies for the tests, from Debian's redis-server on free
// loopback ports in temp dirs (the process and temp-dir handling of
// test/failure/processes.ts), never the shared Redis:
//   startRedisCluster()   a Redis Cluster: 3 masters, each with a replica
//                         (`redis-cli --cluster create … --cluster-replicas 1`)
//   startRedisSentinel()  a master, its replica and three Sentinels watching it
// Each waits until the topology is fully formed (every slot served, replicas
// in sync, Sentinels aware of each other), and the test's teardown stops every
// process and removes its files.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { createConnection, createServer, type Socket } from 'node:net'
import path from 'node:path'
import { Redis } from 'ioredis'
import { exited, exitedWith, freePort, redisPing, removeDir, tempDir, track } from '../failure/processes.js'
import { eventually } from './eventually.js'
import type { Tap } from './app.js'
import type { HostPort, RedisAuth } from '../../src/config.js'
import type { RedisTarget } from '../../src/redis-connection.js'

const HOST = '127.0.0.1'
const READY_TIMEOUT_MS = 60_000

export interface RedisServer {
  port: number
  /** SIGKILL: gone at once, as a crashed machine. */
  kill(): Promise<void>
  running(): boolean
  output(): string
}

/**
 * What a secured topology asks of its clients: a password (requirepass on
 * every data server, masterauth for replication), a separate one for the
 * Sentinels, and TLS only (no plain port) with certificates from
 * makeTlsMaterial().
 */
export interface RedisSecurity {
  password?: string
  sentinelPassword?: string
  tls?: TlsMaterial
}

export interface TlsMaterial {
  caFile: string
  certFile: string
  keyFile: string
  /** The CA certificate (PEM). */
  ca: string
}

/** A CA and a server certificate for 127.0.0.1 signed by it, made with openssl in a temp dir removed after the test. */
export function makeTlsMaterial(t: Tap): TlsMaterial {
  const dir = tempDir('roost-redis-tls-')
  t.teardown(() => removeDir(dir))
  const file = (name: string) => path.join(dir, name)
  const openssl = (...args: string[]) => {
    const result = spawnSync('openssl', args, { cwd: dir, encoding: 'utf8', timeout: 30_000 })
    if (result.status !== 0) throw new Error(`openssl ${args[0]} failed: ${result.stderr}`)
  }
  openssl('req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', file('ca.key'), '-out', file('ca.crt'), '-days', '2', '-subj', '/CN=Roost test CA')
  openssl('req', '-newkey', 'rsa:2048', '-nodes', '-keyout', file('server.key'), '-out', file('server.csr'), '-subj', '/CN=127.0.0.1')
  writeFileSync(file('san.ext'), 'subjectAltName=IP:127.0.0.1,DNS:localhost\n')
  openssl('x509', '-req', '-in', file('server.csr'), '-CA', file('ca.crt'), '-CAkey', file('ca.key'), '-CAcreateserial', '-out', file('server.crt'), '-days', '2', '-extfile', file('san.ext'))
  return { caFile: file('ca.crt'), certFile: file('server.crt'), keyFile: file('server.key'), ca: readFileSync(file('ca.crt'), 'utf8') }
}

/** The listening arguments of a server: a plain port, or (with TLS) only a TLS port; requirepass and masterauth with a password. */
function listenArgs(port: number, security: RedisSecurity = {}, password = security.password): string[] {
  const tls = security.tls
  return [
    ...(tls
      ? ['--port', '0', '--tls-port', String(port), '--tls-cert-file', tls.certFile, '--tls-key-file', tls.keyFile, '--tls-ca-cert-file', tls.caFile, '--tls-auth-clients', 'no', '--tls-replication', 'yes', '--tls-cluster', 'yes']
      : ['--port', String(port)]),
    ...(password ? ['--requirepass', password, '--masterauth', password] : []),
  ]
}

/** redis-cli's connection flags for a secured server. */
function cliArgs(security: RedisSecurity = {}): string[] {
  return [...(security.password ? ['-a', security.password, '--no-auth-warning'] : []), ...(security.tls ? ['--tls', '--cacert', security.tls.caFile] : [])]
}

/** One redis-server (or Sentinel) process with its arguments; its dir is the process's working directory. */
async function startServer(dir: string, args: string[], port: number, security?: RedisSecurity, password = security?.password): Promise<RedisServer> {
  mkdirSync(dir, { recursive: true })
  let out = ''
  const child: ChildProcess = track(spawn('redis-server', args, { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] }))
  child.stdout?.on('data', (chunk: Buffer) => (out += chunk.toString()))
  child.stderr?.on('data', (chunk: Buffer) => (out += chunk.toString()))
  const ping = security ? () => redisCallWith({ ...security, password }, port, 'PING').then((r) => r === 'PONG', () => false) : () => redisPing(port)
  await eventually(`redis-server on ${port}`, ping, { timeoutMs: 10_000, intervalMs: 50, detail: () => out, giveUp: () => exitedWith(child) })
  return {
    port,
    async kill() {
      child.kill('SIGKILL')
      await exited(child)
    },
    running: () => child.exitCode === null && child.signalCode === null,
    output: () => out,
  }
}

const BASE_ARGS = ['--bind', HOST, '--save', '', '--appendonly', 'no', '--daemonize', 'no', '--loglevel', 'warning', '--protected-mode', 'no']

/** One command on a connection of its own, closed afterwards. */
/** Resolves once the replica on `replicaPort` has everything the master on `masterPort` wrote so far (the writes a failover keeps). */
export async function replicaCaughtUp(masterPort: number, replicaPort: number): Promise<void> {
  const offset = (info: unknown, name: string) => Number(new RegExp(`^${name}:(\\d+)`, 'm').exec(String(info))?.[1])
  const target = offset(await redisCall(masterPort, 'INFO', 'replication'), 'master_repl_offset')
  const deadline = Date.now() + 10_000
  while (offset(await redisCall(replicaPort, 'INFO', 'replication'), 'slave_repl_offset') < target) {
    if (Date.now() > deadline) throw new Error('the replica did not catch up')
    await new Promise((r) => setTimeout(r, 20))
  }
}

export async function redisCall(port: number, command: string, ...args: (string | number)[]): Promise<unknown> {
  return redisCallWith({}, port, command, ...args)
}

/** redisCall on a secured server (its password, TLS with the test CA). */
export async function redisCallWith(security: RedisSecurity, port: number, command: string, ...args: (string | number)[]): Promise<unknown> {
  const secured = { ...(security.password ? { password: security.password } : {}), ...(security.tls ? { tls: { ca: security.tls.ca } } : {}) }
  const redis = new Redis({ ...secured, host: HOST, port, lazyConnect: true, retryStrategy: () => null, maxRetriesPerRequest: 0, connectTimeout: 2_000 })
  redis.on('error', () => undefined)
  try {
    await redis.connect()
    return await redis.call(command, ...args.map(String))
  } finally {
    redis.disconnect()
  }
}

const field = (info: unknown, name: string) => new RegExp(`^${name}:(.*?)\\r?$`, 'm').exec(String(info))?.[1]

/** One cluster-enabled node that no cluster was created on: its state is 'fail' (no slot served). */
export async function startLoneClusterNode(t: Tap): Promise<RedisServer> {
  const dir = tempDir('roost-redis-lone-')
  const port = await freePort()
  const busPort = await freePort()
  const server = await startServer(dir, ['--port', String(port), ...BASE_ARGS, '--cluster-enabled', 'yes', '--cluster-port', String(busPort), '--cluster-config-file', 'nodes.conf'], port)
  t.teardown(async () => {
    await server.kill()
    removeDir(dir)
  })
  return server
}

/** A Sentinel watching no master at all. */
export async function startLoneSentinel(t: Tap): Promise<RedisServer> {
  const dir = tempDir('roost-redis-lone-sentinel-')
  const port = await freePort()
  writeFileSync(path.join(dir, 'sentinel.conf'), [`port ${port}`, `bind ${HOST}`, 'protected-mode no', `dir ${dir}`, ''].join('\n'))
  const server = await startServer(dir, ['sentinel.conf', '--sentinel', '--loglevel', 'warning'], port)
  t.teardown(async () => {
    await server.kill()
    removeDir(dir)
  })
  return server
}

// ------------------------------------------------------------------ Cluster

export interface RedisClusterTopology {
  /** Every node, masters first (as created). */
  servers: RedisServer[]
  nodes: HostPort[]
  /** REDIS_CLUSTER_NODES for Roost. */
  env: string
  target: RedisTarget
  /** The port of the master serving `slot` now. */
  masterOf(slot: number): Promise<number>
}

/** `serverArgs`: more arguments for every redis-server (e.g. `--rename-command SPUBLISH ""`, to stand for an older Redis). */
export async function startRedisCluster(t: Tap, options: { masters?: number; replicas?: number; security?: RedisSecurity; serverArgs?: string[] } = {}): Promise<RedisClusterTopology> {
  const masters = options.masters ?? 3
  const replicas = options.replicas ?? 1
  const security = options.security
  const call = (port: number, command: string, ...args: (string | number)[]) => redisCallWith(security ?? {}, port, command, ...args)
  const dir = tempDir('roost-redis-cluster-')
  const servers: RedisServer[] = []
  t.teardown(async () => {
    await Promise.all(servers.map((s) => s.kill()))
    removeDir(dir)
  })
  const count = masters * (1 + replicas)
  for (let i = 0; i < count; i++) {
    const port = await freePort()
    // The cluster bus port is given explicitly: the default (port + 10000) may be above 65535 for a free ephemeral port.
    const busPort = await freePort()
    servers.push(
      await startServer(path.join(dir, String(port)), [
        ...listenArgs(port, security),
        ...BASE_ARGS,
        '--cluster-enabled', 'yes',
        '--cluster-port', String(busPort),
        '--cluster-config-file', 'nodes.conf',
        '--cluster-node-timeout', '2000',
        // A replica may be promoted however long it was cut off (the tests kill masters at will).
        '--cluster-replica-validity-factor', '0',
        ...(options.serverArgs ?? []),
      ], port, security),
    )
  }
  const create = spawnSync(
    'redis-cli',
    [...cliArgs(security), '--cluster', 'create', ...servers.map((s) => `${HOST}:${s.port}`), '--cluster-replicas', String(replicas), '--cluster-yes'],
    { encoding: 'utf8', timeout: 60_000 },
  )
  if (create.status !== 0) throw new Error(`redis-cli --cluster create failed (${create.status}):\n${create.stdout}\n${create.stderr}`)
  await eventually('the Redis Cluster', async () => {
    for (const server of servers) {
      const info = await call(server.port, 'CLUSTER', 'INFO')
      if (field(info, 'cluster_state') !== 'ok' || Number(field(info, 'cluster_known_nodes')) !== count) return false
      const replication = await call(server.port, 'INFO', 'replication')
      if (field(replication, 'role') === 'master' && Number(field(replication, 'connected_slaves')) < replicas) return false
      if (field(replication, 'role') === 'slave' && field(replication, 'master_link_status') !== 'up') return false
    }
    return true
  }, { timeoutMs: READY_TIMEOUT_MS, intervalMs: 50 })
  const nodes = servers.map((s) => ({ host: HOST, port: s.port }))
  return {
    servers,
    nodes,
    env: nodes.map((n) => `${n.host}:${n.port}`).join(','),
    target: { kind: 'cluster', nodes, ...(security ? { auth: authOf(security) } : {}) },
    async masterOf(slot) {
      // Right after a failover a node may still name the killed master: only an answer naming a live server counts.
      const live = servers.filter((s) => s.running())
      for (const server of live) {
        const ranges = (await call(server.port, 'CLUSTER', 'SLOTS').catch(() => null)) as [number, number, [string, number]][] | null
        const owner = ranges?.find(([from, to]) => slot >= from && slot <= to)?.[2][1]
        if (owner !== undefined && live.some((s) => s.port === owner)) return owner
      }
      throw new Error(`no live node knows who serves slot ${slot}`)
    },
  }
}

/** The RedisAuth (as the configuration would hold it) that opens a secured topology. */
export function authOf(security: RedisSecurity): RedisAuth {
  return {
    ...(security.password ? { password: security.password } : {}),
    ...(security.sentinelPassword ? { sentinelPassword: security.sentinelPassword } : {}),
    ...(security.tls ? { tls: { ca: security.tls.ca } } : {}),
  }
}

// ------------------------------------------------------------------ Sentinel

export interface RedisSentinelTopology {
  master: RedisServer
  replica: RedisServer
  sentinels: RedisServer[]
  masterName: string
  /** REDIS_SENTINELS for Roost (REDIS_SENTINEL_MASTER is masterName). */
  env: string
  target: RedisTarget
  /** The master's port as the Sentinels report it now. */
  currentMasterPort(): Promise<number>
  /** From now on the master's writes no longer reach the replica (a failover then loses them); nothing else changes. */
  holdReplication(): void
}

export interface RedisSentinelOptions {
  sentinels?: number
  masterName?: string
  /**
   * Put the master behind the relay holdReplication() needs (default). The
   * relay pipes every connection on its own, so what Redis sends to two
   * clients may arrive in another order than it was sent (a wake-up after the
   * reply that caused it); a suite that relies on Redis's own order and never
   * holds replication passes false.
   */
  holdable?: boolean
  /** Passwords and TLS (then not holdable: the relay reads the plain protocol). */
  security?: RedisSecurity
}

export async function startRedisSentinel(t: Tap, options: RedisSentinelOptions = {}): Promise<RedisSentinelTopology> {
  const sentinelCount = options.sentinels ?? 3
  const masterName = options.masterName ?? 'roost-master'
  const security = options.security
  const tls = security?.tls
  const call = (port: number, command: string, ...args: (string | number)[]) => redisCallWith(security ?? {}, port, command, ...args)
  const callSentinel = (port: number, command: string, ...args: (string | number)[]) =>
    redisCallWith({ ...security, password: security?.sentinelPassword }, port, command, ...args)
  const dir = tempDir('roost-redis-sentinel-')
  const all: RedisServer[] = []
  t.teardown(async () => {
    await Promise.all(all.map((s) => s.kill()))
    removeDir(dir)
  })
  const masterPort = await freePort()
  const master = await startServer(path.join(dir, 'master'), [...listenArgs(masterPort, security), ...BASE_ARGS], masterPort, security)
  all.push(master)
  // Everyone reaches the master through a relay whose replication streams the
  // test can hold (writes the replica then never gets). The Sentinels watch the
  // relay's address, so the replica's view of its master agrees with theirs.
  const relay = options.holdable === false || security ? undefined : await holdableRelay(t, masterPort)
  const masterAddressPort = relay?.port ?? masterPort
  const replicaPort = await freePort()
  const replica = await startServer(path.join(dir, 'replica'), [...listenArgs(replicaPort, security), ...BASE_ARGS, '--replicaof', HOST, String(masterAddressPort)], replicaPort, security)
  all.push(replica)
  const quorum = Math.floor(sentinelCount / 2) + 1
  const sentinels: RedisServer[] = []
  for (let i = 0; i < sentinelCount; i++) {
    const port = await freePort()
    const sentinelDir = path.join(dir, `sentinel-${i}`)
    mkdirSync(sentinelDir, { recursive: true })
    // Sentinel rewrites its configuration file, so each has its own.
    writeFileSync(
      path.join(sentinelDir, 'sentinel.conf'),
      [
        ...(tls
          ? ['port 0', `tls-port ${port}`, `tls-cert-file ${tls.certFile}`, `tls-key-file ${tls.keyFile}`, `tls-ca-cert-file ${tls.caFile}`, 'tls-auth-clients no', 'tls-replication yes']
          : [`port ${port}`]),
        `bind ${HOST}`,
        'protected-mode no',
        `dir ${sentinelDir}`,
        ...(security?.sentinelPassword ? [`requirepass ${security.sentinelPassword}`] : []),
        `sentinel monitor ${masterName} ${HOST} ${masterAddressPort} ${quorum}`,
        ...(security?.password ? [`sentinel auth-pass ${masterName} ${security.password}`] : []),
        ...(security?.sentinelPassword ? [`sentinel sentinel-pass ${security.sentinelPassword}`] : []),
        `sentinel down-after-milliseconds ${masterName} 1000`,
        `sentinel failover-timeout ${masterName} 5000`,
        `sentinel parallel-syncs ${masterName} 1`,
        '',
      ].join('\n'),
    )
    const sentinel = await startServer(sentinelDir, ['sentinel.conf', '--sentinel', '--loglevel', 'warning'], port, security, security?.sentinelPassword)
    sentinels.push(sentinel)
    all.push(sentinel)
  }
  await eventually('the Sentinels', async () => {
    const replication = await call(replicaPort, 'INFO', 'replication')
    if (field(replication, 'master_link_status') !== 'up') return false
    for (const sentinel of sentinels) {
      const state = (await callSentinel(sentinel.port, 'SENTINEL', 'MASTER', masterName)) as string[]
      const fields = new Map<string, string>()
      for (let i = 0; i + 1 < state.length; i += 2) fields.set(state[i] as string, state[i + 1] as string)
      if (Number(fields.get('num-slaves')) < 1 || Number(fields.get('num-other-sentinels')) < sentinelCount - 1) return false
    }
    return true
  }, { timeoutMs: READY_TIMEOUT_MS, intervalMs: 50 })
  const hostPorts = sentinels.map((s) => ({ host: HOST, port: s.port }))
  return {
    master,
    replica,
    sentinels,
    masterName,
    env: hostPorts.map((n) => `${n.host}:${n.port}`).join(','),
    target: { kind: 'sentinel', sentinels: hostPorts, masterName, ...(security ? { auth: authOf(security) } : {}) },
    holdReplication: () => {
      if (!relay) throw new Error('startRedisSentinel: started with holdable: false')
      relay.hold()
    },
    async currentMasterPort() {
      for (const sentinel of sentinels.filter((s) => s.running())) {
        const addr = (await callSentinel(sentinel.port, 'SENTINEL', 'GET-MASTER-ADDR-BY-NAME', masterName).catch(() => null)) as [string, string] | null
        if (addr) return Number(addr[1])
      }
      throw new Error('no Sentinel answers')
    },
  }
}

/**
 * A TCP relay to 127.0.0.1:target. Once held, what the target sends on a
 * replication stream (a connection whose client asked for PSYNC) is kept
 * instead of passed on; every other connection flows as before.
 */
async function holdableRelay(t: Tap, target: number): Promise<{ port: number; hold(): void }> {
  const sockets = new Set<Socket>()
  let held = false
  const server = createServer((client) => {
    const upstream = createConnection({ host: HOST, port: target })
    let replication = false
    for (const s of [client, upstream]) {
      sockets.add(s)
      s.on('close', () => sockets.delete(s))
      s.on('error', () => undefined)
    }
    client.on('data', (chunk: Buffer) => {
      if (/PSYNC|SYNC/i.test(chunk.toString('latin1'))) replication = true
      upstream.write(chunk)
    })
    upstream.on('data', (chunk: Buffer) => {
      if (!(held && replication)) client.write(chunk)
    })
    client.on('close', () => upstream.destroy())
    upstream.on('close', () => client.destroy())
  })
  await new Promise<void>((resolve) => server.listen(0, HOST, resolve))
  const address = server.address()
  t.teardown(async () => {
    for (const s of sockets) s.destroy()
    await new Promise<void>((resolve) => server.close(() => resolve()))
  })
  return {
    port: typeof address === 'object' && address ? address.port : 0,
    hold() {
      held = true
    },
  }
}
