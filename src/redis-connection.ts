// The three ways to reach Redis (DESIGN.md, startup contract), behind one
// connection type the Redis backends share:
//   REDIS_URL                                 one server
//   REDIS_CLUSTER_NODES                       a Redis Cluster (ioredis Cluster; keys hash-tagged by the stores)
//   REDIS_SENTINELS + REDIS_SENTINEL_MASTER   a master found through Sentinel, followed across failovers
// Startup checks what it can and fails with a message naming the variable
// (unreachable servers, a cluster whose state is not ok, a Sentinel that knows
// no such master) instead of retrying forever in silence. At run time the
// connections reconnect on their own (redis-options.ts).
import { Cluster, Redis, type Command, type RedisOptions } from 'ioredis'
import type { ConnectionOptions } from 'node:tls'
import type { Config, HostPort, RedisAuth } from './config.js'
import { REDIS_OPTIONS, REDIS_RECONNECT_MAX_MS } from './redis-options.js'

/** A connection for commands: one server (also through Sentinel) or a cluster. */
export type RedisClient = Redis | Cluster

export type RedisTarget =
  | { kind: 'single'; url: string }
  | { kind: 'cluster'; nodes: HostPort[]; auth?: RedisAuth }
  | { kind: 'sentinel'; sentinels: HostPort[]; masterName: string; auth?: RedisAuth }

/** The Redis the configuration names, if any. */
export function redisTargetOf(config: Pick<Config, 'redisUrl' | 'redisClusterNodes' | 'redisSentinel' | 'redisAuth'>): RedisTarget | undefined {
  if (config.redisClusterNodes) return { kind: 'cluster', nodes: config.redisClusterNodes, auth: config.redisAuth }
  if (config.redisSentinel) return { kind: 'sentinel', ...config.redisSentinel, auth: config.redisAuth }
  if (config.redisUrl) return { kind: 'single', url: config.redisUrl }
  return undefined
}

/** Redis cannot be used as configured; the message names the variable to fix. */
export class RedisStartupError extends Error {
  override name = 'RedisStartupError'
}

export interface RedisLog {
  info(msg: string): void
}

/** How long startup waits for a reachable Redis to become ready. */
const STARTUP_TIMEOUT_MS = 10_000
/** Per-server probe timeout at startup. */
const PROBE_TIMEOUT_MS = 3_000

const SENTINEL_OPTIONS = {
  // Asks the Sentinels for the master again after every lost connection, and
  // listens for their +switch-master announcements to switch at once.
  failoverDetector: true,
  sentinelRetryStrategy: (attempt: number) => Math.min(100 * attempt, REDIS_RECONNECT_MAX_MS),
  sentinelMaxConnections: 3,
} satisfies RedisOptions

export class RedisConnection {
  private readonly subscribers = new Set<RedisClient>()

  private constructor(
    readonly target: RedisTarget,
    /** Commands, auto-pipelined: every command issued in one tick goes in one write (per node). */
    readonly client: RedisClient,
    /**
     * On a cluster whose servers know SPUBLISH (Redis 7), pub/sub is sharded
     * (SPUBLISH / SSUBSCRIBE): a message travels to the one shard owning its
     * channel, not to every node. Checked once at startup; a cluster of older
     * servers keeps plain PUBLISH, which Redis Cluster relays to every node.
     */
    readonly sharded: boolean,
  ) {}

  static async open(target: RedisTarget, log?: RedisLog): Promise<RedisConnection> {
    const client = await connectClient(target)
    const sharded = target.kind === 'cluster' && (await knowsCommand(client, 'SPUBLISH'))
    log?.info(`redis: connected to ${describeTarget(target)}${target.kind === 'cluster' ? (sharded ? ' (sharded pub/sub)' : ' (no SPUBLISH: plain pub/sub)') : ''}`)
    return new RedisConnection(target, client, sharded)
  }

