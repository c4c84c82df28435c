// Environment → typed configuration, read once at startup. A bad value stops
// startup with a message naming the variable and what it expects.
import { createPrivateKey } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { isIP } from 'node:net'
import { parseAllowEntry, type AllowEntry } from './outbound/allow-list.js'

export interface Config {
  port: number
  host: string
  databaseUrl: string | undefined
  /** REDIS_URL: one Redis server. At most one of redisUrl, redisClusterNodes and redisSentinel is set. */
  redisUrl: string | undefined
  /** REDIS_CLUSTER_NODES: some (or all) nodes of a Redis Cluster; the rest are discovered. */
  redisClusterNodes: HostPort[] | undefined
  /** REDIS_SENTINELS + REDIS_SENTINEL_MASTER: a master and its replicas watched by Sentinel. */
  redisSentinel: { sentinels: HostPort[]; masterName: string } | undefined
  /** Credentials and TLS for REDIS_CLUSTER_NODES and REDIS_SENTINELS (REDIS_URL carries its own in the URL). */
  redisAuth: RedisAuth
  /** Prefix of every Redis key and channel (REDIS_PREFIX): deployments sharing one Redis use different ones. */
  redisPrefix: string
  dataDir: string
  externalUrl: string
  bootstrap: { realmName?: string; ownerEmail?: string; ownerPassword?: string }
  eventQueueTimeoutSeconds: number
  heartbeatIntervalSeconds: number
  eventQueueMaxEvents: number
  /** Unacknowledged bytes per queue (events' JSON); past it the queue is dropped, as past eventQueueMaxEvents. */
  eventQueueMaxBytes: number
  /** Live event queues one user may have; registering past it drops the user's oldest queue. */
  eventQueuesPerUser: number
  maxFileUploadSizeMib: number
  invitationLinkValidityMinutes: number
  /** A browser session ends after this long without a request (SESSION_IDLE_TIMEOUT_SECONDS; docs/web-sessions.md). */
  sessionIdleTimeoutSeconds: number
  /** A browser session ends this long after its login, however active (SESSION_MAX_AGE_SECONDS). */
  sessionMaxAgeSeconds: number
  smtpUrl: string | undefined
  /** Web Push (VAPID_PUBLIC_KEY, VAPID_PRIVATE_KEY, VAPID_SUBJECT); unset → no Web Push sender. */
  webPush: { publicKey: string; privateKey: string; subject: string } | undefined
  /** FCM HTTP v1 (FCM_SERVICE_ACCOUNT_FILE, FCM_ENDPOINT); unset → no FCM sender. */
  fcm: FcmConfig | undefined
  /** APNs token auth (APNS_KEY_FILE, APNS_KEY_ID, APNS_TEAM_ID, APNS_TOPIC, APNS_ENDPOINT); unset → no APNs sender. */
  apns: ApnsConfig | undefined
  /** Upstream's push notification bouncer (PUSH_BOUNCER_URL, PUSH_BOUNCER_ORG_ID, PUSH_BOUNCER_ORG_KEY); replaces the FCM and APNs senders. */
  pushBouncer: PushBouncerConfig | undefined
  s3: { endpoint: string; bucket: string; region: string; accessKeyId: string; secretAccessKey: string } | undefined
  rateLimiting: boolean
  /** Pending-connection queue of the listening socket (the kernel caps it at net.core.somaxconn). */
  listenBacklog: number
  /** Also answer with upstream's names of the fields the spec renamed (`zulip_version`, `client_gravatar`…). */
  upstreamNames: boolean
  /** Bearer token that unlocks /metrics; unset → no /metrics. */
  metricsToken: string | undefined
  /** Browser origins allowed by CORS (exact `scheme://host[:port]`); empty → CORS off. */
  corsOrigins: string[]
  /** Addresses / CIDRs of proxies whose X-Forwarded-For is believed; empty → none. */
  trustedProxies: string[]
  /** OUTBOUND_ALLOW: destinations outbound requests may reach despite the address and port policy (docs/outbound-requests.md); empty → none. */
  outboundAllow: AllowEntry[]
  logLevel: LogLevel
  /** ROOST_COMMIT: the commit this build was made from (the image sets it), shown in roost_build_info. */
  buildCommit: string | undefined
  /** Admission control (http/admission.ts): past a limit, new requests are refused with 503. */
  admission: AdmissionConfig
}

