// buildApp(): plugins, the route table under /api/v1, 405s and the error handler.
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance, type FastifyServerOptions } from 'fastify'
import formbody from '@fastify/formbody'
import multipart from '@fastify/multipart'
import cors from '@fastify/cors'
import helmet from '@fastify/helmet'
import type { Services } from './services.js'
import { methodNotAllowed, requestBodyTooLarge, uploadTooLarge } from './errors.js'
import { clientErrorHandler, frameworkErrors, installErrorHandling, markRequestRead, markRequestsRead } from './http/error-handler.js'
import { allRoutes } from './http/routes/index.js'
import { registerPages } from './http/pages/index.js'
import { registerAccountPages } from './http/routes/settings.js'
import { refuseRepeatedHost } from './http/host-header.js'
import { buildOpenApi } from './http/openapi.js'
import type { HttpMethod, Route } from './http/route.js'
import { lazyChildLogger } from './http/lazy-logger.js'
import { installObservability, registerMetricsRoute } from './http/observability.js'
import { RunningHandlers } from './http/running-handlers.js'
import { BROWSER_REFERRER_POLICY } from './http/session-auth.js'
import { serializeReply } from './http/reply-serializer.js'
import { registerWebApp } from './http/web-app.js'
import { requestIdOf, returnRequestId } from './http/request-id.js'
import { Admission } from './http/admission.js'

export const API_PREFIX = '/api/v1'
/** The same routes for the browser app, authenticated by the session cookie (http/json-auth.ts). */
export const JSON_PREFIX = '/json'

/** The largest request body other than a file upload (docs/api.md "Request limits"); larger ones answer 413. */
export const MAX_REQUEST_BODY_BYTES = 1024 * 1024
/** Form fields of one multipart request (no endpoint declares nearly as many). */
const MAX_MULTIPART_FIELDS = 100

export interface BuildAppOptions {
  services: Services
  routes?: Route[]
  logger?: FastifyServerOptions['logger']
  /** A logger made beforehand (the server's, shared with the backends); wins over `logger`. */
  loggerInstance?: FastifyBaseLogger
}

const ALL_METHODS: HttpMethod[] = ['GET', 'POST', 'PATCH', 'DELETE', 'PUT']