  /** Publishes on a channel: SPUBLISH on a cluster, PUBLISH otherwise. */
  async publish(channel: string, message: string): Promise<void> {
    if (this.sharded) await this.client.spublish(channel, message)
    else await this.client.publish(channel, message)
  }

  /**
   * A new connection in subscribe mode, closed with this one. On a cluster it
   * keeps one sharded subscriber per master and follows slot moves.
   */
  newSubscriber(connectionName: string): RedisClient {
    const client = subscriberOf(this.client, connectionName, { sharded: this.sharded })
    this.subscribers.add(client)
    client.once('end', () => this.subscribers.delete(client))
    return client
  }

  /** Throws unless commands can run now (readiness). */
  async check(): Promise<void> {
    if (this.client.status !== 'ready') throw new Error(`redis connection is ${this.client.status}`)
    await this.client.ping()
  }

  async close(): Promise<void> {
    for (const subscriber of this.subscribers) subscriber.disconnect()
    this.subscribers.clear()
    if (this.client.status === 'ready') await this.client.quit().catch(() => undefined)
    // Also after QUIT: only disconnect() stops the Sentinel connector's own connections (its failover detector).
    this.client.disconnect()
  }
}

/** Whether the server (on a cluster, the one asked) knows a command: COMMAND INFO answers nil for an unknown one. */
async function knowsCommand(client: RedisClient, command: string): Promise<boolean> {
  const reply = await client.call('COMMAND', 'INFO', command)
  return Array.isArray(reply) && Array.isArray(reply[0])
}

/**
 * A new connection in subscribe mode to the same Redis. `sharded` (clusters
 * only): one subscriber per master for SSUBSCRIBE, following slot moves;
 * otherwise SUBSCRIBE (on a cluster, PUBLISH reaches every node).
 */
export function subscriberOf(client: RedisClient, connectionName: string, options: { sharded?: boolean } = {}): RedisClient {
  if (client instanceof Cluster) {
    return client.duplicate([], {
      lazyConnect: false,
      enableAutoPipelining: false,
      shardedSubscribers: options.sharded === true,
      redisOptions: { ...client.options.redisOptions, connectionName },
    })
  }
  return client.duplicate({ enableAutoPipelining: false, connectionName, lazyConnect: false })
}

/**
 * Calls `moved` each time the connection a cluster subscribes through (plain
 * SUBSCRIBE) loses its server. ioredis picks one node for those subscriptions
 * and, when that node's connection ends, picks another and subscribes there
 * again, emitting nothing on the cluster: messages published in between are
 * lost, which only this tells. `moved` runs once ioredis has picked the new
 * connection, so a SUBSCRIBE sent from it is answered after the
 * resubscription. A single server's subscriber reports 'close' and 'ready'
 * itself: for it this watches nothing. Returns the unwatch.
 */
export function watchSubscriptionMoves(client: RedisClient, moved: () => void): () => void {
  if (!(client instanceof Cluster)) return () => undefined
  // ioredis keeps the subscription connection in the cluster's private `subscriber` (a ClusterSubscriber).
  const inner = (client as unknown as { subscriber?: { getInstance(): Redis | null } }).subscriber
  if (!inner || typeof inner.getInstance !== 'function') return () => undefined
  let stopped = false
  let watched: Redis | null = null
  const onEnd = () => {
    watched = null
    // ClusterSubscriber's own 'end' listener (registered first) has picked the next connection by now.
    if (!stopped) setImmediate(() => {
      if (stopped) return
      watch()
      moved()
    })
  }
  const watch = () => {
    const instance = inner.getInstance()
    if (instance === watched) return
    watched?.off('end', onEnd)
    watched = instance
    instance?.once('end', onEnd)
  }
  // No connection yet (no node known): ioredis picks one when a node appears.
  const onNode = () => setImmediate(() => !stopped && watched === null && watch())
  client.on('+node', onNode)
  watch()
  return () => {
    stopped = true
    watched?.off('end', onEnd)
    client.off('+node', onNode)
  }
}