/** Limits of admission control; 0 turns a limit off. */
export interface AdmissionConfig {
  /** Requests in flight (long-polls excluded) past which new ones are refused. */
  maxInFlight: number
  /** Mean event-loop delay (ms, over a sample interval) past which new requests are refused. */
  maxEventLoopDelayMs: number
  /** V8 heap in use (MiB) past which new requests are refused; undefined → 90 % of V8's heap limit. */
  maxHeapUsedMib: number | undefined
  /** The Retry-After of a refusal. */
  retryAfterSeconds: number
  /** How often the event-loop delay and the heap are sampled. */
  sampleIntervalMs: number
}

export const DEFAULT_ADMISSION: AdmissionConfig = { maxInFlight: 64, maxEventLoopDelayMs: 1000, maxHeapUsedMib: undefined, retryAfterSeconds: 2, sampleIntervalMs: 500 }

function buildCommit(env: Env): string | undefined {
  const raw = env.ROOST_COMMIT?.trim()
  if (!raw) return undefined
  if (!/^[0-9a-f]{7,40}$/i.test(raw)) throw new ConfigError(`ROOST_COMMIT must be a git commit hash (7 to 40 hexadecimal digits), got '${raw}'`)
  return raw.toLowerCase()
}

function admission(env: Env): AdmissionConfig {
  const heap = env.ADMISSION_MAX_HEAP_USED_MIB
  return {
    maxInFlight: integer(env, 'ADMISSION_MAX_IN_FLIGHT', DEFAULT_ADMISSION.maxInFlight, 0, 1_000_000),
    maxEventLoopDelayMs: integer(env, 'ADMISSION_MAX_EVENT_LOOP_DELAY_MS', DEFAULT_ADMISSION.maxEventLoopDelayMs, 0, 60_000),
    maxHeapUsedMib: heap === undefined || heap === '' ? undefined : integer(env, 'ADMISSION_MAX_HEAP_USED_MIB', 0, 0, 1_048_576),
    retryAfterSeconds: integer(env, 'ADMISSION_RETRY_AFTER_SECONDS', DEFAULT_ADMISSION.retryAfterSeconds, 1, 3600),
    sampleIntervalMs: DEFAULT_ADMISSION.sampleIntervalMs,
  }
}

/**
 * How Roost authenticates to the Redis servers of a Cluster or behind
 * Sentinel, whose addresses are host:port lists with no room for them:
 * REDIS_USERNAME / REDIS_PASSWORD (ACL user or requirepass) for the data
 * servers, REDIS_SENTINEL_PASSWORD for the Sentinels themselves, REDIS_TLS
 * for TLS to all of them, verified against REDIS_TLS_CA_FILE (else the
 * system's CAs).
 */
export interface RedisAuth {
  username?: string
  password?: string
  sentinelPassword?: string
  /** Present when REDIS_TLS is on; `ca` is the PEM of REDIS_TLS_CA_FILE. */
  tls?: { ca?: string }
}

export interface HostPort {
  host: string
  port: number
}

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const
export type LogLevel = (typeof LOG_LEVELS)[number]

export const DEFAULT_EVENT_QUEUE_MAX_EVENTS = 10_000
/** 16 MiB: 10,000 events of 1.6 KB on average, or about 60 of the largest message events (docs/limits.md). */
export const DEFAULT_EVENT_QUEUE_MAX_BYTES = 16 * 1024 * 1024
/** Above the largest single event (a message rendered to MAX_RENDERED_CONTENT_BYTES, edited), so no one event drops a queue. */
export const MIN_EVENT_QUEUE_MAX_BYTES = 1024 * 1024
/** Absorbs a reconnect storm: thousands of clients re-polling at once after a node is lost (Node's default, 511, drops their SYNs). */
export const DEFAULT_LISTEN_BACKLOG = 8192
export const DEFAULT_EVENT_QUEUES_PER_USER = 50

/**
 * The configuration's problems: loadConfig reads every variable before it
 * throws, so one error lists every variable that is wrong (`problems`, one
 * sentence each, naming the variable); the message is that sentence when there
 * is one, else all of them, one a line.
 */
export class ConfigError extends Error {
  override name = 'ConfigError'
  readonly problems: string[]

  constructor(problems: string | string[]) {
    const list = typeof problems === 'string' ? [problems] : problems
    super(list.length === 1 ? list[0] : `${list.length} problems:\n${list.map((p) => `  - ${p}`).join('\n')}`)
    this.problems = list
  }
}

