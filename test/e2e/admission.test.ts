// Admission control of the real server process (src/http/admission.ts, docs/operations.md
// "Overload"), driven past ADMISSION_MAX_IN_FLIGHT=4 over TCP as clients would:
// four slow uploads (a POST whose body arrives only when the test sends the
// rest) hold the node's four places; every further request is answered at
// once with 503, the error envelope and Retry-After, while /healthz, /readyz
// and /metrics still answer and roost_admission_refusals_total counts each
// refusal; once the slow requests finish (and are served), the node serves
// again. test/http/admission.test.ts covers the same limits in process.
import t from 'tap'
import { connect, type Socket } from 'node:net'
import { once } from 'node:events'
import { eventually } from '../support/eventually.js'
import { basicAuth, startServer, type RunningServer } from './start-server.js'

t.setTimeout(240_000)

const TOKEN = 'admission-e2e-metrics-token-0123'
const MAX_IN_FLIGHT = 4
const OVERLOADED = { result: 'error', msg: 'The server is overloaded; try again shortly', code: 'SERVER_NOT_READY' }

/** A metric's value in the Prometheus text, or undefined when absent. */
function sample(text: string, line: string): number | undefined {
  const found = text.split('\n').find((l) => l.startsWith(`${line} `))
  return found === undefined ? undefined : Number(found.slice(line.length + 1))
}

/** A message sent as a slow client sends it: the headers and half the body now, the rest when `finish` is called. */
interface SlowRequest {
  /** Sends the rest of the body; resolves with the status line and body of the answer. */
  finish(): Promise<{ status: number; body: string }>
}

async function slowSend(server: RunningServer, n: number): Promise<SlowRequest> {
  const body = new URLSearchParams({ type: 'stream', to: 'general', topic: 'slow uploads', content: `held in flight ${n}` }).toString()
  const half = Math.floor(body.length / 2)
  const { port } = new URL(server.url)
  const socket: Socket = connect(Number(port), '127.0.0.1')
  await once(socket, 'connect')
  let answer = ''
  socket.on('data', (chunk: Buffer) => (answer += chunk.toString()))
  const closed = once(socket, 'close')
  socket.write(
    [
      'POST /api/v1/messages HTTP/1.1',
      `Host: 127.0.0.1:${port}`,
      `Authorization: ${basicAuth(server.email, server.apiKey)}`,
      'Content-Type: application/x-www-form-urlencoded',
      `Content-Length: ${body.length}`,
      'Connection: close',
      '',
      body.slice(0, half),
    ].join('\r\n'),
  )
  return {
    async finish() {
      // The rest of the body; the server answers and closes the connection (Connection: close).
      socket.write(body.slice(half))
      await closed
      const [head = '', ...rest] = answer.split('\r\n\r\n')
      const payload = rest.join('\r\n\r\n')
      // The JSON document, whether the body came whole or in chunks.
      return { status: Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1]), body: payload.slice(payload.indexOf('{'), payload.lastIndexOf('}') + 1) }
    },
  }
}

t.test(`past ADMISSION_MAX_IN_FLIGHT=${MAX_IN_FLIGHT} a server process refuses at once, keeps its probes and metrics answering, and recovers`, async (t) => {
  const server = await startServer({ env: { ADMISSION_MAX_IN_FLIGHT: String(MAX_IN_FLIGHT), ADMISSION_RETRY_AFTER_SECONDS: '2', METRICS_TOKEN: TOKEN } })
  t.teardown(() => server.stop())
  const auth = { authorization: basicAuth(server.email, server.apiKey) }
  const call = (path: string, headers: Record<string, string> = auth) => fetch(`${server.url}${path}`, { headers, signal: AbortSignal.timeout(30_000) })
  const metrics = async () => (await call('/metrics', { authorization: `Bearer ${TOKEN}` })).text()

  t.equal((await call('/api/v1/users/me')).status, 200, 'served before the load')
  const before = await metrics()
  t.equal(sample(before, 'roost_admission_refusals_total{reason="in_flight"}'), 0)

  // Four slow requests take the node's four places.
  const slow = await Promise.all(Array.from({ length: MAX_IN_FLIGHT }, (_, i) => slowSend(server, i)))
  await eventually('the slow requests are in flight', async () => sample(await metrics(), 'roost_http_requests_in_flight') === MAX_IN_FLIGHT, { timeoutMs: 30_000, intervalMs: 50 })

  // Every further request is refused at once, whatever it is.
  const refusedPaths = ['/api/v1/users/me', '/api/v1/messages?anchor=newest&num_before=1&num_after=0', '/api/v1/server_settings', '/api/v1/no-such-route', '/']
  for (const path of refusedPaths) {
    const res = await call(path)
    t.equal(res.status, 503, `${path} is refused`)
    t.equal(res.headers.get('retry-after'), '2', 'with Retry-After')
    t.match(res.headers.get('content-type'), /^application\/json/)
    t.same(await res.json(), OVERLOADED, 'in the error envelope')
  }

  // Probes and scrapes answer all the same, and the refusals are counted.
  t.equal((await call('/healthz', {})).status, 200, '/healthz answers')
  t.equal((await call('/readyz', {})).status, 200, '/readyz answers')
  const during = await metrics()
  t.equal(sample(during, 'roost_admission_refusals_total{reason="in_flight"}'), refusedPaths.length, 'every refusal is counted')
  t.equal(sample(during, 'roost_http_requests_in_flight'), MAX_IN_FLIGHT)

  // What was admitted finishes and is served.
  for (const answer of await Promise.all(slow.map((s) => s.finish()))) {
    t.equal(answer.status, 200)
    t.match(JSON.parse(answer.body), { result: 'success', id: Number })
  }

  // The node recovers: its places are free and a request is served again.
  await eventually('the places are free again', async () => sample(await metrics(), 'roost_http_requests_in_flight') === 0, { timeoutMs: 30_000, intervalMs: 50 })
  const again = await call('/api/v1/messages?anchor=newest&num_before=10&num_after=0&narrow=%5B%7B%22operator%22%3A%22topic%22%2C%22operand%22%3A%22slow%20uploads%22%7D%5D')
  t.equal(again.status, 200, 'served after the load')
  const { messages } = (await again.json()) as { messages: { content: string }[] }
  t.equal(messages.length, MAX_IN_FLIGHT, 'the admitted sends were stored')
  t.equal(sample(await metrics(), 'roost_admission_refusals_total{reason="in_flight"}'), refusedPaths.length, 'no refusal after the load')
  t.equal(await server.stop(), 0, 'stops cleanly')
})
