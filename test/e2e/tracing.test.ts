// OpenTelemetry tracing of the real server process on PostgreSQL and Redis,
// switched on by the standard variables and exporting over OTLP/HTTP (JSON)
// to a receiver this test runs: a request carrying a W3C traceparent yields
// spans of that trace from the HTTP server, Fastify, pg and ioredis, the
// server's and Fastify's spans carrying the request's ID.
import t from 'tap'
import { spawn } from 'node:child_process'
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import { once } from 'node:events'
import { randomBytes, randomUUID } from 'node:crypto'
import { ROOT } from '../support/root.js'
import { SERVER_NODE_OPTIONS } from '../../src/node-options.js'
import { SERVER_ENTRY, basicAuth, freePort } from './start-server.js'
import { throwawayDatabase } from '../support/throwaway-db.js'
import { TEST_REDIS_URL } from '../support/config.js'
import { eventually } from '../support/eventually.js'
import { REQUEST_ID_ATTRIBUTE, tracingEnabled } from '../../src/tracing.js'

interface ExportedSpan {
  scope: string
  name: string
  traceId: string
  kind: number
  /** String attributes by key. */
  attributes: Record<string, string>
}

interface OtlpAttribute {
  key: string
  value: { stringValue?: string }
}

/** An OTLP/HTTP trace receiver (JSON encoding): keeps every span it is sent. */
async function startReceiver(t: Tap): Promise<{ url: string; spans: ExportedSpan[]; requests: { path: string; contentType: string }[] }> {
  const spans: ExportedSpan[] = []
  const requests: { path: string; contentType: string }[] = []
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      requests.push({ path: req.url ?? '', contentType: req.headers['content-type'] ?? '' })
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
        resourceSpans?: { scopeSpans: { scope: { name: string }; spans: { name: string; traceId: string; kind: number; attributes?: OtlpAttribute[] }[] }[] }[]
      }
      for (const rs of body.resourceSpans ?? []) {
        for (const ss of rs.scopeSpans) {
          for (const s of ss.spans) {
            const attributes = Object.fromEntries((s.attributes ?? []).filter((a) => a.value.stringValue !== undefined).map((a) => [a.key, a.value.stringValue as string]))
            spans.push({ scope: ss.scope.name, name: s.name, traceId: s.traceId, kind: s.kind, attributes })
          }
        }
      }
      res.writeHead(200, { 'content-type': 'application/json' })
      res.end('{}')
    })
  })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())))
  const { port } = server.address() as { port: number }
  return { url: `http://127.0.0.1:${port}`, spans, requests }
}

interface Tap {
  teardown(fn: () => unknown): void
}

