// The one way Roost sends an HTTP request to another server (push services,
// the push bouncer, and any later sender). Every request:
// * goes to a destination checkDestination accepted (public address and
//   default port, or an OUTBOUND_ALLOW entry; never credentials in the URL);
// * connects to the address that was checked — the socket is opened to that
//   IP, while the Host header, TLS server name (SNI) and certificate check
//   use the URL's host name — so the name cannot be re-resolved elsewhere;
// * is bounded: resolving and connecting within OUTBOUND_CONNECT_TIMEOUT_MS,
//   the whole exchange within OUTBOUND_TIMEOUT_MS, and a response body of at
//   most OUTBOUND_MAX_RESPONSE_BYTES (the request fails past any of them);
// * follows no redirect (a 3xx is the answer).
// HTTP/1.1 through request(); HTTP/2 (APNs) through http2Request(), one
// session per request.
import { request as httpRequest, type IncomingHttpHeaders, type IncomingMessage } from 'node:http'
import { request as httpsRequest } from 'node:https'
import { connect as http2Connect, constants as h2, type ClientHttp2Stream } from 'node:http2'
import { isIP } from 'node:net'
import { connect as tlsConnect, rootCertificates } from 'node:tls'
import type { Config } from '../config.js'
import type { AllowEntry } from './allow-list.js'
import { checkDestination, OutboundRefused, type Destination } from './destination.js'

export const OUTBOUND_CONNECT_TIMEOUT_MS = 5_000
export const OUTBOUND_TIMEOUT_MS = 15_000
export const OUTBOUND_MAX_RESPONSE_BYTES = 256 * 1024

export interface OutboundOptions {
  /** OUTBOUND_ALLOW. */
  allow: readonly AllowEntry[]
  /** PEM certificates trusted besides the system's CAs (tests' self-signed peers). */
  ca?: readonly string[]
  connectTimeoutMs?: number
  timeoutMs?: number
  maxResponseBytes?: number
}

export interface OutboundRequest {
  method?: string
  headers?: Record<string, string>
  body?: string | Buffer
}

export interface OutboundResponse {
  status: number
  headers: Record<string, string | string[] | undefined>
  body: string
}

/** The response was too large or too slow: the request failed (not sent again by this module). */
export class OutboundFailed extends Error {
  override name = 'OutboundFailed'
}

/** Header names in lower case, so that the ones this module sets replace the caller's whatever their spelling. */
const lowerCased = (headers: Record<string, string> = {}): Record<string, string> => Object.fromEntries(Object.entries(headers).map(([name, value]) => [name.toLowerCase(), value]))

/** The TLS server name: the host name, none for an address (SNI carries names only). */
const serverName = (dest: Destination): string | undefined => (isIP(dest.name) === 0 ? dest.name : undefined)

/** Collects a response body up to `limit` bytes; past it `fail` is called. */
function collect(source: IncomingMessage | ClientHttp2Stream, limit: number, fail: (error: Error) => void, done: (body: string) => void): void {
  const chunks: Buffer[] = []
  let size = 0
  source.on('data', (chunk: Buffer) => {
    size += chunk.length
    if (size > limit) return fail(new OutboundFailed(`the response is larger than ${limit} bytes`))
    chunks.push(chunk)
  })
  source.on('end', () => done(Buffer.concat(chunks).toString('utf8')))
  source.on('error', fail)
}

interface Exchange {
  /** Settles the request once: the answer, or an error (after which the connection is torn down). */
  finish(error: Error | undefined, answer?: OutboundResponse): void
  /** The connection is up: the connect timeout no longer applies. */
  connected(): void
}

/** The timeouts of one request and its single settlement. */
function exchange(
  host: string,
  limits: { startedAt: number; connectTimeoutMs: number; timeoutMs: number },
  settle: { resolve: (answer: OutboundResponse) => void; reject: (error: Error) => void; teardown: (failed: boolean) => void },
): Exchange {
  let settled = false
  const finish = (error: Error | undefined, answer?: OutboundResponse) => {
    if (settled) return
    settled = true
    clearTimeout(total)
    clearTimeout(connect)
    settle.teardown(error !== undefined)
    if (error) settle.reject(error)
    else settle.resolve(answer!)
  }
  const total = setTimeout(() => finish(new OutboundFailed(`${host}: no answer in ${limits.timeoutMs} ms`)), Math.max(0, limits.timeoutMs - (Date.now() - limits.startedAt)))
  const connect = setTimeout(() => finish(new OutboundFailed(`${host}: no connection in ${limits.connectTimeoutMs} ms`)), limits.connectTimeoutMs)
  return { finish, connected: () => clearTimeout(connect) }
}

export class OutboundClient {
  private readonly connectTimeoutMs: number
  private readonly timeoutMs: number
  private readonly maxResponseBytes: number
  private readonly ca: string[] | undefined