export async function buildApp({ services, routes = allRoutes, logger = false, loggerInstance }: BuildAppOptions): Promise<FastifyInstance> {
  const app = Fastify({
    ...(loggerInstance ? { loggerInstance } : { logger }),
    // JSON and urlencoded bodies; multipart bodies (uploads) are bounded by the multipart limits below.
    bodyLimit: MAX_REQUEST_BODY_BYTES,
    routerOptions: { ignoreTrailingSlash: true },
    forceCloseConnections: 'idle',
    // X-Forwarded-For is believed only from these (TRUSTED_PROXIES); request.ip is then the client's.
    trustProxy: services.config.trustedProxies.length > 0 ? services.config.trustedProxies : false,
    // One line per request, with user and organization (http/observability.ts), instead of Fastify's two.
    logController: new LogController({ disableRequestLogging: true, requestIdLogLabel: 'request_id' }),
    // The caller's X-Request-Id when safe, else a random UUID: unique across nodes (http/request-id.ts).
    genReqId: requestIdOf,
    // Each request's logger (request_id bound) is made when first used.
    childLoggerFactory: (logger, bindings, options) => lazyChildLogger(logger, bindings, options),
    // Bad URLs, over-long path segments and header overflow answer in the error envelope too.
    frameworkErrors,
    clientErrorHandler,
  })
  // JSON.stringify, with pre-serialized top-level fields written as they are (present/raw-json.ts).
  // Fastify's type says string; a Buffer is sent as it is (reply.js checks for either).
  app.setReplySerializer(serializeReply as (payload: unknown) => string)
  installErrorHandling(app)
  installObservability(app, services)
  returnRequestId(app)
  // Past its limits the node refuses new requests at once (503) and finishes what it admitted.
  const admission = new Admission(services.config.admission, () => services.events.releaseHeld())
  admission.install(app)
  services.metrics.watchAdmission(admission)
  refuseRepeatedHost(app)
  app.decorateRequest('roostSessionId', null)
  // Held long-polls are answered (empty) before the server waits for open requests; clients retry elsewhere.
  app.addHook('preClose', async () => services.events.drain())
  // The server has stopped taking requests; those still running (a client
  // that hung up mid-request no longer holds its connection open) finish
  // before what they use is closed.
  const handlers = new RunningHandlers()
  app.addHook('onClose', async () => {
    const running = handlers.count
    if (!(await handlers.settled())) app.log.warn({ running }, 'closing with request handlers still running')
    await services.events.close()
    await services.authCache.close()
    await services.presenceDirectory.close()
    await services.userDataCache.close()
  })
  services.authCache.reportErrorsTo((error) => app.log.warn({ err: error }, 'authentication cache: invalidation listener lost; bypassing the cache until it reconnects'))
  services.userDataCache.reportErrorsTo((error) => app.log.warn({ err: error }, 'user data cache: invalidation listener lost; bypassing the cache until it reconnects'))
  // Browser clients on other origins (CORS_ORIGINS); off when the list is empty.
  if (services.config.corsOrigins.length > 0) {
    await app.register(cors, {
      origin: services.config.corsOrigins,
      methods: ALL_METHODS,
      allowedHeaders: ['Authorization', 'Content-Type', 'X-Requested-With', 'X-Request-Id'],
      exposedHeaders: ['X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset', 'Retry-After', 'X-Request-Id'],
      maxAge: 3600,
    })
  }
  await app.register(formbody)
  const methodsByUrl = new Map<string, Set<HttpMethod>>()
  const addRoutes = (scope: FastifyInstance, list: readonly Route[]) => {
    const add = (r: Route, url: string, via: 'session' | undefined) => {
      scope.route({
        method: r.method,
        url,
        handler: (request, reply) => {
          markRequestRead(request)
          request.roostRoute = url
          return handlers.track(r.handle(services, request, reply, via))
        },
      })
      const methods = methodsByUrl.get(url) ?? new Set<HttpMethod>()
      methods.add(r.method)
      methodsByUrl.set(url, methods)
    }
    for (const r of list) {
      if (r.outsideApi) {
        add(r, r.url, undefined)
      } else {
        add(r, API_PREFIX + r.url, undefined)
        add(r, JSON_PREFIX + r.url, 'session')
      }
    }
  }
  // GET requests carry no body (Fastify reads none), so the GET routes sit
  // outside the multipart scope: @fastify/multipart adds three async hooks to
  // every request of its scope (a promise each), the size check one more.
  addRoutes(app, routes.filter((r) => r.method === 'GET'))
  // The routes that read bodies, in one multipart scope: the API's other
  // methods, then the 405 answers and the pages' forms, in a scope whose hook
  // marks their requests read (the API routes' handler does it itself).
  await app.register(async (bodies) => {
    await registerMultipart(bodies, services)
    addRoutes(bodies, routes.filter((r) => r.method !== 'GET'))
    await bodies.register(async (forms) => {
      markRequestsRead(forms)
      for (const [url, methods] of methodsByUrl) {
        const others = ALL_METHODS.filter((m) => !methods.has(m))
        const allowed = [...methods].sort()
        if (others.length > 0) {
          forms.route({ method: others, url, handler: async () => { throw methodNotAllowed(allowed) } })
        }
      }
      // Server-rendered pages outside /api/v1 (links sent by mail), in a scope of
      // their own with the browser security headers (CSP, frame and sniffing
      // protection); the JSON API is left as it was.
      await forms.register(async (pages) => {
        await pages.register(helmet, { contentSecurityPolicy: { directives: { 'form-action': ["'self'"] } }, referrerPolicy: BROWSER_REFERRER_POLICY })
        registerAccountPages(pages, services)
        registerPages(pages, services)
      })
    })
  })
  // Health, the OpenAPI description and metrics, in a scope whose hook marks their requests read.
  await app.register(async (scope) => {
    markRequestsRead(scope)
    scope.get('/healthz', async () => ({ status: 'ok' }))
    // Readiness: the database answers and the bus can carry events.
    scope.get('/readyz', async (request, reply) => {
      try {
        await services.prisma.$queryRaw`SELECT 1`
        await services.bus.check()
        return { status: 'ready' }
      } catch (error) {
        request.log.warn({ err: error }, 'not ready')
        return reply.code(503).send({ status: 'unavailable' })
      }
    })

    // The OpenAPI 3.1 description of this route table; no authentication.
    let openApi: string | undefined
    scope.get(`${API_PREFIX}/openapi.json`, async (_request, reply) => {
      openApi ??= JSON.stringify(buildOpenApi(routes, API_PREFIX))
      return reply.type('application/json; charset=utf-8').send(openApi)
    })

    registerMetricsRoute(scope, services)
  })
  // The browser app at / and its assets.
  await registerWebApp(app)
  return app
}

/** Multipart bodies (uploads) in `scope`: refused before they are read when they announce more than an upload and its fields. */
async function registerMultipart(scope: FastifyInstance, services: Services): Promise<void> {
  const multipartMax = services.config.maxFileUploadSizeMib * 1024 * 1024 + MAX_REQUEST_BODY_BYTES
  // A callback hook, not an async one: every request of the scope passes here.
  scope.addHook('onRequest', (request, _reply, done) => {
    const length = Number(request.headers['content-length'] ?? 0)
    if (length > multipartMax && (request.headers['content-type'] ?? '').startsWith('multipart/')) return done(requestBodyTooLarge())
    done()
  })
  await scope.register(multipart, {
    attachFieldsToBody: true,
    limits: { fileSize: services.config.maxFileUploadSizeMib * 1024 * 1024, files: 1, fieldSize: MAX_REQUEST_BODY_BYTES, fields: MAX_MULTIPART_FIELDS },
    onFile: async (part) => {
      try {
        ;(part as unknown as { _buf: Buffer })._buf = await part.toBuffer()
      } catch (error) {
        // busboy stops counting at the limit and drops the rest; the client sees upstream's message.
        if ((error as { code?: string }).code === 'FST_REQ_FILE_TOO_LARGE') throw uploadTooLarge(services.config.maxFileUploadSizeMib)
        throw error
      }
    },
  })
}
