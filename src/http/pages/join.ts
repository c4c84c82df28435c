// The registration pages an invitation link opens: GET /join/{key} shows a
// small form (full name and password; an email address too for a reusable
// link), POST /join/{key} creates the account. Expired, revoked, used and
// unknown links get a page that says so. A created account is logged in
// (a browser session, docs/web-sessions.md) and sent to the app at `/`.
// Plain HTML, no script, so it works in any browser; served outside /api/v1
// on the realm's host.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { Services } from '../../services.js'
import type { Realm } from '../../db/index.js'
import { acceptInvitation, RegistrationError, registrationStateMessage } from '../../actions/accept-invitation.js'
import { lookUpInviteKey, type InviteLookup } from '../../queries/invites.js'
import { startWebSession } from '../../actions/web-sessions.js'
import { setSessionCookies } from '../session-auth.js'
import { realmForRequest } from '../auth.js'
import { escapeHtml } from '../../domain/html-escape.js'
import { page } from './html.js'

interface JoinForm {
  full_name?: unknown
  password?: unknown
  email?: unknown
}

const STATUS_FOR_STATE: Record<Exclude<InviteLookup['state'], 'valid'>, number> = { invalid: 404, expired: 410, revoked: 410, used: 410 }

const TITLES: Record<Exclude<InviteLookup['state'], 'valid'>, string> = {
  invalid: 'Invitation link not valid',
  expired: 'Invitation expired',
  revoked: 'Invitation revoked',
  used: 'Invitation already used',
}

function problemPage(reply: FastifyReply, state: Exclude<InviteLookup['state'], 'valid'>): FastifyReply {
  return reply
    .code(STATUS_FOR_STATE[state])
    .type('text/html; charset=utf-8')
    .send(page(TITLES[state], `<p class="problem" id="problem">${escapeHtml(registrationStateMessage(state))}</p>`))
}

function formPage(realm: Realm, key: string, link: Extract<InviteLookup, { state: 'valid' }>, values: { fullName?: string; email?: string }, error?: string): string {
  const emailField =
    link.kind === 'email'
      ? `<p>You were invited as <strong id="invited-email">${escapeHtml(link.invitation.email)}</strong>.</p>`
      : `<label for="email">Email address</label><input id="email" name="email" type="email" required autocomplete="email" value="${escapeHtml(values.email ?? '')}">`
  const body = `
<p>Create your account in <strong>${escapeHtml(realm.name)}</strong>.</p>
${error ? `<p class="error" id="error" role="alert">${escapeHtml(error)}</p>` : ''}
<form method="post" action="/join/${escapeHtml(key)}">
  ${emailField}
  <label for="full_name">Full name</label>
  <input id="full_name" name="full_name" required maxlength="100" autocomplete="name" value="${escapeHtml(values.fullName ?? '')}">
  <label for="password">Password</label>
  <input id="password" name="password" type="password" required minlength="6" autocomplete="new-password">
  <button type="submit" id="submit">Create account</button>
</form>`
  return page(`Join ${realm.name}`, body)
}

async function realmOr404(services: Services, request: FastifyRequest, reply: FastifyReply): Promise<Realm | null> {
  const realm = await realmForRequest(services, request)
  if (!realm || realm.deactivated) {
    await problemPage(reply, 'invalid')
    return null
  }
  return realm
}

const text = (v: unknown): string => (typeof v === 'string' ? v : '')

export function registerJoinPages(app: FastifyInstance, services: Services): void {
  app.get<{ Params: { key: string } }>('/join/:key', async (request, reply) => {
    const realm = await realmOr404(services, request, reply)
    if (!realm) return reply
    const link = await lookUpInviteKey(services.prisma, realm.id, request.params.key, services.now())
    if (link.state !== 'valid') return problemPage(reply, link.state)
    return reply.type('text/html; charset=utf-8').send(formPage(realm, request.params.key, link, {}))
  })

  app.post<{ Params: { key: string }; Body: JoinForm }>('/join/:key', async (request, reply) => {
    const realm = await realmOr404(services, request, reply)
    if (!realm) return reply
    const form = (request.body ?? {}) as JoinForm
    const values = { fullName: text(form.full_name), email: text(form.email) }
    try {
      const user = await acceptInvitation({ ...services, realm, log: request.log }, { key: request.params.key, fullName: values.fullName, password: text(form.password), email: values.email })
      // The new account is logged in and goes straight into the app.
      setSessionCookies(services, reply, await startWebSession(services, user.id))
      return reply.code(303).header('location', '/').header('cache-control', 'no-store').send()
    } catch (error) {
      if (!(error instanceof RegistrationError)) throw error
      if (error.state !== 'form') return problemPage(reply, error.state === 'valid' ? 'invalid' : error.state)
      const link = await lookUpInviteKey(services.prisma, realm.id, request.params.key, services.now())
      if (link.state !== 'valid') return problemPage(reply, link.state)
      return reply.code(400).type('text/html; charset=utf-8').send(formPage(realm, request.params.key, link, values, error.message))
    }
  })
}