/**
 * For a cluster subscriber with sharded subscribers (subscriberOf with
 * `sharded`): calls `lost` when one of its per-master connections ends or is
 * dropped (its shard channels' messages are lost from then on), and `rebuilt`
 * each time ioredis has rebuilt those connections for the current slot map
 * (after a lost connection, a failover or a slot move; also once at the
 * start) and sent its own SSUBSCRIBEs again. ioredis does not wait for those
 * replies: an SSUBSCRIBE sent from `rebuilt` goes to the same connection and is
 * answered after them. A connection to a dead master is rebuilt again until
 * the failover, so `rebuilt` may come several times for one loss. For any
 * other connection this watches nothing. Returns the unwatch.
 */
export function watchShardedSubscribers(client: RedisClient, events: { lost(): void; rebuilt(): void }): () => void {
  if (!(client instanceof Cluster) || !client.options.shardedSubscribers) return () => undefined
  const lost = () => events.lost()
  const rebuilt = () => events.rebuilt()
  // '-node' (a per-master subscriber connection ended) and '-subscriber' (one dropped by a rebuild).
  client.on('-node', lost)
  client.on('-subscriber', lost)
  client.on('subscribersReady', rebuilt)
  return () => {
    client.off('-node', lost)
    client.off('-subscriber', lost)
    client.off('subscribersReady', rebuilt)
  }
}

export function describeTarget(target: RedisTarget): string {
  switch (target.kind) {
    case 'single':
      return maskPassword(target.url)
    case 'cluster':
      return `the Redis Cluster at ${hostList(target.nodes)}`
    case 'sentinel':
      return `master '${target.masterName}' through the Sentinels at ${hostList(target.sentinels)}`
  }
}