/** Reads one part of the configuration; a ConfigError becomes one of `problems` and the part's `fallback` stands in, so the rest is still read. */
function collecting(problems: string[]) {
  return <T>(read: () => T, fallback: T): T => {
    try {
      return read()
    } catch (error) {
      if (!(error instanceof ConfigError)) throw error
      problems.push(...error.problems)
      return fallback
    }
  }
}

type Env = Record<string, string | undefined>

function integer(env: Env, name: string, fallback: number, min: number, max = Number.MAX_SAFE_INTEGER): number {
  const raw = env[name]
  if (raw === undefined || raw === '') return fallback
  if (!/^\d+$/.test(raw.trim())) throw new ConfigError(`${name} must be an integer between ${min} and ${max}, got '${raw}'`)
  const value = Number(raw.trim())
  if (value < min || value > max) throw new ConfigError(`${name} must be an integer between ${min} and ${max}, got '${raw}'`)
  return value
}

function url(env: Env, name: string, protocols: string[]): string | undefined {
  const raw = env[name]
  if (raw === undefined || raw === '') return undefined
  let parsed: URL
  try {
    parsed = new URL(raw)
  } catch {
    throw new ConfigError(`${name} must be a URL (${protocols.join(', ')}), got '${raw}'`)
  }
  if (!protocols.includes(parsed.protocol)) {
    throw new ConfigError(`${name} must use one of ${protocols.join(', ')}, got '${parsed.protocol}'`)
  }
  return raw
}

function onOff(env: Env, name: string, fallback: boolean): boolean {
  const raw = env[name]?.trim().toLowerCase()
  if (raw === undefined || raw === '') return fallback
  if (['on', 'true', '1', 'yes'].includes(raw)) return true
  if (['off', 'false', '0', 'no'].includes(raw)) return false
  throw new ConfigError(`${name} must be 'on' or 'off', got '${env[name]}'`)
}

function list(env: Env, name: string): string[] {
  return (env[name] ?? '').split(',').map((v) => v.trim()).filter((v) => v !== '')
}

