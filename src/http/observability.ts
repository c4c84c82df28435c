// JSON logs and Prometheus metrics of the HTTP layer: one "request completed"
// line per request carrying the request, user, organization and event queue
// IDs where known; the latency histogram by route pattern; /metrics behind a
// bearer token. Secrets are redacted by pino before anything is written.
import { timingSafeEqual, createHash } from 'node:crypto'
import type { FastifyInstance, FastifyReply, FastifyRequest, FastifyServerOptions } from 'fastify'
import type { DestinationStream, LoggerOptions } from 'pino'
import type { Services } from '../services.js'
import type { LogLevel } from '../config.js'
import { ApiError } from '../errors.js'

declare module 'fastify' {
  interface FastifyRequest {
    /** Set by route() once the request is authenticated (log fields). */
    roostUserId: number | null
    roostRealm: string | null
    /** Set by the event routes: the queue the request is about. */
    roostQueueId: string | null
    /** The route's URL pattern, set by app.ts for the API routes (cheaper than Fastify's routeOptions getter). */
    roostRoute: string | null
  }
}

/** Never written to a log, wherever they appear in a logged object. */
export const REDACTED_PATHS = [
  'req.headers.authorization',
  'req.headers.cookie',
  'headers.authorization',
  'headers.cookie',
  '*.headers.authorization',
  '*.headers.cookie',
  'password',
  'api_key',
  'token',
  'secret',
  '*.password',
  '*.api_key',
  '*.token',
  '*.secret',
  '*.new_password',
  '*.old_password',
  '*.authorization',
]

/** The server's logger: JSON lines at `level`, secrets redacted. */
export function loggerOptions(level: LogLevel, stream?: DestinationStream): FastifyServerOptions['logger'] {
  const options: LoggerOptions = { level, redact: { paths: REDACTED_PATHS, censor: '[redacted]' } }
  return stream ? { ...options, stream } : options
}

/** The route pattern of a request (`/api/v1/messages/:message_id`), never the raw URL. */
function routeOf(request: FastifyRequest): string {
  // request.routeOptions builds a dozen-field object on every read.
  return request.roostRoute ?? request.routeOptions.url ?? 'unmatched'
}

function digest(value: string): Buffer {
  return createHash('sha256').update(value).digest()
}

const QUIET_LEVELS = new Set(['warn', 'error', 'fatal', 'silent'])

/** Decorations, the completion log line and the latency histogram (every request). */
export function installObservability(app: FastifyInstance, services: Services): void {
  app.decorateRequest('roostUserId', null)
  app.decorateRequest('roostRealm', null)
  app.decorateRequest('roostQueueId', null)
  app.decorateRequest('roostRoute', null)
  const histogram = services.metrics.httpDuration
  // A callback hook (every request): no promise per request.
  app.addHook('onResponse', (request: FastifyRequest, reply: FastifyReply, done: () => void) => {
    const route = routeOf(request)
    const status = reply.statusCode
    const seconds = reply.elapsedTime / 1000
    histogram.observe({ method: request.method, route, status: String(status) }, seconds)
    if (QUIET_LEVELS.has(request.log.level)) return done()
    request.log.info(
      {
        method: request.method,
        route,
        status,
        response_time_ms: Math.round(reply.elapsedTime * 10) / 10,
        remote_address: request.ip,
        ...(request.roostUserId !== null ? { user_id: request.roostUserId } : {}),
        ...(request.roostRealm !== null ? { realm: request.roostRealm } : {}),
        ...(request.roostQueueId !== null ? { queue_id: request.roostQueueId } : {}),
      },
      'request completed',
    )
    done()
  })
}

/** GET /metrics, served only when METRICS_TOKEN is set and only with `Authorization: Bearer <token>`. */
export function registerMetricsRoute(app: FastifyInstance, services: Services): void {
  const token = services.config.metricsToken
  if (!token) return
  const expected = digest(token)
  app.get('/metrics', async (request, reply) => {
    const header = request.headers.authorization
    const match = header === undefined ? null : /^Bearer\s+(\S+)\s*$/i.exec(header)
    if (!match) throw new ApiError('Missing metrics token', 'UNAUTHORIZED', 401, {}, { 'WWW-Authenticate': 'Bearer realm="metrics"' })
    // Digests of equal length, compared in constant time: neither the token nor its length leaks.
    if (!timingSafeEqual(digest(match[1] as string), expected)) throw new ApiError('Invalid metrics token', 'UNAUTHORIZED', 403)
    const registry = services.metrics.registry
    return reply.header('Content-Type', registry.contentType).send(await registry.metrics())
  })
}