const hostList = (nodes: HostPort[]) => nodes.map(formatHostPort).join(', ')
const formatHostPort = ({ host, port }: HostPort) => (host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`)

function maskPassword(url: string): string {
  try {
    const parsed = new URL(url)
    if (parsed.password) parsed.password = '***'
    return parsed.toString()
  } catch {
    return url
  }
}

/** TLS options of ioredis from REDIS_TLS / REDIS_TLS_CA_FILE. */
function tlsOptions(auth: RedisAuth | undefined): ConnectionOptions | undefined {
  if (!auth?.tls) return undefined
  return auth.tls.ca ? { ca: auth.tls.ca } : {}
}

/** Username, password and TLS of the data servers (cluster nodes, the Sentinel's master and replicas). */
function serverOptions(auth: RedisAuth | undefined): Pick<RedisOptions, 'username' | 'password' | 'tls'> {
  const tls = tlsOptions(auth)
  return {
    ...(auth?.username ? { username: auth.username } : {}),
    ...(auth?.password ? { password: auth.password } : {}),
    ...(tls ? { tls } : {}),
  }
}

/** The same for the Sentinels themselves (REDIS_SENTINEL_PASSWORD, and REDIS_TLS for them too). */
function sentinelOptions(auth: RedisAuth | undefined): Pick<RedisOptions, 'password' | 'tls'> {
  const tls = tlsOptions(auth)
  return { ...(auth?.sentinelPassword ? { password: auth.sentinelPassword } : {}), ...(tls ? { tls } : {}) }
}

async function connectClient(target: RedisTarget): Promise<RedisClient> {
  switch (target.kind) {
    case 'single': {
      const redis = new Redis(target.url, { ...REDIS_OPTIONS, enableAutoPipelining: true })
      await startup(redis, redis.connect(), `REDIS_URL: cannot connect to ${maskPassword(target.url)}`)
      return redis
    }
    case 'cluster': {
      await probeCluster(target.nodes, serverOptions(target.auth))
      const { lazyConnect: _lazy, ...redisOptions } = REDIS_OPTIONS
      const cluster = new Cluster(target.nodes, {
        lazyConnect: true,
        enableAutoPipelining: true,
        redisOptions: { ...redisOptions, ...serverOptions(target.auth) },
        clusterRetryStrategy: (attempt: number) => Math.min(100 * attempt, REDIS_RECONNECT_MAX_MS),
        // A command on a slot whose master just failed is retried while the replica is promoted.
        retryDelayOnClusterDown: 200,
        retryDelayOnFailover: 200,
        retryDelayOnTryAgain: 200,
        maxRedirections: 16,
      })
      await startup(cluster, cluster.connect(), `REDIS_CLUSTER_NODES: cannot connect to the Redis Cluster at ${hostList(target.nodes)}`, 'REDIS_PASSWORD')
      return cluster
    }
    case 'sentinel': {
      await probeSentinels(target.sentinels, target.masterName, sentinelOptions(target.auth))
      const sentinel = sentinelOptions(target.auth)
      const redis = new Redis({
        ...REDIS_OPTIONS,
        ...SENTINEL_OPTIONS,
        ...serverOptions(target.auth),
        ...(sentinel.password ? { sentinelPassword: sentinel.password } : {}),
        ...(sentinel.tls ? { sentinelTLS: sentinel.tls, enableTLSForSentinelMode: true } : {}),
        enableAutoPipelining: true,
        sentinels: target.sentinels,
        name: target.masterName,
      })
      await startup(redis, redis.connect(), `REDIS_SENTINEL_MASTER: cannot connect to master '${target.masterName}' through the Sentinels at ${hostList(target.sentinels)}`, 'REDIS_PASSWORD')
      return redis
    }
  }
}

/** Waits for `connecting`; on failure or timeout closes the client and throws `message` with the cause. */
async function startup(client: RedisClient, connecting: Promise<void>, message: string, credentialsVariable?: string): Promise<void> {
  // Errors before ready are reported by the rejection below; afterwards each backend listens itself.
  let lastError: unknown
  const swallow = (error: unknown) => {
    lastError = error
  }
  client.on('error', swallow)
  let timer: NodeJS.Timeout | undefined
  try {
    await Promise.race([
      connecting,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`not ready within ${STARTUP_TIMEOUT_MS / 1000} s`)), STARTUP_TIMEOUT_MS)
      }),
    ])
  } catch (error) {
    client.disconnect()
    // "Connection is closed." says less than the socket error that closed it.
    const cause = reason(lastError ?? error)
    if (credentialsVariable && CREDENTIALS_REFUSED.test(cause)) {
      throw new RedisStartupError(`${credentialsVariable}: ${message.replace(/^[A-Z_]+: /, '')}: the server refuses the credentials: ${cause}`)
    }
    throw new RedisStartupError(`${message}: ${cause}`)
  } finally {
    clearTimeout(timer)
    client.off('error', swallow)
  }
}

function reason(error: unknown): string {
  if (error instanceof AggregateError) return error.errors.map(reason).join('; ')
  return error instanceof Error ? error.message : String(error)
}

/** One command on a short-lived connection of its own (no retries), or the error. */
async function probe(node: HostPort, options: ProbeOptions, command: string, ...args: string[]): Promise<{ reply: unknown } | { error: string }> {
  const redis = new Redis({ ...options, host: node.host, port: node.port, lazyConnect: true, connectTimeout: PROBE_TIMEOUT_MS, maxRetriesPerRequest: 0, retryStrategy: () => null, enableOfflineQueue: false })
  let lastError: unknown
  redis.on('error', (error: unknown) => (lastError = error))
  try {
    await redis.connect()
    return { reply: await redis.call(command, ...args) }
  } catch (error) {
    return { error: reason(lastError ?? error) }
  } finally {
    redis.disconnect()
  }
}

const CREDENTIALS_REFUSED = /WRONGPASS|NOAUTH|invalid password|invalid username-password/i

/** A server that refuses the credentials stops startup at once, naming the variable (retrying cannot help). */
function refuseCredentials(error: string, variable: string, server: string): void {
  if (CREDENTIALS_REFUSED.test(error)) throw new RedisStartupError(`${variable}: ${server} refuses the credentials: ${error}`)
}

type ProbeOptions = Pick<RedisOptions, 'username' | 'password' | 'tls'>

/** Some startup node answers, is a cluster node, and sees the cluster's state as ok. */
async function probeCluster(nodes: HostPort[], options: ProbeOptions): Promise<void> {
  const failures: string[] = []
  for (const node of nodes) {
    const outcome = await probe(node, options, 'CLUSTER', 'INFO')
    if ('error' in outcome) {
      refuseCredentials(outcome.error, 'REDIS_PASSWORD', formatHostPort(node))
      if (/cluster support disabled/i.test(outcome.error)) {
        throw new RedisStartupError(`REDIS_CLUSTER_NODES: ${formatHostPort(node)} is not a Redis Cluster node (cluster support disabled); use REDIS_URL for a single server`)
      }
      failures.push(`${formatHostPort(node)}: ${outcome.error}`)
      continue
    }
    const info = String(outcome.reply)
    const state = /cluster_state:(\w+)/.exec(info)?.[1]
    if (state !== 'ok') {
      const slots = /cluster_slots_ok:(\d+)/.exec(info)?.[1] ?? '?'
      throw new RedisStartupError(`REDIS_CLUSTER_NODES: the Redis Cluster at ${hostList(nodes)} is in state '${state ?? 'unknown'}' (${slots} of 16384 slots served), not 'ok'`)
    }
    return
  }
  throw new RedisStartupError(`REDIS_CLUSTER_NODES: no node of the Redis Cluster answers (${failures.join('; ')})`)
}

/** Some Sentinel answers and knows a master of that name. */
async function probeSentinels(sentinels: HostPort[], masterName: string, options: ProbeOptions): Promise<void> {
  const failures: string[] = []
  let answered = false
  for (const sentinel of sentinels) {
    const outcome = await probe(sentinel, options, 'SENTINEL', 'GET-MASTER-ADDR-BY-NAME', masterName)
    if ('error' in outcome) {
      refuseCredentials(outcome.error, 'REDIS_SENTINEL_PASSWORD', formatHostPort(sentinel))
      failures.push(`${formatHostPort(sentinel)}: ${outcome.error}`)
      continue
    }
    answered = true
    if (Array.isArray(outcome.reply) && outcome.reply.length === 2) return
  }
  if (answered) throw new RedisStartupError(`REDIS_SENTINEL_MASTER: no Sentinel at ${hostList(sentinels)} knows a master named '${masterName}'`)
  throw new RedisStartupError(`REDIS_SENTINELS: no Sentinel answers (${failures.join('; ')})`)
}

/** Commands that wait for data by design: their time is not Redis' latency. */
const BLOCKING_COMMANDS = new Set(['blpop', 'brpop', 'blmove', 'brpoplpush', 'bzpopmin', 'bzpopmax', 'blmpop', 'bzmpop', 'xread', 'xreadgroup', 'wait', 'waitaof', 'subscribe', 'ssubscribe', 'psubscribe'])

/**
 * Calls `observe` with each command's name and seconds, from when `client`
 * is handed the command to its reply (the roost_redis_command_duration_seconds
 * histogram). Only `client` itself: its duplicates (subscribers, blocking
 * readers) are not timed, nor are the blocking commands above.
 */
export function timeCommands(client: RedisClient, observe: (command: string, seconds: number) => void): void {
  const seen = new WeakSet<Command>()
  type Send = (command: Command, ...rest: unknown[]) => unknown
  const send = (client.sendCommand as Send).bind(client)
  const timedSend: Send = (command, ...rest) => {
    // A command can pass here more than once (the offline queue flushed, a cluster redirection).
    if (!seen.has(command) && !BLOCKING_COMMANDS.has(command.name)) {
      seen.add(command)
      const start = performance.now()
      const done = () => observe(command.name, (performance.now() - start) / 1000)
      command.promise.then(done, done)
    }
    return send(command, ...rest)
  }
  ;(client as unknown as { sendCommand: Send }).sendCommand = timedSend
}

