// The login page and logout (docs/web-sessions.md). GET /login shows the
// form with a CSRF token (also set as the csrftoken cookie); POST /login
// checks the token against the cookie and the request's origin, then the
// email and password exactly as POST /fetch_api_key does (same throttling,
// per account and per client address), starts a session and sends the
// browser to the app (or a same-origin `next` path). A failure shows the form
// again with a message that is the same whether or not the account exists.
// POST /accounts/logout (form or fetch, CSRF-checked) ends the session.
import { randomBytes } from 'node:crypto'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { Services } from '../../services.js'
import type { Realm } from '../../db/index.js'
import { accessUserByPassword } from '../../access/user.js'
import { endWebSession, SESSION_TOKEN_PATTERN, startWebSession } from '../../actions/web-sessions.js'
import { ApiError, methodNotAllowed } from '../../errors.js'
import { realmForRequest } from '../auth.js'
import { checkCsrf, clearSessionCookie, CSRF_COOKIE, csrfHeader, requestCookies, sessionOf, setFormCsrfCookie, setSessionCookies } from '../session-auth.js'
import { escapeHtml } from '../../domain/html-escape.js'
import { page } from './html.js'

/** The form field that carries the CSRF token (upstream's, Django's). */
export const CSRF_FIELD = 'csrfmiddlewaretoken'
/** Longer `next` values are ignored (the app's own paths are short). */
const MAX_NEXT_LENGTH = 2000
/** Longer passwords are refused unchecked (no account has one: the API's limit is far below). */
const MAX_PASSWORD_LENGTH = 1000

interface LoginForm {
  username?: unknown
  password?: unknown
  next?: unknown
  [CSRF_FIELD]?: unknown
}

const text = (v: unknown): string => (typeof v === 'string' ? v : '')

/**
 * Where to go after logging in: a path on this site (`/…`, not `//host` or
 * `/\host`, no control characters), else the app at `/`.
 */
export function safeNextPath(next: unknown): string {
  if (typeof next !== 'string' || next.length === 0 || next.length > MAX_NEXT_LENGTH) return '/'
  if (!next.startsWith('/') || next.startsWith('//') || next.startsWith('/\\')) return '/'
  // eslint-disable-next-line no-control-regex
  if (/[\x00-\x1f\x7f]/.test(next)) return '/'
  return next
}

function loginPage(realm: Realm, csrfToken: string, values: { email?: string; next?: string }, error?: string): string {
  const next = values.next && values.next !== '/' ? `<input type="hidden" name="next" value="${escapeHtml(values.next)}">` : ''
  const body = `
<p>Log in to <strong>${escapeHtml(realm.name)}</strong>.</p>
${error ? `<p class="error" id="error" role="alert">${escapeHtml(error)}</p>` : ''}
<form method="post" action="/login" id="login-form">
  <input type="hidden" name="${CSRF_FIELD}" value="${escapeHtml(csrfToken)}">
  ${next}
  <label for="username">Email address</label>
  <input id="username" name="username" type="email" required autocomplete="username" autofocus value="${escapeHtml(values.email ?? '')}">
  <label for="password">Password</label>
  <input id="password" name="password" type="password" required autocomplete="current-password">
  <button type="submit" id="submit">Log in</button>
</form>`
  return page('Log in', body)
}

function noRealmPage(reply: FastifyReply): FastifyReply {
  return reply
    .code(404)
    .type('text/html; charset=utf-8')
    .send(page('Organization not found', '<p class="problem" id="problem">There is no active organization at this address.</p>'))
}

/** The page's CSRF token: the browser's csrftoken cookie when it holds a well-formed one, else a new one (set as the cookie). */
function formToken(services: Services, request: FastifyRequest, reply: FastifyReply): string {
  const current = requestCookies(request)[CSRF_COOKIE]
  if (current !== undefined && SESSION_TOKEN_PATTERN.test(current)) return current
  const token = randomBytes(32).toString('base64url')
  setFormCsrfCookie(services, reply, token)
  return token
}