t.test('the OTEL_* variables switch tracing on; it is off by default', async (t) => {
  t.equal(tracingEnabled({}), false, 'nothing set')
  t.equal(tracingEnabled({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' }), true)
  t.equal(tracingEnabled({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://collector:4318/v1/traces' }), true)
  t.equal(tracingEnabled({ OTEL_TRACES_EXPORTER: 'otlp' }), true)
  t.equal(tracingEnabled({ OTEL_TRACES_EXPORTER: 'console' }), true)
  t.equal(tracingEnabled({ OTEL_TRACES_EXPORTER: 'none', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' }), false, 'exporter none wins')
  t.equal(tracingEnabled({ OTEL_SDK_DISABLED: 'true', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' }), false, 'the SDK disabled')
  t.equal(tracingEnabled({ OTEL_SDK_DISABLED: 'false', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' }), true)
  t.equal(tracingEnabled({ OTEL_EXPORTER_OTLP_ENDPOINT: '  ' }), false, 'a blank endpoint')
})

t.test('a request is traced through the HTTP server, Fastify, pg and ioredis, under the caller\'s trace', async (t) => {
  const receiver = await startReceiver(t)
  const databaseUrl = await throwawayDatabase(t)
  const port = await freePort()
  const password = `owner-${randomUUID()}`
  const env: Record<string, string | undefined> = {
    ...process.env,
    PORT: String(port),
    HOST: '127.0.0.1',
    DATABASE_URL: databaseUrl,
    REDIS_URL: TEST_REDIS_URL,
    REDIS_PREFIX: `test-${randomUUID()}`,
    EXTERNAL_URL: `http://127.0.0.1:${port}`,
    BOOTSTRAP_REALM_NAME: 'Traced',
    BOOTSTRAP_OWNER_EMAIL: 'owner@example.com',
    BOOTSTRAP_OWNER_PASSWORD: password,
    OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
    OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
    OTEL_BSP_SCHEDULE_DELAY: '100',
    OTEL_SERVICE_NAME: 'roost-tracing-test',
  }
  delete env.DATA_DIR
  const child = spawn(process.execPath, [...SERVER_NODE_OPTIONS, SERVER_ENTRY], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] })
  let out = ''
  child.stdout.on('data', (c: Buffer) => (out += c.toString()))
  child.stderr.on('data', (c: Buffer) => (out += c.toString()))
  const exited = once(child, 'exit')
  t.teardown(async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
    await exited
  })
  await eventually('the server serves', () => /^roost: serving /m.test(out), { timeoutMs: 120_000, intervalMs: 100, giveUp: () => (child.exitCode !== null ? `exited with ${child.exitCode}` : undefined), detail: () => out })

  const base = `http://127.0.0.1:${port}`
  const login = await fetch(`${base}/api/v1/fetch_api_key`, { method: 'POST', body: new URLSearchParams({ username: 'owner@example.com', password }) })
  const { api_key: apiKey } = (await login.json()) as { api_key: string }
  const traceId = randomBytes(16).toString('hex')
  const me = await fetch(`${base}/api/v1/users/me`, {
    headers: { authorization: basicAuth('owner@example.com', apiKey), traceparent: `00-${traceId}-${randomBytes(8).toString('hex')}-01`, 'x-request-id': 'lb-7f3a-traced' },
  })
  t.equal(me.status, 200)
  t.equal(me.headers.get('x-request-id'), 'lb-7f3a-traced')
  t.equal(((await me.json()) as { email: string }).email, 'owner@example.com')
  t.equal((await fetch(`${base}/healthz`)).status, 200)

  const scopesOf = () => new Set(receiver.spans.filter((s) => s.traceId === traceId).map((s) => s.scope))
  const wanted = ['@opentelemetry/instrumentation-http', '@fastify/otel', '@opentelemetry/instrumentation-pg', '@opentelemetry/instrumentation-ioredis']
  await eventually('spans of the request from every instrumentation', () => wanted.every((scope) => scopesOf().has(scope)), { timeoutMs: 30_000, intervalMs: 100, detail: () => JSON.stringify([...scopesOf()]) })
  const ofTrace = receiver.spans.filter((s) => s.traceId === traceId)
  // SERVER = 2 in OTLP's SpanKind.
  t.ok(ofTrace.some((s) => s.scope === '@opentelemetry/instrumentation-http' && s.kind === 2 && s.name === 'GET /api/v1/users/me'), 'the HTTP server span names the route')
  t.ok(ofTrace.some((s) => s.scope === '@fastify/otel' && s.name === 'request'), 'Fastify\'s request span')
  t.ok(ofTrace.some((s) => s.scope === '@opentelemetry/instrumentation-pg' && s.name.startsWith('pg.query')), 'a PostgreSQL statement')
  t.ok(ofTrace.some((s) => s.scope === '@opentelemetry/instrumentation-ioredis'), 'a Redis command (the rate limiter)')
  // The request's ID (here the caller's X-Request-Id) on the server span and Fastify's, as in the request's log lines.
  const idOf = (scope: string) => ofTrace.find((s) => s.scope === scope && (s.kind === 2 || s.name === 'request'))?.attributes[REQUEST_ID_ATTRIBUTE]
  t.equal(REQUEST_ID_ATTRIBUTE, 'roost.request_id')
  t.equal(idOf('@opentelemetry/instrumentation-http'), 'lb-7f3a-traced', 'the HTTP server span carries the request ID')
  t.equal(idOf('@fastify/otel'), 'lb-7f3a-traced', "Fastify's request span carries it")
  t.notOk(ofTrace.some((s) => s.scope === '@opentelemetry/instrumentation-pg' && REQUEST_ID_ATTRIBUTE in s.attributes), 'statement spans inherit it from their trace, not as an attribute')

  // Without an X-Request-Id the server names the request; the span has the ID the response returned.
  const unnamed = await fetch(`${base}/api/v1/users/me`, { headers: { authorization: basicAuth('owner@example.com', apiKey) } })
  t.equal(unnamed.status, 200)
  const givenId = unnamed.headers.get('x-request-id') ?? ''
  t.match(givenId, /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/)
  const withId = (await eventually('the server span of the unnamed request', () => receiver.spans.find((s) => s.scope === '@opentelemetry/instrumentation-http' && s.kind === 2 && s.attributes[REQUEST_ID_ATTRIBUTE] === givenId), { timeoutMs: 30_000, intervalMs: 100 })) as ExportedSpan
  t.equal(withId.name, 'GET /api/v1/users/me')
  t.ok(receiver.spans.some((s) => s.traceId === withId.traceId && s.scope === '@fastify/otel' && s.attributes[REQUEST_ID_ATTRIBUTE] === givenId), "and Fastify's span of the same trace")
  t.ok(receiver.requests.every((r) => r.path === '/v1/traces' && r.contentType.startsWith('application/json')), 'OTLP/HTTP JSON to /v1/traces')
  t.notOk(receiver.spans.some((s) => s.scope === '@opentelemetry/instrumentation-http' && /healthz/.test(s.name)), 'probes are not traced')

  child.kill('SIGTERM')
  const [code] = await exited
  t.equal(code, 0, 'stops cleanly, spans flushed')
})