  constructor(private readonly options: OutboundOptions) {
    this.connectTimeoutMs = options.connectTimeoutMs ?? OUTBOUND_CONNECT_TIMEOUT_MS
    this.timeoutMs = options.timeoutMs ?? OUTBOUND_TIMEOUT_MS
    this.maxResponseBytes = options.maxResponseBytes ?? OUTBOUND_MAX_RESPONSE_BYTES
    this.ca = options.ca && options.ca.length > 0 ? [...rootCertificates, ...options.ca] : undefined
  }

  /** Resolves and checks a URL (OutboundRefused, OutboundUnresolved); nothing is sent. */
  check(url: string): Promise<Destination> {
    return checkDestination(url, this.options.allow, this.connectTimeoutMs)
  }

  /** One HTTP/1.1 request; the answer whatever its status. */
  async request(url: string, init: OutboundRequest = {}): Promise<OutboundResponse> {
    const started = Date.now()
    const dest = await this.check(url)
    const body = init.body ?? ''
    const limits = { startedAt: started, connectTimeoutMs: this.connectTimeoutMs, timeoutMs: this.timeoutMs }
    return new Promise<OutboundResponse>((resolve, reject) => {
      const { finish, connected } = exchange(dest.url.host, limits, { resolve, reject, teardown: (failed) => failed && req.destroy() })
      const options = {
        host: dest.address,
        family: dest.family,
        port: dest.port,
        path: `${dest.url.pathname}${dest.url.search}`,
        method: init.method ?? 'POST',
        headers: { ...lowerCased(init.headers), host: dest.url.host, 'content-length': String(Buffer.byteLength(body)) },
        agent: false as const,
      }
      const onResponse = (res: IncomingMessage) => {
        const declared = Number(res.headers['content-length'] ?? 0)
        if (declared > this.maxResponseBytes) return finish(new OutboundFailed(`the response is larger than ${this.maxResponseBytes} bytes`))
        collect(res, this.maxResponseBytes, finish, (text) => finish(undefined, { status: res.statusCode ?? 0, headers: res.headers, body: text }))
      }
      const servername = serverName(dest)
      const req =
        dest.url.protocol === 'https:'
          ? httpsRequest({ ...options, ...(servername ? { servername } : {}), ...(this.ca ? { ca: this.ca } : {}) }, onResponse)
          : httpRequest(options, onResponse)
      req.on('socket', (socket) => socket.once('connect', connected))
      req.on('error', (error) => finish(error))
      req.end(body)
    })
  }

  /** One HTTP/2 request over TLS (a session of its own, closed after the answer). */
  async http2Request(url: string, init: OutboundRequest = {}): Promise<OutboundResponse> {
    const started = Date.now()
    const dest = await this.check(url)
    if (dest.url.protocol !== 'https:') throw new OutboundRefused('HTTP/2 requests are sent over https: only')
    const servername = serverName(dest)
    const limits = { startedAt: started, connectTimeoutMs: this.connectTimeoutMs, timeoutMs: this.timeoutMs }
    return new Promise<OutboundResponse>((resolve, reject) => {
      const session = http2Connect(dest.url.origin, {
        createConnection: () =>
          tlsConnect({ host: dest.address, port: dest.port, ALPNProtocols: ['h2'], ...(servername ? { servername } : {}), ...(this.ca ? { ca: this.ca } : {}) }),
      })
      const { finish, connected } = exchange(dest.url.host, limits, { resolve, reject, teardown: (failed) => (failed ? session.destroy() : session.close()) })
      session.once('connect', connected)
      session.on('error', (error) => finish(error))
      const req = session.request({ [h2.HTTP2_HEADER_METHOD]: init.method ?? 'POST', [h2.HTTP2_HEADER_PATH]: `${dest.url.pathname}${dest.url.search}`, ...lowerCased(init.headers) })
      let status = 0
      let headers: IncomingHttpHeaders = {}
      req.on('response', (h) => {
        status = Number(h[h2.HTTP2_HEADER_STATUS])
        headers = h
        if (Number(h['content-length'] ?? 0) > this.maxResponseBytes) finish(new OutboundFailed(`the response is larger than ${this.maxResponseBytes} bytes`))
      })
      collect(req, this.maxResponseBytes, finish, (text) => finish(undefined, { status, headers, body: text }))
      req.end(init.body ?? '')
    })
  }
}

/** The client for a configuration (OUTBOUND_ALLOW); `ca`: certificates trusted besides the system's (tests). */
export function outboundClientFor(config: Pick<Config, 'outboundAllow'>, ca?: readonly string[]): OutboundClient {
  return new OutboundClient({ allow: config.outboundAllow, ...(ca ? { ca } : {}) })
}