/** What the login page says for a refused login: never whether the account exists. */
function loginFailure(error: ApiError): { status: number; message: string } {
  switch (error.code) {
    case 'RATE_LIMIT_HIT': {
      const seconds = Number(error.extra['retry-after'] ?? 0)
      const minutes = Math.max(1, Math.ceil(seconds / 60))
      return { status: 429, message: `Too many failed attempts to log in. Try again in ${minutes} minute${minutes === 1 ? '' : 's'}.` }
    }
    case 'PASSWORD_AUTH_DISABLED':
      return { status: 401, message: 'This organization does not allow logging in with a password.' }
    case 'USER_DEACTIVATED':
      return { status: 401, message: 'This account has been deactivated.' }
    case 'REALM_DEACTIVATED':
      return { status: 401, message: 'This organization has been deactivated.' }
    default:
      return { status: 401, message: 'Wrong email address or password. Check both and try again.' }
  }
}

async function activeRealm(services: Services, request: FastifyRequest): Promise<Realm | null> {
  const realm = await realmForRequest(services, request)
  return realm && !realm.deactivated ? realm : null
}

export function registerLoginPages(app: FastifyInstance, services: Services): void {
  app.get<{ Querystring: { next?: unknown } }>('/login', async (request, reply) => {
    const realm = await activeRealm(services, request)
    if (!realm) return noRealmPage(reply)
    const next = safeNextPath(request.query.next)
    if (await sessionOf(services, request)) return reply.code(303).header('location', next).send()
    reply.header('cache-control', 'no-store')
    return reply.type('text/html; charset=utf-8').send(loginPage(realm, formToken(services, request, reply), { next }))
  })

  app.post<{ Body: LoginForm }>('/login', async (request, reply) => {
    const realm = await activeRealm(services, request)
    if (!realm) return noRealmPage(reply)
    const form = (request.body ?? {}) as LoginForm
    const email = text(form.username)
    const next = safeNextPath(form.next)
    const again = (status: number, message: string) =>
      reply.code(status).header('cache-control', 'no-store').type('text/html; charset=utf-8').send(loginPage(realm, formToken(services, request, reply), { email, next }, message))
    try {
      checkCsrf(services, request, realm, requestCookies(request)[CSRF_COOKIE] ?? '', form[CSRF_FIELD])
    } catch (error) {
      if (!(error instanceof ApiError)) throw error
      return again(403, 'This login form has expired. Please try again.')
    }
    const password = text(form.password)
    try {
      if (password.length > MAX_PASSWORD_LENGTH) throw new ApiError('password too long', 'AUTHENTICATION_FAILED', 401)
      const user = await accessUserByPassword({ ...services, realm }, email, password, request.ip)
      const session = await startWebSession(services, user.id)
      setSessionCookies(services, reply, session)
      return reply.code(303).header('location', next).header('cache-control', 'no-store').send()
    } catch (error) {
      if (!(error instanceof ApiError)) throw error
      const failure = loginFailure(error)
      if (error.code === 'RATE_LIMIT_HIT') reply.header('retry-after', String(Math.ceil(Number(error.extra['retry-after'] ?? 0))))
      return again(failure.status, failure.message)
    }
  })

  // Logging out changes state: POST only, with the session's CSRF token (X-CSRFToken or the form field).
  app.post<{ Body: LoginForm }>('/accounts/logout', async (request, reply) => {
    const session = await sessionOf(services, request)
    if (session) {
      const form = (request.body ?? {}) as LoginForm
      checkCsrf(services, request, session.realm, session.csrfToken, csrfHeader(request) ?? form[CSRF_FIELD])
      await endWebSession(services.prisma, session.sessionId)
    }
    clearSessionCookie(services, reply)
    return reply.code(303).header('location', '/login').header('cache-control', 'no-store').send()
  })
  app.get('/accounts/logout', async () => {
    throw methodNotAllowed(['POST'])
  })
}
