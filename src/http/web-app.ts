// The browser app (web/, built by scripts/build.mjs into dist/web): `/` is its
// HTML and `/sw.js` its service worker, never cached, under a Content-Security-Policy that allows no inline
// script; `/assets/*` are its content-hashed files, cached for a year as
// immutable and sent precompressed (.br, .gz) to browsers that accept it.
// The app talks to the API under /json with the session cookie (docs/web-client.md).
import { existsSync, readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import path from 'node:path'
import type { FastifyInstance } from 'fastify'
import fastifyStatic from '@fastify/static'
import helmet from '@fastify/helmet'
import { markRequestsRead } from './error-handler.js'
import { BROWSER_REFERRER_POLICY } from './session-auth.js'

/** dist/web, next to dist/src where this file is compiled to. */
export const WEB_APP_DIR = fileURLToPath(new URL('../../web/', import.meta.url))

/** The page's policy: scripts, styles, fonts and workers from this origin only; no plugins, no framing. */
export const WEB_APP_CSP = {
  defaultSrc: ["'self'"],
  scriptSrc: ["'self'"],
  styleSrc: ["'self'"],
  // Svelte sets style attributes (widths, offsets of the windowed list); no <style> element may be injected.
  styleSrcAttr: ["'unsafe-inline'"],
  imgSrc: ["'self'", 'data:', 'blob:', 'https:'],
  mediaSrc: ["'self'", 'blob:'],
  connectSrc: ["'self'"],
  workerSrc: ["'self'"],
  manifestSrc: ["'self'"],
  objectSrc: ["'none'"],
  baseUri: ["'none'"],
  frameAncestors: ["'none'"],
  formAction: ["'self'"],
  upgradeInsecureRequests: null,
}

export async function registerWebApp(app: FastifyInstance, dir: string = WEB_APP_DIR): Promise<void> {
  const indexFile = path.join(dir, 'index.html')
  if (!existsSync(indexFile)) {
    app.log.warn({ dir }, 'web app not built (npm run build): / is not served')
    return
  }
  const html = readFileSync(indexFile)
  await app.register(async (scope) => {
    markRequestsRead(scope)
    await scope.register(helmet, { contentSecurityPolicy: { useDefaults: false, directives: WEB_APP_CSP }, referrerPolicy: BROWSER_REFERRER_POLICY })
    scope.get('/', async (_request, reply) =>
      reply.header('cache-control', 'no-cache').type('text/html; charset=utf-8').send(html),
    )
    // The service worker (web/src/sw.ts) at the root, so that its scope is the whole app; never cached, so an update is seen at once.
    const workerFile = path.join(dir, 'sw.js')
    if (existsSync(workerFile)) {
      const worker = readFileSync(workerFile)
      scope.get('/sw.js', async (_request, reply) => reply.header('cache-control', 'no-cache').type('text/javascript; charset=utf-8').send(worker))
    }
    await scope.register(fastifyStatic, {
      root: path.join(dir, 'assets'),
      prefix: '/assets/',
      preCompressed: true,
      immutable: true,
      maxAge: '365d',
      index: false,
      list: false,
      decorateReply: false,
    })
  })
}
