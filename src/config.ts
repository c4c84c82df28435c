// Environment → typed configuration, read once at startup. A bad value stops
// startup with a message naming the variable and what it expects.
import { isIP } from 'node:net'

export interface Config {
  port: number
  host: string
  databaseUrl: string | undefined
  redisUrl: string | undefined
  /** Prefix of every Redis key and channel (REDIS_PREFIX): deployments sharing one Redis use different ones. */
  redisPrefix: string
  dataDir: string
  externalUrl: string
  bootstrap: { realmName?: string; ownerEmail?: string; ownerPassword?: string }
  eventQueueTimeoutSeconds: number
  heartbeatIntervalSeconds: number
  eventQueueMaxEvents: number
  /** Live event queues one user may have; registering past it drops the user's oldest queue. */
  eventQueuesPerUser: number
  maxFileUploadSizeMib: number
  invitationLinkValidityMinutes: number
  smtpUrl: string | undefined
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
  logLevel: LogLevel
}

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const
export type LogLevel = (typeof LOG_LEVELS)[number]

export const DEFAULT_EVENT_QUEUE_MAX_EVENTS = 10_000
/** Absorbs a reconnect storm: thousands of clients re-polling at once after a node is lost (Node's default, 511, drops their SYNs). */
export const DEFAULT_LISTEN_BACKLOG = 8192
export const DEFAULT_EVENT_QUEUES_PER_USER = 50

export class ConfigError extends Error {
  override name = 'ConfigError'
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

function redisPrefix(env: Env): string {
  const raw = env.REDIS_PREFIX
  if (raw === undefined || raw === '') return 'roost'
  if (!/^[A-Za-z0-9_.:-]{1,64}$/.test(raw)) throw new ConfigError(`REDIS_PREFIX must be 1–64 letters, digits, '_', '.', ':' or '-', got '${raw}'`)
  return raw
}

export function loadConfig(env: Env = process.env): Config {
  const port = integer(env, 'PORT', 9991, 0, 65535)
  const externalUrl = (url(env, 'EXTERNAL_URL', ['http:', 'https:']) ?? `http://localhost:${port}`).replace(/\/+$/, '')
  return {
    port,
    host: env.HOST || '127.0.0.1',
    databaseUrl: url(env, 'DATABASE_URL', ['postgresql:', 'postgres:']),
    redisUrl: url(env, 'REDIS_URL', ['redis:', 'rediss:']),
    redisPrefix: redisPrefix(env),
    dataDir: env.DATA_DIR || './data',
    externalUrl,
    bootstrap: bootstrap(env),
    eventQueueTimeoutSeconds: integer(env, 'EVENT_QUEUE_TIMEOUT_SECONDS', 600, 1),
    heartbeatIntervalSeconds: integer(env, 'HEARTBEAT_INTERVAL_SECONDS', 60, 1),
    eventQueueMaxEvents: integer(env, 'EVENT_QUEUE_MAX_EVENTS', DEFAULT_EVENT_QUEUE_MAX_EVENTS, 1),
    eventQueuesPerUser: integer(env, 'EVENT_QUEUES_PER_USER', DEFAULT_EVENT_QUEUES_PER_USER, 1, 10_000),
    maxFileUploadSizeMib: integer(env, 'MAX_FILE_UPLOAD_SIZE', 25, 0),
    invitationLinkValidityMinutes: integer(env, 'INVITATION_LINK_VALIDITY_MINUTES', 14400, 1),
    smtpUrl: url(env, 'SMTP_URL', ['smtp:', 'smtps:']),
    s3: s3Config(env),
    rateLimiting: onOff(env, 'RATE_LIMITING', true),
    listenBacklog: integer(env, 'LISTEN_BACKLOG', DEFAULT_LISTEN_BACKLOG, 1, 1_000_000),
    upstreamNames: onOff(env, 'UPSTREAM_NAMES', true),
    metricsToken: env.METRICS_TOKEN || undefined,
    corsOrigins: corsOrigins(env),
    trustedProxies: trustedProxies(env),
    logLevel: logLevel(env),
  }
}
