// GET /, /sw.js and /assets/*: the browser app's HTML (no-cache, strict CSP),
// its service worker (no-cache) and its hashed files (immutable, precompressed).
import t, { type Test } from 'tap'
import Fastify from 'fastify'
import { mkdirSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { brotliCompressSync, gzipSync } from 'node:zlib'
import { registerWebApp } from '../../src/http/web-app.js'

const SCRIPT = 'console.log("roost")\n'.repeat(50)

async function appOver(t: Test) {
  const dir = t.testdir({})
  mkdirSync(path.join(dir, 'assets'))
  writeFileSync(path.join(dir, 'index.html'), '<!doctype html><script type="module" src="/assets/app-abc123.js"></script>')
  writeFileSync(path.join(dir, 'assets/app-abc123.js'), SCRIPT)
  writeFileSync(path.join(dir, 'sw.js'), 'self.addEventListener("push", () => {})\n')
  writeFileSync(path.join(dir, 'assets/app-abc123.js.gz'), gzipSync(SCRIPT))
  writeFileSync(path.join(dir, 'assets/app-abc123.js.br'), brotliCompressSync(SCRIPT))
  const app = Fastify()
  await registerWebApp(app, dir)
  t.teardown(() => app.close())
  return app
}

t.test('GET / is the app page, revalidated every time, under a CSP with no inline script', async (t) => {
  const app = await appOver(t)
  const res = await app.inject({ method: 'GET', url: '/' })
  t.equal(res.statusCode, 200)
  t.match(res.headers['content-type'], /^text\/html/)
  t.equal(res.headers['cache-control'], 'no-cache')
  t.match(res.body, /app-abc123\.js/)
  const csp = String(res.headers['content-security-policy'])
  const scriptSrc = csp.split(';').map((d) => d.trim()).find((d) => d.startsWith('script-src '))
  t.equal(scriptSrc, "script-src 'self'")
  t.match(csp, /default-src 'self'/)
  t.match(csp, /object-src 'none'/)
  t.match(csp, /frame-ancestors 'none'/)
  t.notMatch(csp, /unsafe-eval/)
})

t.test('GET /sw.js is the service worker at the root (its scope the whole app), revalidated every time', async (t) => {
  const app = await appOver(t)
  const res = await app.inject({ method: 'GET', url: '/sw.js' })
  t.equal(res.statusCode, 200)
  t.match(res.headers['content-type'], /^text\/javascript/)
  t.equal(res.headers['cache-control'], 'no-cache')
  t.equal(res.body, 'self.addEventListener("push", () => {})\n')
})

t.test('hashed assets are immutable and sent precompressed to browsers that accept it', async (t) => {
  const app = await appOver(t)
  const br = await app.inject({ method: 'GET', url: '/assets/app-abc123.js', headers: { 'accept-encoding': 'br, gzip' } })
  t.equal(br.statusCode, 200)
  t.equal(br.headers['content-encoding'], 'br')
  t.match(br.headers['cache-control'], /immutable/)
  t.match(br.headers['cache-control'], /max-age=31536000/)
  t.equal(br.rawPayload.length, brotliCompressSync(SCRIPT).length)
  const gz = await app.inject({ method: 'GET', url: '/assets/app-abc123.js', headers: { 'accept-encoding': 'gzip' } })
  t.equal(gz.headers['content-encoding'], 'gzip')
  const plain = await app.inject({ method: 'GET', url: '/assets/app-abc123.js' })
  t.equal(plain.headers['content-encoding'], undefined)
  t.equal(plain.body, SCRIPT)
})

t.test('an unknown asset is a 404 and the directory is not listed', async (t) => {
  const app = await appOver(t)
  t.equal((await app.inject({ method: 'GET', url: '/assets/nope.js' })).statusCode, 404)
  const listing = await app.inject({ method: 'GET', url: '/assets/' })
  t.ok(listing.statusCode === 403 || listing.statusCode === 404, `status ${listing.statusCode}`)
  t.notMatch(listing.body, /app-abc123/)
})
