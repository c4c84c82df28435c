// Admission control (src/http/admission.ts) on one node over real HTTP: past
// its in-flight limit, or with its event loop blocked, the node answers new
// requests at once with 503, the error envelope and Retry-After, finishes the
// requests it admitted, keeps its held long-polls (answering them early only
// while its heap is past its limit), keeps
// /healthz, /readyz and /metrics answering, and serves clients that retry
// after Retry-After once the load is gone.
import t from 'tap'
import { connect } from 'node:net'
import { once } from 'node:events'
import { setTimeout as delay } from 'node:timers/promises'
import { buildApp } from '../../src/app.js'
import { Admission } from '../../src/http/admission.js'
import { servicesOver } from '../../src/node-services.js'
import { memoryBackends } from '../../src/backends/index.js'
import { MemoryEventBus } from '../../src/events/memory-bus.js'
import { allRoutes } from '../../src/http/routes/index.js'
import { route } from '../../src/http/route.js'
import type { AdmissionConfig } from '../../src/config.js'
import { makeFixture, testConfig, testDatabase, type Fixture, type Tap } from '../support/app.js'
import { basicAuth } from '../support/client.js'
import { eventually } from '../support/eventually.js'

const TOKEN = 'metrics-secret-admission-0123'
const OVERLOADED = { result: 'error', msg: 'The server is overloaded; try again shortly', code: 'SERVER_NOT_READY' }

interface Node {
  base: string
  fx: Fixture
  headers: Record<string, string>
  events: { heldPolls: number }
  /** Requests inside the slow route's handler. */
  slowEntered: () => number
  /** Lets every slow request waiting now finish. */
  releaseSlow: () => void
}

/** A node listening on a loopback port, with GET /api/v1/test/slow: a request that waits until the test lets it go. */
/** A promise and the function that settles it. */
function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve = () => {}
  const promise = new Promise<void>((r) => (resolve = r))
  return { promise, resolve }
}

async function startNode(t: Tap, admission: Partial<AdmissionConfig>): Promise<Node> {
  let entered = 0
  let gate = deferred()
  const slow = route({
    method: 'GET',
    url: '/test/slow',
    handler: async () => {
      entered++
      await gate.promise
      return { slow: true }
    },
  })
  const config = testConfig({
    metricsToken: TOKEN,
    admission: { maxInFlight: 0, maxEventLoopDelayMs: 0, maxHeapUsedMib: 0, retryAfterSeconds: 1, sampleIntervalMs: 50, ...admission },
  })
  const bus = new MemoryEventBus()
  const services = servicesOver(config, await testDatabase(), memoryBackends(config, { bus }))
  const app = await buildApp({ services, routes: [...allRoutes, slow] })
  t.teardown(async () => {
    gate.resolve()
    await app.close()
    await bus.close()
  })
  const fx = await makeFixture(services)
  await app.listen({ port: 0, host: '127.0.0.1' })
  const { port } = app.server.address() as { port: number }
  const member = fx.users.member
  return {
    base: `http://127.0.0.1:${port}`,
    fx,
    headers: { authorization: basicAuth(member.deliveryEmail, member.apiKey), host: fx.host },
    events: services.events,
    slowEntered: () => entered,
    releaseSlow: () => {
      gate.resolve()
      gate = deferred()
    },
  }
}


/** A request that must be answered: a stalled answer fails the test instead of hanging it. */
function call(node: Node, path: string, init: RequestInit = {}): Promise<Response> {
  return fetch(`${node.base}${path}`, { ...init, headers: { ...node.headers, ...(init.headers as Record<string, string> | undefined) }, signal: AbortSignal.timeout(20_000) })
}

/** As a client that honours Retry-After: a 503 is sent again after the pause it names, up to `attempts` times. */
async function retrying(node: Node, path: string, attempts = 10): Promise<{ res: Response; refusals: number }> {
  for (let refusals = 0; ; refusals++) {
    const res = await call(node, path)
    if (res.status !== 503 || refusals + 1 >= attempts) return { res, refusals }
    await res.arrayBuffer()
    await delay(Number(res.headers.get('retry-after')) * 1000)
  }
}

function sample(text: string, line: string): number | undefined {
  const found = text.split('\n').find((l) => l.startsWith(`${line} `))
  return found === undefined ? undefined : Number(found.slice(line.length + 1))
}

