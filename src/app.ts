// buildApp(): plugins, the route table under /api/v1, 405s and the error handler.
import Fastify, { type FastifyInstance, type FastifyServerOptions } from 'fastify'
import formbody from '@fastify/formbody'
import multipart from '@fastify/multipart'
import type { Services } from './actions/context.js'
import { methodNotAllowed, uploadTooLarge } from './errors.js'
import { installErrorHandling } from './http/error-handler.js'
import { allRoutes } from './http/routes/index.js'
import { registerPages } from './http/pages/index.js'
import { registerAccountPages } from './http/routes/settings.js'
import type { HttpMethod, Route } from './http/route.js'

export const API_PREFIX = '/api/v1'

export interface BuildAppOptions {
  services: Services
  routes?: Route[]
  logger?: FastifyServerOptions['logger']
}

const ALL_METHODS: HttpMethod[] = ['GET', 'POST', 'PATCH', 'DELETE', 'PUT']

export async function buildApp({ services, routes = allRoutes, logger = false }: BuildAppOptions): Promise<FastifyInstance> {
  const app = Fastify({
    logger,
    bodyLimit: (services.config.maxFileUploadSizeMib + 1) * 1024 * 1024,
    routerOptions: { ignoreTrailingSlash: true },
    forceCloseConnections: 'idle',
  })
  installErrorHandling(app)
  // Held long-polls are answered (empty) before the server waits for open requests; clients retry elsewhere.
  app.addHook('preClose', async () => services.events.drain())
  app.addHook('onClose', async () => services.events.close())
  app.addHook('onClose', async () => services.authCache.close())
  services.authCache.reportErrorsTo((error) => app.log.warn({ err: error }, 'authentication cache: invalidation listener lost; bypassing the cache until it reconnects'))
  await app.register(formbody)
  await app.register(multipart, {
    attachFieldsToBody: true,
    limits: { fileSize: services.config.maxFileUploadSizeMib * 1024 * 1024, files: 1 },
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

  app.get('/healthz', async () => ({ status: 'ok' }))
  // Readiness: the database answers and the bus can carry events.
  app.get('/readyz', async (request, reply) => {
    try {
      await services.prisma.$queryRaw`SELECT 1`
      await services.bus.check()
      return { status: 'ready' }
    } catch (error) {
      request.log.warn({ err: error }, 'not ready')
      return reply.code(503).send({ status: 'unavailable' })
    }
  })

  const methodsByUrl = new Map<string, Set<HttpMethod>>()
  for (const r of routes) {
    const url = (r.outsideApi ? '' : API_PREFIX) + r.url
    app.route({ method: r.method, url, handler: (req, reply) => r.handle(services, req, reply) })
    const methods = methodsByUrl.get(url) ?? new Set<HttpMethod>()
    methods.add(r.method)
    methodsByUrl.set(url, methods)
  }
  for (const [url, methods] of methodsByUrl) {
    const others = ALL_METHODS.filter((m) => !methods.has(m))
    const allowed = [...methods].sort()
    if (others.length > 0) {
      app.route({ method: others, url, handler: async () => { throw methodNotAllowed(allowed) } })
    }
  }
  // Server-rendered pages outside /api/v1 (links sent by mail).
  registerAccountPages(app, services)
  registerPages(app, services)
  return app
}
