// A browser's requests by hand (docs/web-sessions.md): the login page's form
// and cookies, then /json requests with the session cookie, the X-CSRFToken
// header and the realm's Origin, as the web app sends them.
import type { FastifyInstance, LightMyRequestResponse } from 'fastify'
import { parseSetCookie } from 'cookie'
import { encodeParams, type HasHost, type Params } from './client.js'

export interface BrowserSession {
  /** The realm's origin, as the browser sends it in Origin. */
  origin: string
  /** The cookies the browser holds, by name. */
  cookies: Record<string, string>
}

/** The Set-Cookie headers of a response, parsed. */
export function setCookies(res: LightMyRequestResponse): ReturnType<typeof parseSetCookie>[] {
  const raw = res.headers['set-cookie']
  const list = raw === undefined ? [] : Array.isArray(raw) ? raw : [raw]
  return list.map((header) => parseSetCookie(header))
}

export const cookieHeader = (cookies: Record<string, string>): string =>
  Object.entries(cookies)
    .map(([name, value]) => `${name}=${value}`)
    .join('; ')

/** The browser's cookie jar after a response: set cookies replace, Max-Age=0 removes. */
export function applyCookies(cookies: Record<string, string>, res: LightMyRequestResponse): Record<string, string> {
  const next = { ...cookies }
  for (const c of setCookies(res)) {
    if (c.maxAge === 0) delete next[c.name]
    else next[c.name] = c.value ?? ''
  }
  return next
}

/** The realm's origin for a fixture host `rX.localhost` under EXTERNAL_URL http://localhost:9991. */
export const originOf = (fx: HasHost, externalUrl = 'http://localhost:9991'): string => {
  const url = new URL(externalUrl)
  url.hostname = fx.host
  return url.origin
}

/** GET /login: the form's CSRF token and the cookies it set. */
export async function openLoginPage(app: FastifyInstance, fx: HasHost, cookies: Record<string, string> = {}): Promise<{ res: LightMyRequestResponse; token: string; cookies: Record<string, string> }> {
  const res = await app.inject({ method: 'GET', url: '/login', headers: { host: fx.host, ...(Object.keys(cookies).length ? { cookie: cookieHeader(cookies) } : {}) } })
  const token = /name="csrfmiddlewaretoken" value="([^"]+)"/.exec(res.body)?.[1] ?? ''
  return { res, token, cookies: applyCookies(cookies, res) }
}

/** POST /login with the page's form, from the realm's origin. */
export async function submitLogin(
  app: FastifyInstance,
  fx: HasHost,
  form: { username: string; password: string; next?: string; csrfmiddlewaretoken?: string },
  options: { cookies: Record<string, string>; origin?: string | null; externalUrl?: string; ip?: string },
): Promise<LightMyRequestResponse> {
  const origin = options.origin === undefined ? originOf(fx, options.externalUrl) : options.origin
  return app.inject({
    method: 'POST',
    url: '/login',
    remoteAddress: options.ip,
    headers: {
      host: fx.host,
      'content-type': 'application/x-www-form-urlencoded',
      ...(origin !== null ? { origin } : {}),
      ...(Object.keys(options.cookies).length ? { cookie: cookieHeader(options.cookies) } : {}),
    },
    payload: new URLSearchParams(encodeParams(form)).toString(),
  })
}

/** Logs in through the page; fails the caller's expectations (throws) unless it succeeded. */
export async function logIn(app: FastifyInstance, fx: HasHost, email: string, password: string, externalUrl?: string): Promise<BrowserSession> {
  const page = await openLoginPage(app, fx)
  const res = await submitLogin(app, fx, { username: email, password, csrfmiddlewaretoken: page.token }, { cookies: page.cookies, externalUrl })
  if (res.statusCode !== 303) throw new Error(`login failed: ${res.statusCode} ${res.body.slice(0, 300)}`)
  return { origin: originOf(fx, externalUrl), cookies: applyCookies(page.cookies, res) }
}

export interface JsonRequestOptions {
  /** Headers to add or, with value null, leave out (csrf, origin, cookie). */
  headers?: Record<string, string | null>
}

/** A request under /json as the app sends it: cookies, X-CSRFToken from the csrftoken cookie, the realm's Origin. */
export function json(app: FastifyInstance, fx: HasHost, session: BrowserSession, method: 'GET' | 'POST' | 'PATCH' | 'DELETE' | 'PUT', path: string, params: Params = {}, options: JsonRequestOptions = {}): Promise<LightMyRequestResponse> {
  const encoded = encodeParams(params)
  const inQuery = method === 'GET'
  const base: Record<string, string | null> = {
    host: fx.host,
    cookie: cookieHeader(session.cookies),
    ...(method === 'GET' ? {} : { 'x-csrftoken': session.cookies.csrftoken ?? '', origin: session.origin }),
    ...(inQuery ? {} : { 'content-type': 'application/x-www-form-urlencoded' }),
    ...options.headers,
  }
  const headers: Record<string, string> = {}
  for (const [name, value] of Object.entries(base)) if (value !== null) headers[name] = value
  return app.inject({ method, url: `/json${path}`, headers, ...(inQuery ? { query: encoded } : { payload: new URLSearchParams(encoded).toString() }) })
}