function corsOrigins(env: Env): string[] {
  const origins = list(env, 'CORS_ORIGINS')
  for (const origin of origins) {
    let parsed: URL | undefined
    try {
      parsed = new URL(origin)
    } catch {
      parsed = undefined
    }
    if (!parsed || (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') || parsed.origin !== origin.replace(/\/+$/, '')) {
      throw new ConfigError(`CORS_ORIGINS must be a comma-separated list of origins like https://chat.example.com, got '${origin}'`)
    }
  }
  return origins.map((o) => new URL(o).origin)
}

function trustedProxies(env: Env): string[] {
  const entries = list(env, 'TRUSTED_PROXIES')
  for (const entry of entries) {
    const [address, prefix, ...rest] = entry.split('/')
    const family = isIP(address ?? '')
    const prefixOk = prefix === undefined || (/^\d{1,3}$/.test(prefix) && Number(prefix) <= (family === 6 ? 128 : 32))
    if (family === 0 || !prefixOk || rest.length > 0) {
      throw new ConfigError(`TRUSTED_PROXIES must be a comma-separated list of IP addresses or CIDR ranges, got '${entry}'`)
    }
  }
  return entries
}

function outboundAllow(env: Env): AllowEntry[] {
  return list(env, 'OUTBOUND_ALLOW').map((entry) => {
    try {
      return parseAllowEntry(entry)
    } catch (error) {
      throw new ConfigError(`OUTBOUND_ALLOW must be a comma-separated list of host, host:port or CIDR entries: ${(error as Error).message}`)
    }
  })
}

function logLevel(env: Env): LogLevel {
  const raw = env.LOG_LEVEL?.trim().toLowerCase()
  if (raw === undefined || raw === '') return 'info'
  const level = LOG_LEVELS.find((l) => l === raw)
  if (!level) throw new ConfigError(`LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}, got '${env.LOG_LEVEL}'`)
  return level
}

function s3Config(env: Env): Config['s3'] {
  const names = ['S3_ENDPOINT', 'S3_BUCKET', 'S3_REGION', 'S3_ACCESS_KEY_ID', 'S3_SECRET_ACCESS_KEY'] as const
  const given = names.filter((n) => env[n])
  if (given.length === 0) return undefined
  const missing = names.filter((n) => !env[n])
  if (missing.length > 0) throw new ConfigError(`${missing.join(', ')} must be set when ${given.join(', ')} is set`)
  return {
    endpoint: url(env, 'S3_ENDPOINT', ['http:', 'https:']) as string,
    bucket: env.S3_BUCKET as string,
    region: env.S3_REGION as string,
    accessKeyId: env.S3_ACCESS_KEY_ID as string,
    secretAccessKey: env.S3_SECRET_ACCESS_KEY as string,
  }
}

function bootstrap(env: Env): Config['bootstrap'] {
  const email = env.BOOTSTRAP_OWNER_EMAIL
  if (email !== undefined && email !== '' && !/^[^@\s]+@[^@\s]+$/.test(email)) {
    throw new ConfigError(`BOOTSTRAP_OWNER_EMAIL must be an email address, got '${email}'`)
  }
  const password = env.BOOTSTRAP_OWNER_PASSWORD
  if (email && !password) throw new ConfigError('BOOTSTRAP_OWNER_PASSWORD must be set when BOOTSTRAP_OWNER_EMAIL is set')
  if (password && !email) throw new ConfigError('BOOTSTRAP_OWNER_EMAIL must be set when BOOTSTRAP_OWNER_PASSWORD is set')
  return { realmName: env.BOOTSTRAP_REALM_NAME || undefined, ownerEmail: email || undefined, ownerPassword: password || undefined }
}

/** `host:port,host:port,…` (IPv6 addresses in brackets: `[::1]:7000`). */
function hostPorts(env: Env, name: string): HostPort[] | undefined {
  const entries = list(env, name)
  if (entries.length === 0) return undefined
  return entries.map((entry) => {
    const m = /^(?:\[([0-9A-Fa-f:.]+)\]|([A-Za-z0-9.-]+)):(\d{1,5})$/.exec(entry)
    const port = Number(m?.[3])
    if (!m || port < 1 || port > 65535) throw new ConfigError(`${name} must be a comma-separated list of host:port, got '${entry}'`)
    return { host: (m[1] ?? m[2]) as string, port }
  })
}

function redisConnection(env: Env): Pick<Config, 'redisUrl' | 'redisClusterNodes' | 'redisSentinel' | 'redisAuth'> {
  const topology = redisTopology(env)
  return { ...topology, redisAuth: redisAuth(env, topology) }
}

/** Exactly one way to reach Redis, or none (the in-process bus). */
function redisTopology(env: Env): Pick<Config, 'redisUrl' | 'redisClusterNodes' | 'redisSentinel'> {
  const redisUrl = url(env, 'REDIS_URL', ['redis:', 'rediss:'])
  const redisClusterNodes = hostPorts(env, 'REDIS_CLUSTER_NODES')
  const sentinels = hostPorts(env, 'REDIS_SENTINELS')
  const masterName = env.REDIS_SENTINEL_MASTER?.trim() || undefined
  const given = [redisUrl && 'REDIS_URL', redisClusterNodes && 'REDIS_CLUSTER_NODES', sentinels && 'REDIS_SENTINELS'].filter((n): n is string => Boolean(n))
  if (given.length > 1) throw new ConfigError(`${given.join(' and ')} are alternatives: set only one of REDIS_URL, REDIS_CLUSTER_NODES and REDIS_SENTINELS`)
  if (sentinels && !masterName) throw new ConfigError('REDIS_SENTINEL_MASTER must be set with REDIS_SENTINELS (the name of the master the Sentinels watch)')
  if (masterName && !sentinels) throw new ConfigError('REDIS_SENTINELS must be set with REDIS_SENTINEL_MASTER (host:port,… of the Sentinels)')
  if (masterName && !/^[A-Za-z0-9_.:-]{1,128}$/.test(masterName)) throw new ConfigError(`REDIS_SENTINEL_MASTER must be a master name (letters, digits, '_', '.', ':' or '-'), got '${masterName}'`)
  return { redisUrl, redisClusterNodes, redisSentinel: sentinels && masterName ? { sentinels, masterName } : undefined }
}

const REDIS_AUTH_VARIABLES = ['REDIS_USERNAME', 'REDIS_PASSWORD', 'REDIS_SENTINEL_PASSWORD', 'REDIS_TLS', 'REDIS_TLS_CA_FILE'] as const

function redisAuth(env: Env, topology: Pick<Config, 'redisUrl' | 'redisClusterNodes' | 'redisSentinel'>): RedisAuth {
  const given = REDIS_AUTH_VARIABLES.filter((name) => (env[name] ?? '') !== '')
  if (given.length === 0) return {}
  const first = given[0] as string
  if (topology.redisUrl) {
    throw new ConfigError(`${first} applies to REDIS_CLUSTER_NODES and REDIS_SENTINELS; with REDIS_URL put the credentials in the URL (redis://user:password@host:port, rediss:// for TLS)`)
  }
  if (!topology.redisClusterNodes && !topology.redisSentinel) throw new ConfigError(`${first} is set but no Redis is (REDIS_CLUSTER_NODES or REDIS_SENTINELS)`)
  if (env.REDIS_SENTINEL_PASSWORD && !topology.redisSentinel) throw new ConfigError('REDIS_SENTINEL_PASSWORD applies only with REDIS_SENTINELS')
  const tls = onOff(env, 'REDIS_TLS', false)
  const caFile = env.REDIS_TLS_CA_FILE || undefined
  if (caFile && !tls) throw new ConfigError('REDIS_TLS_CA_FILE needs REDIS_TLS=on')
  let ca: string | undefined
  if (caFile) {
    try {
      ca = readFileSync(caFile, 'utf8')
    } catch (error) {
      throw new ConfigError(`REDIS_TLS_CA_FILE: cannot read '${caFile}': ${(error as Error).message}`)
    }
    if (!ca.includes('-----BEGIN CERTIFICATE-----')) throw new ConfigError(`REDIS_TLS_CA_FILE: '${caFile}' is not a PEM certificate`)
  }
  if (env.REDIS_USERNAME && !env.REDIS_PASSWORD) throw new ConfigError('REDIS_USERNAME needs REDIS_PASSWORD')
  return {
    ...(env.REDIS_USERNAME ? { username: env.REDIS_USERNAME } : {}),
    ...(env.REDIS_PASSWORD ? { password: env.REDIS_PASSWORD } : {}),
    ...(env.REDIS_SENTINEL_PASSWORD ? { sentinelPassword: env.REDIS_SENTINEL_PASSWORD } : {}),
    ...(tls ? { tls: ca ? { ca } : {} } : {}),
  }
}

function redisPrefix(env: Env): string {
  const raw = env.REDIS_PREFIX
  if (raw === undefined || raw === '') return 'roost'
  if (!/^[A-Za-z0-9_.:-]{1,64}$/.test(raw)) throw new ConfigError(`REDIS_PREFIX must be 1–64 letters, digits, '_', '.', ':' or '-', got '${raw}'`)
  return raw
}

const BASE64URL = /^[A-Za-z0-9_-]+$/

/** VAPID keys as web-push prints them: base64url, a 65-byte uncompressed P-256 public key and a 32-byte private key. */
function webPushConfig(env: Env): Config['webPush'] {
  const publicKey = env.VAPID_PUBLIC_KEY?.trim()
  const privateKey = env.VAPID_PRIVATE_KEY?.trim()
  const subject = env.VAPID_SUBJECT?.trim()
  if (!publicKey && !privateKey && !subject) return undefined
  const problems: string[] = []
  const decoded = (v: string) => (BASE64URL.test(v) ? Buffer.from(v, 'base64url') : Buffer.alloc(0))
  if (!publicKey) problems.push('VAPID_PUBLIC_KEY must be set with VAPID_PRIVATE_KEY and VAPID_SUBJECT')
  else if (decoded(publicKey).length !== 65 || decoded(publicKey)[0] !== 4) problems.push('VAPID_PUBLIC_KEY must be a base64url-encoded uncompressed P-256 public key (65 bytes)')
  if (!privateKey) problems.push('VAPID_PRIVATE_KEY must be set with VAPID_PUBLIC_KEY and VAPID_SUBJECT')
  else if (decoded(privateKey).length !== 32) problems.push('VAPID_PRIVATE_KEY must be a base64url-encoded P-256 private key (32 bytes)')
  if (!subject) problems.push('VAPID_SUBJECT must be set (a mailto: or https: URL) with the VAPID keys')
  else if (!/^(mailto:|https:\/\/)/.test(subject)) problems.push(`VAPID_SUBJECT must be a mailto: or https: URL, got '${subject}'`)
  if (problems.length > 0 || !publicKey || !privateKey || !subject) throw new ConfigError(problems)
  return { publicKey, privateKey, subject }
}

export interface FcmConfig {
  projectId: string
  clientEmail: string
  /** PEM of the service account's RSA key. */
  privateKey: string
  /** OAuth2 token endpoint (the service account's token_uri). */
  tokenUri: string
  /** Base URL of the FCM API (FCM_ENDPOINT, default https://fcm.googleapis.com). */
  endpoint: string
}

/** A Google service-account JSON key file, read and checked once at startup. */
function fcmConfig(env: Env): FcmConfig | undefined {
  const file = env.FCM_SERVICE_ACCOUNT_FILE?.trim()
  if (!file) {
    if (env.FCM_ENDPOINT) throw new ConfigError('FCM_ENDPOINT is set but FCM_SERVICE_ACCOUNT_FILE is not')
    return undefined
  }
  let parsed: Record<string, unknown>
  try {
    parsed = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>
  } catch (error) {
    throw new ConfigError(`FCM_SERVICE_ACCOUNT_FILE: cannot read a JSON service-account key from '${file}' (${error instanceof Error ? error.message : String(error)})`)
  }
  const field = (name: string) => {
    const value = parsed[name]
    if (typeof value !== 'string' || value === '') throw new ConfigError(`FCM_SERVICE_ACCOUNT_FILE: '${file}' lacks the service account's ${name}`)
    return value
  }
  const privateKey = field('private_key')
  try {
    createPrivateKey(privateKey)
  } catch {
    throw new ConfigError(`FCM_SERVICE_ACCOUNT_FILE: the private_key in '${file}' is not a valid PEM key`)
  }
  const tokenUri = typeof parsed.token_uri === 'string' && parsed.token_uri ? parsed.token_uri : 'https://oauth2.googleapis.com/token'
  const endpoint = (url(env, 'FCM_ENDPOINT', ['https:', 'http:']) ?? 'https://fcm.googleapis.com').replace(/\/+$/, '')
  return { projectId: field('project_id'), clientEmail: field('client_email'), privateKey, tokenUri, endpoint }
}

export interface ApnsConfig {
  /** PEM of the .p8 signing key (EC P-256). */
  key: string
  keyId: string
  teamId: string
  /** The app's bundle ID, for devices registered without an appid. */
  topic: string | undefined
  /** https://api.push.apple.com (production) or api.sandbox.push.apple.com, or a test server. */
  endpoint: string
}

function apnsConfig(env: Env): ApnsConfig | undefined {
  const file = env.APNS_KEY_FILE?.trim()
  const keyId = env.APNS_KEY_ID?.trim()
  const teamId = env.APNS_TEAM_ID?.trim()
  if (!file && !keyId && !teamId) {
    if (env.APNS_TOPIC || env.APNS_ENDPOINT) throw new ConfigError('APNS_TOPIC and APNS_ENDPOINT need APNS_KEY_FILE, APNS_KEY_ID and APNS_TEAM_ID')
    return undefined
  }
  const problems: string[] = []
  if (!keyId || !/^[A-Z0-9]{10}$/.test(keyId)) problems.push(`APNS_KEY_ID must be the 10-character key ID, got '${keyId ?? ''}'`)
  if (!teamId || !/^[A-Z0-9]{10}$/.test(teamId)) problems.push(`APNS_TEAM_ID must be the 10-character team ID, got '${teamId ?? ''}'`)
  let key: string | undefined
  if (!file) problems.push('APNS_KEY_FILE must be set with APNS_KEY_ID and APNS_TEAM_ID')
  else key = readApnsKey(file, problems)
  let endpoint = 'https://api.push.apple.com'
  try {
    endpoint = (url(env, 'APNS_ENDPOINT', ['https:']) ?? endpoint).replace(/\/+$/, '')
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error
    problems.push(...error.problems)
  }
  if (problems.length > 0 || key === undefined || !keyId || !teamId) throw new ConfigError(problems)
  return { key, keyId, teamId, topic: env.APNS_TOPIC?.trim() || undefined, endpoint }
}

/** The .p8 key at `file`, or undefined with the reason added to `problems`. */
function readApnsKey(file: string, problems: string[]): string | undefined {
  let key: string
  try {
    key = readFileSync(file, 'utf8')
  } catch (error) {
    problems.push(`APNS_KEY_FILE: cannot read '${file}' (${error instanceof Error ? error.message : String(error)})`)
    return undefined
  }
  try {
    const parsed = createPrivateKey(key)
    if (parsed.asymmetricKeyType !== 'ec' || parsed.asymmetricKeyDetails?.namedCurve !== 'prime256v1') throw new Error('not P-256')
  } catch {
    problems.push(`APNS_KEY_FILE: '${file}' is not a P-256 private key in PEM (.p8)`)
    return undefined
  }
  return key
}

export interface PushBouncerConfig {
  /** Base URL of the bouncer; requests go to `{url}/api/v1/remotes/push/…`. */
  url: string
  /** The server's registration at the bouncer (upstream's ZULIP_ORG_ID, a UUID, and ZULIP_ORG_KEY). */
  orgId: string
  orgKey: string
}

const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

/** The three bouncer variables go together, and exclude the direct FCM and APNs senders (upstream sends through one or the other). */
function pushBouncerConfig(env: Env, direct: { fcm: boolean; apns: boolean }): PushBouncerConfig | undefined {
  const bouncerUrl = url(env, 'PUSH_BOUNCER_URL', ['https:', 'http:'])
  const orgId = env.PUSH_BOUNCER_ORG_ID?.trim()
  const orgKey = env.PUSH_BOUNCER_ORG_KEY?.trim()
  if (!bouncerUrl && !orgId && !orgKey) return undefined
  const problems: string[] = []
  if (!bouncerUrl) problems.push('PUSH_BOUNCER_URL must be set with PUSH_BOUNCER_ORG_ID and PUSH_BOUNCER_ORG_KEY')
  if (!orgId || !UUID_PATTERN.test(orgId)) problems.push(`PUSH_BOUNCER_ORG_ID must be the server's registration UUID at the bouncer, got '${orgId ?? ''}'`)
  if (!orgKey || !/^[\x21-\x7e]{16,}$/.test(orgKey)) problems.push('PUSH_BOUNCER_ORG_KEY must be the server\'s API key at the bouncer (at least 16 printable characters, no spaces)')
  if (direct.fcm) problems.push('PUSH_BOUNCER_URL and FCM_SERVICE_ACCOUNT_FILE are alternatives: the bouncer sends to Android devices')
  if (direct.apns) problems.push('PUSH_BOUNCER_URL and APNS_KEY_FILE are alternatives: the bouncer sends to Apple devices')
  if (problems.length > 0 || !bouncerUrl || !orgId || !orgKey) throw new ConfigError(problems)
  return { url: bouncerUrl.replace(/\/+$/, ''), orgId: orgId.toLowerCase(), orgKey }
}

/** Two weeks, upstream's session cookie age. */
export const DEFAULT_SESSION_IDLE_TIMEOUT_SECONDS = 14 * 24 * 3600
export const DEFAULT_SESSION_MAX_AGE_SECONDS = 30 * 24 * 3600
/** Ten years: longer lifetimes are a typo, and the cookie's Max-Age must stay a sane integer. */
const MAX_SESSION_SECONDS = 10 * 365 * 24 * 3600

/** Browser sessions: the idle timeout cannot exceed the absolute lifetime, and a minute is the shortest either may be. */
function sessionLifetimes(env: Env): Pick<Config, 'sessionIdleTimeoutSeconds' | 'sessionMaxAgeSeconds'> {
  const sessionMaxAgeSeconds = integer(env, 'SESSION_MAX_AGE_SECONDS', DEFAULT_SESSION_MAX_AGE_SECONDS, 60, MAX_SESSION_SECONDS)
  const idleDefault = Math.min(DEFAULT_SESSION_IDLE_TIMEOUT_SECONDS, sessionMaxAgeSeconds)
  const sessionIdleTimeoutSeconds = integer(env, 'SESSION_IDLE_TIMEOUT_SECONDS', idleDefault, 60, MAX_SESSION_SECONDS)
  if (sessionIdleTimeoutSeconds > sessionMaxAgeSeconds) {
    throw new ConfigError(`SESSION_IDLE_TIMEOUT_SECONDS (${sessionIdleTimeoutSeconds}) must not exceed SESSION_MAX_AGE_SECONDS (${sessionMaxAgeSeconds})`)
  }
  return { sessionIdleTimeoutSeconds, sessionMaxAgeSeconds }
}

/** Reads the configuration and throws a ConfigError listing every problem (the server and the admin commands). */
export function loadConfig(env: Env = process.env): Config {
  const { config, problems } = readConfigAll(env)
  if (problems.length > 0) throw new ConfigError(problems)
  return config
}

/**
 * The configuration and every problem in it, without throwing: a variable
 * with a problem reads as its default (or unset), so a checker (`roost
 * check`) can still test what the rest of the configuration names.
 */
export function readConfigAll(env: Env = process.env): { config: Config; problems: string[] } {
  const problems: string[] = []
  const read = collecting(problems)
  const fcm = read(() => fcmConfig(env), undefined)
  const apns = read(() => apnsConfig(env), undefined)
  const port = read(() => integer(env, 'PORT', 9991, 0, 65535), 9991)
  const externalUrl = (read(() => url(env, 'EXTERNAL_URL', ['http:', 'https:']), undefined) ?? `http://localhost:${port}`).replace(/\/+$/, '')
  const config: Config = {
    port,
    host: env.HOST || '127.0.0.1',
    databaseUrl: read(() => url(env, 'DATABASE_URL', ['postgresql:', 'postgres:']), undefined),
    ...read(() => redisConnection(env), { redisUrl: undefined, redisClusterNodes: undefined, redisSentinel: undefined, redisAuth: {} }),
    redisPrefix: read(() => redisPrefix(env), 'roost'),
    dataDir: env.DATA_DIR || './data',
    externalUrl,
    bootstrap: read(() => bootstrap(env), {}),
    eventQueueTimeoutSeconds: read(() => integer(env, 'EVENT_QUEUE_TIMEOUT_SECONDS', 600, 1), 600),
    heartbeatIntervalSeconds: read(() => integer(env, 'HEARTBEAT_INTERVAL_SECONDS', 60, 1), 60),
    eventQueueMaxEvents: read(() => integer(env, 'EVENT_QUEUE_MAX_EVENTS', DEFAULT_EVENT_QUEUE_MAX_EVENTS, 1), DEFAULT_EVENT_QUEUE_MAX_EVENTS),
    eventQueueMaxBytes: read(() => integer(env, 'EVENT_QUEUE_MAX_BYTES', DEFAULT_EVENT_QUEUE_MAX_BYTES, MIN_EVENT_QUEUE_MAX_BYTES, 2 ** 31 - 1), DEFAULT_EVENT_QUEUE_MAX_BYTES),
    eventQueuesPerUser: read(() => integer(env, 'EVENT_QUEUES_PER_USER', DEFAULT_EVENT_QUEUES_PER_USER, 1, 10_000), DEFAULT_EVENT_QUEUES_PER_USER),
    maxFileUploadSizeMib: read(() => integer(env, 'MAX_FILE_UPLOAD_SIZE', 25, 0), 25),
    invitationLinkValidityMinutes: read(() => integer(env, 'INVITATION_LINK_VALIDITY_MINUTES', 14400, 1), 14400),
    ...read(() => sessionLifetimes(env), { sessionIdleTimeoutSeconds: DEFAULT_SESSION_IDLE_TIMEOUT_SECONDS, sessionMaxAgeSeconds: DEFAULT_SESSION_MAX_AGE_SECONDS }),
    smtpUrl: read(() => url(env, 'SMTP_URL', ['smtp:', 'smtps:']), undefined),
    webPush: read(() => webPushConfig(env), undefined),
    fcm,
    apns,
    pushBouncer: read(() => pushBouncerConfig(env, { fcm: fcm !== undefined, apns: apns !== undefined }), undefined),
    s3: read(() => s3Config(env), undefined),
    rateLimiting: read(() => onOff(env, 'RATE_LIMITING', true), true),
    listenBacklog: read(() => integer(env, 'LISTEN_BACKLOG', DEFAULT_LISTEN_BACKLOG, 1, 1_000_000), DEFAULT_LISTEN_BACKLOG),
    upstreamNames: read(() => onOff(env, 'UPSTREAM_NAMES', true), true),
    metricsToken: env.METRICS_TOKEN || undefined,
    corsOrigins: read(() => corsOrigins(env), []),
    trustedProxies: read(() => trustedProxies(env), []),
    outboundAllow: read(() => outboundAllow(env), []),
    logLevel: read(() => logLevel(env), 'info'),
    admission: read(() => admission(env), DEFAULT_ADMISSION),
    buildCommit: read(() => buildCommit(env), undefined),
  }
  return { config, problems }
}
