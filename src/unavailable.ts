// Tells a backend being unreachable (PostgreSQL stopped or restarting, Redis
// down or reconnecting) from a bug, so the error handler can answer 503
// SERVER_NOT_READY, which clients retry, instead of a 500. The errors arrive
// from ioredis (one server, Cluster or Sentinel), from pg, and from Prisma's pg driver adapter (which keeps the
// driver's error, or its PostgreSQL code, in `cause` or
// `meta.driverAdapterError`).

/** Socket-level failures (Node's error codes). */
const SOCKET_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN', 'ECONNABORTED'])
/** PostgreSQL SQLSTATEs of a server going away or not accepting sessions (class 08 is checked by prefix). */
const POSTGRES_CODES = new Set(['57P01', '57P02', '57P03', '53300'])
/** Prisma's codes for an unreachable database, a closed connection, a pool timeout. */
const PRISMA_CODES = new Set(['P1001', 'P1002', 'P1008', 'P1017', 'P2024'])
/** Prisma driver adapter error kinds of the same. */
const ADAPTER_KINDS = new Set(['DatabaseNotReachable', 'ConnectionClosed', 'SocketTimeout', 'TooManyConnections'])
/** ioredis: a command given up after the connection's retries, or sent on a closed connection. */
const REDIS_ERROR_NAMES = new Set(['MaxRetriesPerRequestError'])
const MESSAGES = [
  /^Connection is closed\.?$/,
  /Stream isn't writeable/,
  /^Connection terminated/,
  /timeout exceeded when trying to connect/,
  /Client has encountered a connection error and is not queryable/,
  /Client was closed and is not queryable/,
  /the database system is (shutting down|starting up|in recovery mode)/,
  // Prisma P2028 when no pooled connection frees up within maxWait: the database is saturated.
  /Unable to start a transaction in the given time/,
  /terminating connection due to administrator command/,
  // Redis Cluster while a failed master's replica is promoted, or with every node lost (ioredis).
  /^CLUSTERDOWN /,
  /^TRYAGAIN /,
  /^None of startup nodes is available/,
  /^Failed to refresh slots cache/,
  /^Cluster is ended/,
  // ioredis gave up following a slot's redirections (the master died, its replica not yet promoted),
  // or had no connection to send a command on while reconnecting.
  /^Too many Cluster redirections/,
  /^Cluster is disconnect(ed|ing)\.?$/,
  /^Node is disconnected$/,
  /^Cluster isn't ready and enableOfflineQueue options is false$/,
  // Sentinel: no Sentinel answers yet; a demoted master still answering as a replica; a replica loading its data.
  /^All sentinels are unreachable/,
  /^READONLY /,
  /^LOADING /,
]

export function isBackendUnavailable(error: unknown, depth = 0): boolean {
  if (typeof error !== 'object' || error === null || depth > 6) return false
  const e = error as { name?: unknown; message?: unknown; code?: unknown; kind?: unknown; originalCode?: unknown; cause?: unknown; meta?: { driverAdapterError?: unknown } }
  const code = typeof e.code === 'string' ? e.code : typeof e.originalCode === 'string' ? e.originalCode : ''
  if (SOCKET_CODES.has(code) || POSTGRES_CODES.has(code) || PRISMA_CODES.has(code) || /^08[0-9A-Z]{3}$/.test(code)) return true
  if (typeof e.kind === 'string' && ADAPTER_KINDS.has(e.kind)) return true
  if (typeof e.name === 'string' && REDIS_ERROR_NAMES.has(e.name)) return true
  if (typeof e.message === 'string' && MESSAGES.some((re) => re.test(e.message as string))) return true
  if (Array.isArray((error as { errors?: unknown }).errors)) {
    // AggregateError (e.g. a connection refused on both IPv4 and IPv6).
    if (((error as { errors: unknown[] }).errors).some((inner) => isBackendUnavailable(inner, depth + 1))) return true
  }
  return isBackendUnavailable(e.cause, depth + 1) || isBackendUnavailable(e.meta?.driverAdapterError, depth + 1)
}
