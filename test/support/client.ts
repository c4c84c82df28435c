// as(app, user).get|post|patch|delete|put(path, params): requests the way a
// client sends them — /api/v1 prefix, Basic auth, the realm's Host, GET
// parameters in the query string and the rest as a urlencoded form, arrays
// and objects JSON-encoded.
import type { FastifyInstance, LightMyRequestResponse } from 'fastify'
import type { User } from '../../src/db/index.js'

export type Params = Record<string, unknown>
type Method = 'GET' | 'POST' | 'PATCH' | 'DELETE' | 'PUT'

export function encodeParams(params: Params): Record<string, string> {
  const out: Record<string, string> = {}
  for (const [key, value] of Object.entries(params)) {
    if (value === undefined) continue
    out[key] = typeof value === 'string' ? value : typeof value === 'object' ? JSON.stringify(value) : String(value)
  }
  return out
}

export interface Caller {
  get(path: string, params?: Params): Promise<LightMyRequestResponse>
  post(path: string, params?: Params): Promise<LightMyRequestResponse>
  patch(path: string, params?: Params): Promise<LightMyRequestResponse>
  delete(path: string, params?: Params): Promise<LightMyRequestResponse>
  put(path: string, params?: Params): Promise<LightMyRequestResponse>
  request(method: Method, path: string, params?: Params, options?: { query?: boolean; headers?: Record<string, string>; outsideApi?: boolean }): Promise<LightMyRequestResponse>
}

export function basicAuth(email: string, apiKey: string): string {
  return `Basic ${Buffer.from(`${email}:${apiKey}`).toString('base64')}`
}

function caller(app: FastifyInstance, headers: Record<string, string>): Caller {
  const request: Caller['request'] = (method, path, params = {}, options = {}) => {
    const url = path.startsWith('/api/') || options.outsideApi ? path : `/api/v1${path}`
    const encoded = encodeParams(params)
    const inQuery = options.query ?? method === 'GET'
    return app.inject({
      method,
      url,
      headers: { ...headers, ...(inQuery ? {} : { 'content-type': 'application/x-www-form-urlencoded' }), ...options.headers },
      ...(inQuery ? { query: encoded } : { payload: new URLSearchParams(encoded).toString() }),
    })
  }
  return {
    request,
    get: (p, params) => request('GET', p, params),
    post: (p, params) => request('POST', p, params),
    patch: (p, params) => request('PATCH', p, params),
    delete: (p, params) => request('DELETE', p, params),
    put: (p, params) => request('PUT', p, params),
  }
}

export interface HasHost {
  host: string
}

/** Requests authenticated as `user`, sent to the realm's host. */
export function as(app: FastifyInstance, user: Pick<User, 'deliveryEmail' | 'apiKey'>, fx?: HasHost): Caller {
  return caller(app, { authorization: basicAuth(user.deliveryEmail, user.apiKey), ...(fx ? { host: fx.host } : hostFor(user)) })
}

/** Unauthenticated requests to the realm's host. */
export function anon(app: FastifyInstance, fx: HasHost): Caller {
  return caller(app, { host: fx.host })
}

// Fixture users live in realm `rXXXX` with emails `x@rXXXX.example.com`: the host follows from the email.
function hostFor(user: Pick<User, 'deliveryEmail'>): Record<string, string> {
  const domain = user.deliveryEmail.split('@')[1] ?? ''
  const sub = domain.endsWith('.example.com') ? domain.slice(0, -'.example.com'.length) : ''
  return sub ? { host: `${sub}.localhost` } : {}
}