t.test('past its in-flight limit a node refuses new requests at once and finishes the admitted ones', async (t) => {
  const node = await startNode(t, { maxInFlight: 2 })
  const register = await call(node, '/api/v1/register', { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'event_types=%5B%22message%22%5D' })
  const { queue_id, last_event_id } = (await register.json()) as { queue_id: string; last_event_id: number }

  // A held long-poll does not count: both slow requests are admitted beside it.
  const poll = call(node, `/api/v1/events?queue_id=${encodeURIComponent(queue_id)}&last_event_id=${last_event_id}`)
  await eventually('the long-poll is held', () => node.events.heldPolls === 1)
  const slow = [call(node, '/api/v1/test/slow'), call(node, '/api/v1/test/slow')]
  await eventually('both slow requests are in their handler', () => node.slowEntered() === 2)

  // The third request is refused at once, while the two admitted ones are still running.
  const refused = await call(node, '/api/v1/users/me', { headers: { 'x-request-id': 'over-1' } })
  t.equal(refused.status, 503)
  t.equal(refused.headers.get('retry-after'), '1')
  t.equal(refused.headers.get('x-request-id'), 'over-1')
  t.same(await refused.json(), OVERLOADED)
  const send = await call(node, '/api/v1/messages', { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'type=stream&to=general&topic=t&content=refused' })
  t.equal(send.status, 503)
  t.same(await send.json(), OVERLOADED)
  t.equal(node.slowEntered(), 2, 'the refusals did not wait for the admitted requests')

  // Probes and scrapes still answer.
  t.equal((await call(node, '/healthz')).status, 200)
  t.equal((await call(node, '/readyz')).status, 200)
  const metrics = await (await call(node, '/metrics', { headers: { authorization: `Bearer ${TOKEN}` } })).text()
  t.equal(sample(metrics, 'roost_http_requests_in_flight'), 2)
  t.equal(sample(metrics, 'roost_admission_refusals_total{reason="in_flight"}'), 2)

  // The held poll stays held through the refusals and the samples after them: held, it costs nothing.
  await delay(200)
  t.equal(node.events.heldPolls, 1, 'the held poll is neither dropped nor answered early')

  // What was admitted finishes.
  node.releaseSlow()
  for (const res of await Promise.all(slow)) {
    t.equal(res.status, 200)
    t.match(await res.json(), { result: 'success', slow: true })
  }
  // And a client that retries gets through once the load is gone.
  const { res } = await retrying(node, '/api/v1/users/me')
  t.equal(res.status, 200)
  t.match(await res.json(), { result: 'success', user_id: node.fx.users.member.id })
  // The poll held all along gets the next event.
  const sent = await call(node, '/api/v1/messages', { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'type=stream&to=general&topic=t&content=after' })
  t.equal(sent.status, 200)
  const polled = await poll
  t.equal(polled.status, 200)
  t.match(await polled.json(), { result: 'success', events: [{ type: 'message', message: { content: 'after' } }] })
  const after = await (await call(node, '/metrics', { headers: { authorization: `Bearer ${TOKEN}` } })).text()
  t.equal(sample(after, 'roost_http_requests_in_flight'), 0)
  t.equal(sample(after, 'roost_admission_poll_releases_total'), 0)
})

t.test('long-polls: refused and released only while the heap is past its limit', async (t) => {
  const limits = { maxInFlight: 1, retryAfterSeconds: 1, sampleIntervalMs: 20 }
  // A busy event loop: new long-polls are still admitted and held ones kept, while other requests are refused.
  let released = 0
  const busy = new Admission({ ...limits, maxEventLoopDelayMs: 50, maxHeapUsedMib: 0 }, () => released++)
  t.teardown(() => busy.stop())
  busy.start()
  for (let i = 0; i < 3; i++) {
    block(150)
    busy.sample()
  }
  t.equal(busy.pressure, 'event_loop_delay')
  t.equal(busy.refusal(false), 'event_loop_delay')
  t.equal(busy.refusal(true), null, 'a new long-poll is admitted')
  t.equal(released, 0, 'held polls are kept')
  // A full in-flight count refuses other requests only.
  const full = new Admission({ ...limits, maxEventLoopDelayMs: 0, maxHeapUsedMib: 0 }, () => released++)
  full.inFlight = 1
  full.sample()
  t.equal(full.refusal(false), 'in_flight')
  t.equal(full.refusal(true), null)
  t.equal(released, 0)
  // A heap past its limit (1 MiB: always) refuses long-polls too and answers the held ones.
  const heap = new Admission({ ...limits, maxEventLoopDelayMs: 0, maxHeapUsedMib: 1 }, () => released++)
  heap.sample()
  t.equal(heap.pressure, 'heap_used')
  t.equal(heap.refusal(true), 'heap_used')
  t.equal(heap.refusal(false), 'heap_used')
  t.equal(released, 1, 'the held polls are answered with a heartbeat, giving their memory back')
  t.equal(heap.releases, 1)
})

/** Keeps the event loop busy for `ms` (what a node whose loop cannot keep up looks like). */
function block(ms: number): void {
  const end = performance.now() + ms
  while (performance.now() < end) {
    // busy
  }
}

t.test('a node whose event loop is blocked refuses what arrives meanwhile, then recovers', async (t) => {
  const node = await startNode(t, { maxEventLoopDelayMs: 100 })
  // A raw HTTP/1.1 client: its request is in the socket before the loop blocks, so the node reads it right after.
  const socket = connect(Number(new URL(node.base).port), '127.0.0.1')
  await once(socket, 'connect')
  const chunks: Buffer[] = []
  socket.on('data', (chunk: Buffer) => chunks.push(chunk))
  const ended = once(socket, 'end')
  // Two late samples in a row put the node under pressure (each delay lets the overdue sample run first);
  // a third keeps it there whichever comes first after it, the next sample or the read of the request.
  block(300)
  await delay(1)
  block(300)
  await delay(1)
  socket.write(`GET /api/v1/users/me HTTP/1.1\r\nHost: ${node.headers.host}\r\nAuthorization: ${node.headers.authorization}\r\nConnection: close\r\n\r\n`)
  block(300)
  await ended
  const [head = '', body = ''] = Buffer.concat(chunks).toString('utf8').split('\r\n\r\n')
  t.match(head, /^HTTP\/1\.1 503 /)
  t.match(head, /\r\nretry-after: 1\r\n/i)
  t.same(JSON.parse(body), OVERLOADED)
  t.equal((await call(node, '/healthz')).status, 200, 'liveness answers under pressure')

  const { res } = await retrying(node, '/api/v1/users/me')
  t.equal(res.status, 200, 'a client that retries gets through once the loop is free')
  t.match(await res.json(), { result: 'success' })
})
