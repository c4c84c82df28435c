// Browser sessions on the HTTP side (docs/web-sessions.md): the sessionid and
// csrftoken cookies, the session behind a request, and the CSRF check of
// unsafe requests made with it (the X-CSRFToken header equal to the
// session's token, and an Origin — or, without one, a Referer — of the
// realm's own origin). Upstream's names and answers throughout.
import type { FastifyReply, FastifyRequest } from 'fastify'
import { parseCookie, stringifySetCookie } from 'cookie'
import type { Services } from '../services.js'
import type { Realm, User } from '../db/index.js'
import { csrfFailed } from '../errors.js'
import { cutoffs, endWebSession, hashSessionToken, LAST_SEEN_RESOLUTION_MS, SESSION_TOKEN_PATTERN, touchWebSession, type StartedWebSession } from '../actions/web-sessions.js'
import { findWebSession } from '../queries/web-sessions.js'
import { realmUrl } from '../present/realm.js'
import { sameSecret, subdomainOf } from './auth.js'

export const SESSION_COOKIE = 'sessionid'
export const CSRF_COOKIE = 'csrftoken'
/** The request header that carries the CSRF token (upstream's, Django's default). */
export const CSRF_HEADER = 'x-csrftoken'

export interface SessionAuthenticated {
  realm: Realm
  user: User
  sessionId: number
  csrfToken: string
}

/** The request's cookies (Node bounds the header's size). */
export function requestCookies(request: FastifyRequest): Record<string, string | undefined> {
  const header = request.headers.cookie
  return header ? parseCookie(header) : {}
}

/**
 * The live session the request's sessionid cookie names, on the realm its
 * Host names; null when there is none, it has expired (then it is deleted),
 * or its user or organization is deactivated. One indexed statement; the
 * user and realm rows come from the authentication cache, which every node
 * keeps fresh.
 */
export async function sessionOf(services: Services, request: FastifyRequest): Promise<SessionAuthenticated | null> {
  const token = requestCookies(request)[SESSION_COOKIE]
  if (token === undefined || !SESSION_TOKEN_PATTERN.test(token)) return null
  const row = await findWebSession(services.prisma, hashSessionToken(token))
  if (!row) return null
  const now = services.now()
  const { idleCutoff, ageCutoff } = cutoffs(services, now)
  if (row.lastSeenAt <= idleCutoff || row.createdAt <= ageCutoff) {
    await endWebSession(services.prisma, row.id)
    return null
  }
  const found = await services.authCache.userWithRealmByApiKey(row.apiKey)
  if (!found || found.user.id !== row.userId) return null
  const { user, realm } = found
  if (!user.isActive || realm.deactivated) return null
  if (realm.stringId !== subdomainOf(request.headers.host, services.config.externalUrl)) return null
  if (now.getTime() - row.lastSeenAt.getTime() >= LAST_SEEN_RESOLUTION_MS) await touchWebSession(services.prisma, row.id, now)
  return { realm, user, sessionId: row.id, csrfToken: row.csrfToken }
}

const UNSAFE_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE'])
export const isUnsafeMethod = (method: string): boolean => UNSAFE_METHODS.has(method)

/** scheme://host[:port] of a URL, or undefined when it is not one. */
function originOf(url: string): string | undefined {
  try {
    const parsed = new URL(url)
    return parsed.origin === 'null' ? undefined : parsed.origin
  } catch {
    return undefined
  }
}

/**
 * Throws 403 CSRF_FAILED unless the request comes from the realm's own pages:
 * its Origin (or, when the browser sent none, its Referer) is the realm's
 * origin, and `token` (the X-CSRFToken header, or a form's field) equals the
 * session's. Django's reasons, in Django's order.
 */
/**
 * The Referrer-Policy of every page a browser posts from (the login page, the
 * app): `same-origin`, as upstream's. Under helmet's default `no-referrer` a
 * browser sends `Origin: null` with a same-origin form post or fetch, which
 * checkCsrf rightly refuses.
 */
export const BROWSER_REFERRER_POLICY = { policy: 'same-origin' } as const

export function checkCsrf(services: Services, request: FastifyRequest, realm: Realm, expected: string, token: unknown): void {
  const own = originOf(realmUrl(realm, services.config.externalUrl))
  const origin = request.headers.origin
  if (origin !== undefined) {
    if (origin !== own) throw csrfFailed(`Origin checking failed - ${origin} does not match any trusted origins.`)
  } else {
    const referer = request.headers.referer
    if (referer === undefined) throw csrfFailed('Referer checking failed - no Referer.')
    const from = originOf(referer)
    if (from === undefined) throw csrfFailed('Referer checking failed - Referer is malformed.')
    if (from !== own) throw csrfFailed(`Referer checking failed - ${referer} does not match any trusted origins.`)
  }
  if (typeof token !== 'string' || token === '') throw csrfFailed('CSRF token missing.')
  if (!sameSecret(token, expected)) throw csrfFailed("CSRF token from the 'X-Csrftoken' HTTP header incorrect.")
}

/** The X-CSRFToken header (the last one when repeated). */
export function csrfHeader(request: FastifyRequest): string | undefined {
  const value = request.headers[CSRF_HEADER]
  return Array.isArray(value) ? value[value.length - 1] : value
}

/** Cookies are Secure whenever the server's address is https. */
const secureFor = (services: Services): boolean => services.config.externalUrl.startsWith('https:')

/** Fastify adds each set-cookie to those already set (one header each). */
function setCookie(reply: FastifyReply, header: string): void {
  reply.header('set-cookie', header)
}

/** Both cookies of a new session: sessionid for the server only, csrftoken for the app's script. */
export function setSessionCookies(services: Services, reply: FastifyReply, session: StartedWebSession): void {
  const maxAge = services.config.sessionMaxAgeSeconds
  const secure = secureFor(services)
  setCookie(reply, stringifySetCookie({ name: SESSION_COOKIE, value: session.token, httpOnly: true, sameSite: 'lax', path: '/', secure, maxAge }))
  setCookie(reply, stringifySetCookie({ name: CSRF_COOKIE, value: session.csrfToken, sameSite: 'lax', path: '/', secure, maxAge }))
}

/** A csrftoken cookie for a login form (before any session exists). */
export function setFormCsrfCookie(services: Services, reply: FastifyReply, token: string): void {
  setCookie(reply, stringifySetCookie({ name: CSRF_COOKIE, value: token, sameSite: 'lax', path: '/', secure: secureFor(services), maxAge: services.config.sessionMaxAgeSeconds }))
}

/** Tells the browser to forget the session cookie (logout, an expired session). */
export function clearSessionCookie(services: Services, reply: FastifyReply): void {
  setCookie(reply, stringifySetCookie({ name: SESSION_COOKIE, value: '', httpOnly: true, sameSite: 'lax', path: '/', secure: secureFor(services), maxAge: 0 }))
}
