// Authentication of the API routes served under /json (docs/web-sessions.md):
// the browser session cookie instead of HTTP Basic, as upstream does; an
// Authorization header is not looked at. Unsafe methods pass the CSRF check
// first: against the session's token, or, on a route that needs no login and
// a request without a session, against the csrftoken cookie. The file routes
// outside the API (uploads, avatars) take the session too, for GETs without
// an Authorization header.
import type { FastifyRequest } from 'fastify'
import type { Services } from '../services.js'
import type { Realm, User } from '../db/index.js'
import { sessionRequired } from '../errors.js'
import { realmForRequest, requireRealm, type AuthMode } from './auth.js'
import { checkCsrf, CSRF_COOKIE, csrfHeader, isUnsafeMethod, requestCookies, sessionOf, SESSION_COOKIE } from './session-auth.js'

declare module 'fastify' {
  interface FastifyRequest {
    /** The browser session a /json request was made with (a password change keeps it). */
    roostSessionId: number | null
  }
}

/**
 * Whether a browser's session authenticates a request to a file route outside
 * the API (uploaded files, avatars): a GET that sends the session cookie and
 * no Authorization header, on a route that takes a login.
 */
export function sessionServes(request: FastifyRequest, auth: AuthMode): boolean {
  if (request.method !== 'GET' || request.headers.authorization !== undefined || (auth !== 'user' && auth !== 'optional')) return false
  const cookie = request.headers.cookie
  return cookie !== undefined && cookie.includes(`${SESSION_COOKIE}=`) && requestCookies(request)[SESSION_COOKIE] !== undefined
}

export async function authenticateJson(services: Services, request: FastifyRequest, auth: AuthMode): Promise<{ realm: Realm | null; user: User | undefined }> {
  const session = auth === 'public' ? null : await sessionOf(services, request)
  const unsafe = isUnsafeMethod(request.method)
  if (session) {
    if (unsafe) checkCsrf(services, request, session.realm, session.csrfToken, csrfHeader(request))
    request.roostSessionId = session.sessionId
    return { realm: session.realm, user: session.user }
  }
  if (auth === 'user') throw sessionRequired()
  const realm = auth === 'public' ? await realmForRequest(services, request) : await requireRealm(services, request)
  if (unsafe && realm) checkCsrf(services, request, realm, requestCookies(request)[CSRF_COOKIE] ?? '', csrfHeader(request))
  return { realm, user: undefined }
}
