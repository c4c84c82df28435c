// The authorization matrix as data: for each route of the route table
// ("METHOD /url" exactly as declared), rows of (target, request, roles
// allowed, answer to the others). matrix.ts runs every row as each
// of ROLES, each time with a fresh caller of that role, and adds the rows that
// follow from the route's auth mode (no credentials, deactivated caller,
// another organization's credentials).
//
// Targets: `own` (the caller's own object), `other` (another user's),
// `private` (a private channel the caller has not joined, or something in it),
// `foreign` (an object of another organization), `none` (the route has no
// object). Expectations are upstream's (zerver/views/*, zerver/lib/*
// access_* helpers, decorators such as require_realm_admin,
// require_member_or_admin, human_users_only), at Roost's feature level.
//
// Adding a route: add its key with at least one row; the test fails until then.
import type { FastifyInstance } from 'fastify'
import type { Services } from '../../src/services.js'
import type { User } from '../../src/db/index.js'
import type { Route } from '../../src/http/route.js'
import type { Fixture } from '../support/app.js'
import { as, type Params } from '../support/client.js'
import { bodyOf } from '../support/expect.js'

export type Role = 'owner' | 'admin' | 'moderator' | 'member' | 'guest' | 'bot'
export const ROLES: readonly Role[] = ['owner', 'admin', 'moderator', 'member', 'guest', 'bot']
export type Target = 'own' | 'other' | 'private' | 'foreign' | 'none'

export interface Expect {
  status: number
  code: string
  msg?: string
}

export interface World {
  app: FastifyInstance
  services: Services
  /** The route's organization: owner, admin, moderator, member, otherMember, guest, bot; general, design, secret. */
  fx: Fixture
  /** Another organization. */
  foreign: Fixture
  /** The caller (fresh for each case). */
  actor: User
  role: Role | 'none' | 'deactivated'
}

export interface RequestSpec {
  path: string
  params?: Params
  /** Send the parameters in the query string even for a non-GET method. */
  query?: boolean
}

export interface Row {
  target: Target
  request: (w: World) => RequestSpec | Promise<RequestSpec>
  allow: readonly Role[]
  /** The answer to every role not allowed (default: 400 BAD_REQUEST). */
  deny?: Expect
  /** Answers that differ by role. */
  denyFor?: Partial<Record<Role, Expect>>
  /** The request changes its caller (e.g. deactivates it): each role gets a fresh caller for this row. */
  freshActor?: boolean
  /** For routes that need no credentials: the answer without any. */
  anonymous?: Expect | 'allow'
}

export const routeKey = (r: Pick<Route, 'method' | 'url'>): string => `${r.method} ${r.url}`

const ALL: Role[] = ['owner', 'admin', 'moderator', 'member', 'guest', 'bot']
const HUMANS: Role[] = ['owner', 'admin', 'moderator', 'member', 'guest']
const NON_GUESTS: Role[] = ['owner', 'admin', 'moderator', 'member', 'bot']
const MEMBERS_UP: Role[] = ['owner', 'admin', 'moderator', 'member']
const MODERATORS_UP: Role[] = ['owner', 'admin', 'moderator']
const ADMINS: Role[] = ['owner', 'admin']
const NOBODY: Role[] = []
const OWNERS: Role[] = ['owner']

const bad = (msg?: string): Expect => ({ status: 400, code: 'BAD_REQUEST', ...(msg !== undefined ? { msg } : {}) })
const MUST_BE_ADMIN: Expect = { status: 400, code: 'UNAUTHORIZED_PRINCIPAL', msg: 'Must be an organization administrator' }
const INSUFFICIENT = bad('Insufficient permission')
/** Upstream's CannotAdministerChannelError (level 325): a channel the caller may read but does not administer. */
const CANNOT_ADMINISTER = bad('You do not have permission to administer this channel.')
const NO_SUCH_USER = bad('No such user')
const INVALID_MESSAGE = bad('Invalid message(s)')
const INVALID_CHANNEL_ID = bad('Invalid channel ID')
const NOT_FOR_GUESTS = bad('Not allowed for guest users')
const NOT_FOR_BOTS = bad('This endpoint does not accept bot requests.')
/** Upstream's require_member_or_admin. */
const MEMBERS_OR_ADMINS_ONLY: Partial<Record<Role, Expect>> = { guest: NOT_FOR_GUESTS, bot: NOT_FOR_BOTS }
/** Upstream's require_realm_admin before an object of another organization is looked up. */
const adminFirst = (notFound: Expect): Partial<Record<Role, Expect>> => ({ owner: notFound, admin: notFound })

// Objects made through the API, as a client would make them.

async function ok(res: { statusCode: number; body: string }): Promise<Record<string, any>> {
  const body = bodyOf(res as never)
  if (res.statusCode !== 200) throw new Error(`setup request failed: ${res.statusCode} ${res.body}`)
  return body
}

async function sendToChannel(w: World, sender: User, channel: string, fx: Fixture = w.fx): Promise<number> {
  const body = await ok(await as(w.app, sender, fx).post('/messages', { type: 'stream', to: channel, topic: 'matrix', content: 'matrix message' }))
  return body.id as number
}

const ownMessage = (w: World) => sendToChannel(w, w.actor, 'general')
const othersMessage = (w: World) => sendToChannel(w, w.fx.users.otherMember, 'general')
const privateMessage = (w: World) => sendToChannel(w, w.fx.users.member, 'secret')
const foreignMessage = (w: World) => sendToChannel(w, w.foreign.users.member, 'general', w.foreign)

async function draftOf(w: World, user: User): Promise<number> {
  const body = await ok(await as(w.app, user, w.fx).post('/drafts', { drafts: [{ type: '', to: [], topic: '', content: 'draft', timestamp: 1 }] }))
  return (body.ids as number[])[0] as number
}

async function snippetOf(w: World, user: User): Promise<number> {
  const body = await ok(await as(w.app, user, w.fx).post('/saved_snippets', { title: 'matrix', content: 'snippet' }))
  return body.saved_snippet_id as number
}

async function scheduledOf(w: World, user: User, fx: Fixture = w.fx): Promise<number> {
  const body = await ok(
    await as(w.app, user, fx).post('/scheduled_messages', {
      type: 'stream',
      to: fx.streams.general.id,
      topic: 'later',
      content: 'later',
      scheduled_delivery_timestamp: Math.floor(Date.now() / 1000) + 86_400,
    }),
  )
  return body.scheduled_message_id as number
}

async function inviteOf(w: World, user: User, fx: Fixture = w.fx): Promise<number> {
  const email = `invitee${Math.random().toString(36).slice(2, 10)}@example.org`
  await ok(await as(w.app, user, fx).post('/invites', { invitee_emails: email, stream_ids: [] }))
  const list = await ok(await as(w.app, user, fx).get('/invites'))
  const found = (list.invites as { id: number; email: string }[]).find((i) => i.email === email)
  if (!found) throw new Error('invite not listed')
  return found.id
}

async function multiuseOf(w: World, user: User, fx: Fixture = w.fx): Promise<number> {
  const body = await ok(await as(w.app, user, fx).post('/invites/multiuse', {}))
  const list = await ok(await as(w.app, user, fx).get('/invites'))
  const found = (list.invites as { id: number; link_url?: string; is_multiuse: boolean }[]).find((i) => i.is_multiuse && i.link_url === body.invite_link)
  if (!found) throw new Error('multiuse invite not listed')
  return found.id
}

async function profileFieldOf(w: World, fx: Fixture = w.fx): Promise<number> {
  const body = await ok(await as(w.app, fx.users.owner, fx).post('/realm/profile_fields', { name: `Field ${Math.random().toString(36).slice(2, 8)}`, field_type: 1 }))
  return body.id as number
}

async function groupOf(w: World, creator: User, fx: Fixture = w.fx): Promise<number> {
  const body = await ok(
    await as(w.app, creator, fx).post('/user_groups/create', { name: `group ${Math.random().toString(36).slice(2, 8)}`, description: 'matrix', members: [creator.id] }),
  )
  return body.group_id as number
}

async function uploadOf(w: World, user: User, fx: Fixture = w.fx): Promise<string> {
  const boundary = 'matrixboundary'
  const payload = `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="a.txt"\r\nContent-Type: text/plain\r\n\r\nhello\r\n--${boundary}--\r\n`
  const res = await w.app.inject({
    method: 'POST',
    url: '/api/v1/user_uploads',
    headers: {
      authorization: `Basic ${Buffer.from(`${user.deliveryEmail}:${user.apiKey}`).toString('base64')}`,
      host: fx.host,
      'content-type': `multipart/form-data; boundary=${boundary}`,
    },
    payload,
  })
  const body = await ok(res)
  return body.url as string
}

async function botOf(w: World, owner: User): Promise<User> {
  return w.fx.newUser({ isBot: true, botOwnerId: owner.id, fullName: 'Owned bot' })
}

const queueOf = async (w: World, user: User, fx: Fixture = w.fx): Promise<string> =>
  (await ok(await as(w.app, user, fx).post('/register', { event_types: ['message'] }))).queue_id as string

const fresh = () => Math.random().toString(36).slice(2, 10)

async function channelOf(w: World, name = `tmp-${fresh()}`): Promise<number> {
  await ok(await as(w.app, w.fx.users.owner, w.fx).post('/users/me/subscriptions', { subscriptions: [{ name }] }))
  return (await ok(await as(w.app, w.fx.users.owner, w.fx).get('/get_stream_id', { stream: name }))).stream_id as number
}

async function linkifierOf(w: World, fx: Fixture = w.fx): Promise<number> {
  const body = await ok(await as(w.app, fx.users.owner, fx).post('/realm/filters', { pattern: `#(?P<id>[0-9]+)${fresh().replace(/[0-9]/g, '')}`, url_template: 'https://example.com/{id}' }))
  return body.id as number
}

export const MATRIX: Record<string, Row[]> = {
  // --- server, authentication ---
  'GET /server_settings': [{ target: 'none', request: () => ({ path: '/server_settings' }), allow: ALL, anonymous: 'allow' }],
  'POST /fetch_api_key': [
    {
      // Every caller may ask; a wrong password is refused whoever sends it.
      target: 'own',
      request: (w) => ({ path: '/fetch_api_key', params: { username: w.fx.users.owner.deliveryEmail, password: 'not the password' } }),
      allow: NOBODY,
      deny: { status: 401, code: 'AUTHENTICATION_FAILED' },
      anonymous: { status: 401, code: 'AUTHENTICATION_FAILED' },
    },
    {
      target: 'foreign',
      request: (w) => ({ path: '/fetch_api_key', params: { username: w.foreign.users.owner.deliveryEmail, password: 'owner-password-1' } }),
      allow: NOBODY,
      deny: { status: 401, code: 'AUTHENTICATION_FAILED' },
      anonymous: { status: 401, code: 'AUTHENTICATION_FAILED' },
    },
  ],

  // --- users ---
  'GET /users': [{ target: 'none', request: () => ({ path: '/users' }), allow: ALL }],
  'GET /users/me': [{ target: 'own', request: () => ({ path: '/users/me' }), allow: ALL }],
  'GET /users/:user_id': [
    { target: 'other', request: (w) => ({ path: `/users/${w.fx.users.otherMember.id}` }), allow: ALL },
    { target: 'foreign', request: (w) => ({ path: `/users/${w.foreign.users.member.id}` }), allow: NOBODY, deny: NO_SUCH_USER },
  ],
  'POST /users': [
    {
      // Upstream: only users with the server-level can_create_users permission; Roost: administrators.
      target: 'none',
      request: () => ({ path: '/users', params: { email: `new${fresh()}@example.org`, password: 'a long password 1', full_name: 'New Person' } }),
      allow: ADMINS,
      deny: MUST_BE_ADMIN,
    },
  ],
  'PATCH /users/:user_id': [
    // Upstream's update_user_backend: access_user_by_id(for_admin=True), no decorator.
    { target: 'other', request: async (w) => ({ path: `/users/${(await w.fx.newUser()).id}`, params: { full_name: 'Renamed' } }), allow: ADMINS, deny: INSUFFICIENT },
    { target: 'foreign', request: (w) => ({ path: `/users/${w.foreign.users.member.id}`, params: { full_name: 'Renamed' } }), allow: NOBODY, deny: NO_SUCH_USER },
  ],
  'DELETE /users/:user_id': [
    { target: 'other', request: async (w) => ({ path: `/users/${(await w.fx.newUser()).id}` }), allow: ADMINS, deny: INSUFFICIENT },
    { target: 'foreign', request: (w) => ({ path: `/users/${w.foreign.users.otherMember.id}` }), allow: NOBODY, deny: NO_SUCH_USER },
  ],
  'POST /users/:user_id/reactivate': [
    {
      target: 'other',
      request: async (w) => {
        const gone = await w.fx.newUser()
        await ok(await as(w.app, w.fx.users.owner, w.fx).delete(`/users/${gone.id}`))
        return { path: `/users/${gone.id}/reactivate` }
      },
      allow: ADMINS,
      deny: MUST_BE_ADMIN,
    },
    { target: 'foreign', request: (w) => ({ path: `/users/${w.foreign.users.otherMember.id}/reactivate` }), allow: NOBODY, deny: MUST_BE_ADMIN, denyFor: adminFirst(NO_SUCH_USER) },
  ],
  'DELETE /users/me': [{ target: 'own', request: () => ({ path: '/users/me' }), allow: ALL, freshActor: true }],
  'POST /users/me/avatar': [
    // A request without a file: permitted callers get the missing-file error, not a permission error.
    { target: 'own', request: () => ({ path: '/users/me/avatar' }), allow: NOBODY, deny: bad('You must upload exactly one avatar.') },
  ],
  'DELETE /users/me/avatar': [{ target: 'own', request: () => ({ path: '/users/me/avatar' }), allow: ALL }],
  'PATCH /bots/:bot_id': [
    { target: 'own', request: async (w) => ({ path: `/bots/${(await botOf(w, w.actor)).id}`, params: { full_name: 'Renamed bot' } }), allow: HUMANS.concat('bot') },
    { target: 'other', request: async (w) => ({ path: `/bots/${(await botOf(w, w.fx.users.otherMember)).id}`, params: { full_name: 'Renamed bot' } }), allow: ADMINS, deny: INSUFFICIENT },
    { target: 'foreign', request: (w) => ({ path: `/bots/${w.foreign.users.bot.id}`, params: { full_name: 'Renamed bot' } }), allow: NOBODY, deny: bad('No such bot') },
  ],
  'GET /user_avatars/:realm_id/:file': [
    {
      target: 'none',
      request: (w) => ({ path: `/user_avatars/${w.fx.realm.id}/missing.png` }),
      allow: NOBODY,
      deny: { status: 404, code: 'NOT_FOUND' },
      anonymous: { status: 404, code: 'NOT_FOUND' },
    },
  ],

  // --- settings, status, presence, alert words, profile data ---
  'PATCH /settings': [{ target: 'own', request: () => ({ path: '/settings', params: { enter_sends: true } }), allow: HUMANS, denyFor: { bot: NOT_FOR_BOTS } }],
  'PATCH /settings/display': [{ target: 'own', request: () => ({ path: '/settings/display', params: { dense_mode: false } }), allow: HUMANS, denyFor: { bot: NOT_FOR_BOTS } }],
  'PATCH /settings/notifications': [{ target: 'own', request: () => ({ path: '/settings/notifications', params: { enable_sounds: false } }), allow: HUMANS, denyFor: { bot: NOT_FOR_BOTS } }],
  'POST /users/me/status': [{ target: 'own', request: () => ({ path: '/users/me/status', params: { status_text: 'matrix' } }), allow: HUMANS, denyFor: { bot: NOT_FOR_BOTS } }],
  'GET /users/:user_id/status': [
    { target: 'other', request: (w) => ({ path: `/users/${w.fx.users.otherMember.id}/status` }), allow: ALL },
    { target: 'foreign', request: (w) => ({ path: `/users/${w.foreign.users.member.id}/status` }), allow: NOBODY, deny: NO_SUCH_USER },
  ],
  'POST /users/me/presence': [{ target: 'own', request: () => ({ path: '/users/me/presence', params: { status: 'active' } }), allow: HUMANS, denyFor: { bot: NOT_FOR_BOTS } }],
  'GET /realm/presence': [{ target: 'none', request: () => ({ path: '/realm/presence' }), allow: ALL }],
  'GET /users/:user_id/presence': [
    {
      target: 'other',
      request: async (w) => {
        await ok(await as(w.app, w.fx.users.otherMember, w.fx).post('/users/me/presence', { status: 'active' }))
        return { path: `/users/${w.fx.users.otherMember.id}/presence` }
      },
      allow: ALL,
    },
    { target: 'foreign', request: (w) => ({ path: `/users/${w.foreign.users.member.id}/presence` }), allow: NOBODY, deny: NO_SUCH_USER },
  ],
  'GET /users/me/alert_words': [{ target: 'own', request: () => ({ path: '/users/me/alert_words' }), allow: ALL }],
  'POST /users/me/alert_words': [{ target: 'own', request: () => ({ path: '/users/me/alert_words', params: { alert_words: ['matrix'] } }), allow: ALL }],
  'DELETE /users/me/alert_words': [{ target: 'own', request: () => ({ path: '/users/me/alert_words', params: { alert_words: ['matrix'] } }), allow: ALL }],
  'GET /realm/profile_fields': [{ target: 'none', request: () => ({ path: '/realm/profile_fields' }), allow: ALL }],
  'POST /realm/profile_fields': [
    { target: 'none', request: () => ({ path: '/realm/profile_fields', params: { name: `Field ${fresh()}`, field_type: 1 } }), allow: ADMINS, deny: MUST_BE_ADMIN },
  ],
  'PATCH /realm/profile_fields': [
    {
      target: 'none',
      request: async (w) => {
        const ids = (await ok(await as(w.app, w.fx.users.owner, w.fx).get('/realm/profile_fields'))).custom_fields.map((f: { id: number }) => f.id)
        return { path: '/realm/profile_fields', params: { order: ids } }
      },
      allow: ADMINS,
      deny: MUST_BE_ADMIN,
    },
  ],
  'PATCH /realm/profile_fields/:field_id': [
    { target: 'none', request: async (w) => ({ path: `/realm/profile_fields/${await profileFieldOf(w)}`, params: { name: `Renamed ${fresh()}` } }), allow: ADMINS, deny: MUST_BE_ADMIN },
    {
      target: 'foreign',
      request: async (w) => {
        const id = await profileFieldOf(w, w.foreign)
        return { path: `/realm/profile_fields/${id}`, params: { name: `Renamed ${fresh()}` } }
      },
      allow: NOBODY,
      deny: MUST_BE_ADMIN,
      denyFor: { owner: bad(), admin: bad() },
    },
  ],
  'DELETE /realm/profile_fields/:field_id': [
    { target: 'none', request: async (w) => ({ path: `/realm/profile_fields/${await profileFieldOf(w)}` }), allow: ADMINS, deny: MUST_BE_ADMIN },
    {
      target: 'foreign',
      request: async (w) => ({ path: `/realm/profile_fields/${await profileFieldOf(w, w.foreign)}` }),
      allow: NOBODY,
      deny: MUST_BE_ADMIN,
      denyFor: { owner: bad(), admin: bad() },
    },
  ],
  'PATCH /users/me/profile_data': [
    { target: 'own', request: async (w) => ({ path: '/users/me/profile_data', params: { data: [{ id: await profileFieldOf(w), value: 'matrix' }] } }), allow: ALL },
    {
      target: 'foreign',
      request: async (w) => ({ path: '/users/me/profile_data', params: { data: [{ id: await profileFieldOf(w, w.foreign), value: 'matrix' }] } }),
      allow: NOBODY,
    },
  ],
  'DELETE /users/me/profile_data': [
    { target: 'own', request: async (w) => ({ path: '/users/me/profile_data', params: { data: [await profileFieldOf(w)] } }), allow: ALL },
    { target: 'foreign', request: async (w) => ({ path: '/users/me/profile_data', params: { data: [await profileFieldOf(w, w.foreign)] } }), allow: NOBODY },
  ],

  // --- drafts, scheduled messages ---
  'GET /drafts': [{ target: 'own', request: () => ({ path: '/drafts' }), allow: ALL }],
  'POST /drafts': [{ target: 'own', request: () => ({ path: '/drafts', params: { drafts: [{ type: '', to: [], topic: '', content: 'x', timestamp: 1 }] } }), allow: ALL }],
  'PATCH /drafts/:draft_id': [
    { target: 'own', request: async (w) => ({ path: `/drafts/${await draftOf(w, w.actor)}`, params: { draft: { type: '', to: [], topic: '', content: 'y', timestamp: 2 } } }), allow: ALL },
    {
      target: 'other',
      request: async (w) => ({ path: `/drafts/${await draftOf(w, w.fx.users.otherMember)}`, params: { draft: { type: '', to: [], topic: '', content: 'y', timestamp: 2 } } }),
      allow: NOBODY,
      deny: { status: 404, code: 'BAD_REQUEST', msg: 'Draft does not exist' },
    },
  ],
  'DELETE /drafts/:draft_id': [
    { target: 'own', request: async (w) => ({ path: `/drafts/${await draftOf(w, w.actor)}` }), allow: ALL },
    { target: 'other', request: async (w) => ({ path: `/drafts/${await draftOf(w, w.fx.users.otherMember)}` }), allow: NOBODY, deny: { status: 404, code: 'BAD_REQUEST', msg: 'Draft does not exist' } },
  ],
  'GET /saved_snippets': [{ target: 'own', request: () => ({ path: '/saved_snippets' }), allow: ALL }],
  'POST /saved_snippets': [{ target: 'own', request: () => ({ path: '/saved_snippets', params: { title: 't', content: 'c' } }), allow: ALL }],
  'PATCH /saved_snippets/:saved_snippet_id': [
    { target: 'own', request: async (w) => ({ path: `/saved_snippets/${await snippetOf(w, w.actor)}`, params: { content: 'changed' } }), allow: ALL },
    {
      target: 'other',
      request: async (w) => ({ path: `/saved_snippets/${await snippetOf(w, w.fx.users.otherMember)}`, params: { content: 'changed' } }),
      allow: NOBODY,
      deny: { status: 404, code: 'BAD_REQUEST', msg: 'Saved snippet does not exist.' },
    },
  ],
  'DELETE /saved_snippets/:saved_snippet_id': [
    { target: 'own', request: async (w) => ({ path: `/saved_snippets/${await snippetOf(w, w.actor)}` }), allow: ALL },
    {
      target: 'other',
      request: async (w) => ({ path: `/saved_snippets/${await snippetOf(w, w.fx.users.otherMember)}` }),
      allow: NOBODY,
      deny: { status: 404, code: 'BAD_REQUEST', msg: 'Saved snippet does not exist.' },
    },
  ],
  'GET /scheduled_messages': [{ target: 'own', request: () => ({ path: '/scheduled_messages' }), allow: ALL }],
  'POST /scheduled_messages': [
    {
      target: 'none',
      request: (w) => ({
        path: '/scheduled_messages',
        params: { type: 'stream', to: w.fx.streams.general.id, topic: 'later', content: 'later', scheduled_delivery_timestamp: Math.floor(Date.now() / 1000) + 86_400 },
      }),
      allow: ALL,
    },
    {
      target: 'private',
      request: (w) => ({
        path: '/scheduled_messages',
        params: { type: 'stream', to: w.fx.streams.secret.id, topic: 'later', content: 'later', scheduled_delivery_timestamp: Math.floor(Date.now() / 1000) + 86_400 },
      }),
      // As for POST /messages: the matrix bot's owner is in `secret`.
      allow: ['bot'],
    },
  ],
  'PATCH /scheduled_messages/:scheduled_message_id': [
    { target: 'own', request: async (w) => ({ path: `/scheduled_messages/${await scheduledOf(w, w.actor)}`, params: { content: 'changed' } }), allow: ALL },
    {
      target: 'other',
      request: async (w) => ({ path: `/scheduled_messages/${await scheduledOf(w, w.fx.users.otherMember)}`, params: { content: 'changed' } }),
      allow: NOBODY,
      deny: { status: 404, code: 'BAD_REQUEST', msg: 'Scheduled message does not exist' },
    },
  ],
  'DELETE /scheduled_messages/:scheduled_message_id': [
    { target: 'own', request: async (w) => ({ path: `/scheduled_messages/${await scheduledOf(w, w.actor)}` }), allow: ALL },
    {
      target: 'other',
      request: async (w) => ({ path: `/scheduled_messages/${await scheduledOf(w, w.fx.users.otherMember)}` }),
      allow: NOBODY,
      deny: { status: 404, code: 'BAD_REQUEST', msg: 'Scheduled message does not exist' },
    },
  ],

  // --- event queues ---
  'POST /register': [{ target: 'own', request: () => ({ path: '/register', params: { event_types: ['message'] } }), allow: ALL }],
  'GET /events': [
    { target: 'own', request: async (w) => ({ path: '/events', params: { queue_id: await queueOf(w, w.actor), last_event_id: -1, dont_block: true } }), allow: ALL },
    {
      target: 'other',
      request: async (w) => {
        const queueId = await queueOf(w, w.fx.users.otherMember)
        return { path: '/events', params: { queue_id: queueId, last_event_id: -1, dont_block: true } }
      },
      allow: NOBODY,
      deny: { status: 400, code: 'BAD_EVENT_QUEUE_ID' },
    },
    {
      target: 'foreign',
      request: async (w) => ({ path: '/events', params: { queue_id: await queueOf(w, w.foreign.users.member, w.foreign), last_event_id: -1, dont_block: true } }),
      allow: NOBODY,
      deny: { status: 400, code: 'BAD_EVENT_QUEUE_ID' },
    },
  ],
  'DELETE /events': [
    { target: 'own', request: async (w) => ({ path: '/events', params: { queue_id: await queueOf(w, w.actor) } }), allow: ALL },
    { target: 'other', request: async (w) => ({ path: '/events', params: { queue_id: await queueOf(w, w.fx.users.otherMember) } }), allow: NOBODY, deny: { status: 400, code: 'BAD_EVENT_QUEUE_ID' } },
  ],

  // --- channels and subscriptions ---
  'GET /streams': [{ target: 'none', request: () => ({ path: '/streams' }), allow: ALL }],
  'GET /streams/:stream_id': [
    { target: 'none', request: (w) => ({ path: `/streams/${w.fx.streams.general.id}` }), allow: ALL },
    // Upstream's get_stream_backend: access_stream_by_id(allow_realm_admin=True).
    { target: 'private', request: (w) => ({ path: `/streams/${w.fx.streams.secret.id}` }), allow: ADMINS, deny: INVALID_CHANNEL_ID },
    { target: 'foreign', request: (w) => ({ path: `/streams/${w.foreign.streams.general.id}` }), allow: NOBODY, deny: INVALID_CHANNEL_ID },
  ],
  'GET /get_stream_id': [
    { target: 'none', request: () => ({ path: '/get_stream_id', params: { stream: 'general' } }), allow: ALL },
    { target: 'private', request: () => ({ path: '/get_stream_id', params: { stream: 'secret' } }), allow: NOBODY, deny: bad("Invalid channel name 'secret'") },
  ],
  'GET /users/me/subscriptions': [{ target: 'own', request: () => ({ path: '/users/me/subscriptions' }), allow: ALL }],
  'POST /users/me/subscriptions': [
    { target: 'own', request: () => ({ path: '/users/me/subscriptions', params: { subscriptions: [{ name: 'design' }] } }), allow: NON_GUESTS, deny: bad('Not allowed for guest users') },
    {
      target: 'private',
      request: () => ({ path: '/users/me/subscriptions', params: { subscriptions: [{ name: 'secret' }] } }),
      allow: NOBODY,
      deny: bad('Unable to access channel (secret).'),
      denyFor: { guest: NOT_FOR_GUESTS },
    },
    {
      target: 'other',
      request: async (w) => ({ path: '/users/me/subscriptions', params: { subscriptions: [{ name: 'design' }], principals: [(await w.fx.newUser()).id] } }),
      allow: MEMBERS_UP.concat('bot'),
      denyFor: { guest: NOT_FOR_GUESTS },
    },
    { target: 'foreign', request: (w) => ({ path: '/users/me/subscriptions', params: { subscriptions: [{ name: 'design' }], principals: [w.foreign.users.member.id] } }), allow: NOBODY, denyFor: { guest: NOT_FOR_GUESTS } },
  ],
  'DELETE /users/me/subscriptions': [
    { target: 'own', request: () => ({ path: '/users/me/subscriptions', params: { subscriptions: ['general'] } }), allow: ALL },
    {
      target: 'other',
      request: async (w) => ({ path: '/users/me/subscriptions', params: { subscriptions: ['general'], principals: [(await w.fx.newUser()).id] } }),
      allow: ADMINS,
      deny: INSUFFICIENT,
      freshActor: true,
    },
  ],
  'POST /users/me/subscriptions/properties': [
    {
      target: 'own',
      request: async (w) => {
        await ok(await as(w.app, w.actor, w.fx).post('/users/me/subscriptions', { subscriptions: [{ name: 'general' }] })).catch(() => undefined)
        return { path: '/users/me/subscriptions/properties', params: { subscription_data: [{ stream_id: w.fx.streams.general.id, property: 'pin_to_top', value: true }] } }
      },
      allow: ALL,
    },
    {
      target: 'private',
      request: (w) => ({ path: '/users/me/subscriptions/properties', params: { subscription_data: [{ stream_id: w.fx.streams.secret.id, property: 'pin_to_top', value: true }] } }),
      allow: NOBODY,
    },
  ],
  'POST /user_topics': [
    { target: 'none', request: (w) => ({ path: '/user_topics', params: { stream_id: w.fx.streams.general.id, topic: 'matrix', visibility_policy: 1 } }), allow: ALL },
    { target: 'private', request: (w) => ({ path: '/user_topics', params: { stream_id: w.fx.streams.secret.id, topic: 'matrix', visibility_policy: 1 } }), allow: NOBODY, deny: INVALID_CHANNEL_ID },
    { target: 'foreign', request: (w) => ({ path: '/user_topics', params: { stream_id: w.foreign.streams.general.id, topic: 'matrix', visibility_policy: 1 } }), allow: NOBODY, deny: INVALID_CHANNEL_ID },
  ],

  // --- messages ---
  'POST /messages': [
    { target: 'none', request: () => ({ path: '/messages', params: { type: 'stream', to: 'general', topic: 'matrix', content: 'hello' } }), allow: ALL },
    {
      target: 'private',
      request: () => ({ path: '/messages', params: { type: 'stream', to: 'secret', topic: 'matrix', content: 'hello' } }),
      // Upstream: a bot may post to a private channel its owner is subscribed to (the matrix bot's owner is in `secret`).
      allow: ['bot'],
      deny: bad("Not authorized to send to channel 'secret'"),
    },
    {
      target: 'foreign',
      request: (w) => ({ path: '/messages', params: { type: 'private', to: [w.foreign.users.member.id], content: 'hello' } }),
      allow: NOBODY,
      deny: bad(),
    },
  ],
  'GET /messages': [{ target: 'none', request: () => ({ path: '/messages', params: { anchor: 'newest', num_before: 5, num_after: 0 } }), allow: ALL }],
  'GET /messages/:message_id': [
    { target: 'own', request: async (w) => ({ path: `/messages/${await ownMessage(w)}` }), allow: ALL },
    { target: 'private', request: async (w) => ({ path: `/messages/${await privateMessage(w)}` }), allow: NOBODY, deny: INVALID_MESSAGE },
    { target: 'foreign', request: async (w) => ({ path: `/messages/${await foreignMessage(w)}` }), allow: NOBODY, deny: INVALID_MESSAGE },
  ],
  'PATCH /messages/:message_id': [
    { target: 'own', request: async (w) => ({ path: `/messages/${await ownMessage(w)}`, params: { content: 'edited' } }), allow: ALL },
    {
      target: 'other',
      request: async (w) => ({ path: `/messages/${await othersMessage(w)}`, params: { content: 'edited' } }),
      allow: NOBODY,
      deny: bad("You don't have permission to edit this message"),
    },
    { target: 'private', request: async (w) => ({ path: `/messages/${await privateMessage(w)}`, params: { content: 'edited' } }), allow: NOBODY, deny: INVALID_MESSAGE },
    { target: 'foreign', request: async (w) => ({ path: `/messages/${await foreignMessage(w)}`, params: { content: 'edited' } }), allow: NOBODY, deny: INVALID_MESSAGE },
  ],
  'DELETE /messages/:message_id': [
    // Upstream 9.0 default delete_own_message_policy: everyone (5), within the time limit.
    { target: 'own', request: async (w) => ({ path: `/messages/${await ownMessage(w)}` }), allow: ALL },
    { target: 'other', request: async (w) => ({ path: `/messages/${await othersMessage(w)}` }), allow: ADMINS, deny: bad("You don't have permission to delete this message") },
    { target: 'private', request: async (w) => ({ path: `/messages/${await privateMessage(w)}` }), allow: NOBODY, deny: INVALID_MESSAGE },
    { target: 'foreign', request: async (w) => ({ path: `/messages/${await foreignMessage(w)}` }), allow: NOBODY, deny: INVALID_MESSAGE },
  ],
  'POST /messages/flags': [
    { target: 'other', request: async (w) => ({ path: '/messages/flags', params: { messages: [await othersMessage(w)], op: 'add', flag: 'starred' } }), allow: ALL },
    { target: 'private', request: async (w) => ({ path: '/messages/flags', params: { messages: [await privateMessage(w)], op: 'add', flag: 'starred' } }), allow: NOBODY, deny: INVALID_MESSAGE },
    { target: 'foreign', request: async (w) => ({ path: '/messages/flags', params: { messages: [await foreignMessage(w)], op: 'add', flag: 'starred' } }), allow: NOBODY, deny: INVALID_MESSAGE },
  ],
  'POST /messages/flags/narrow': [
    { target: 'own', request: () => ({ path: '/messages/flags/narrow', params: { anchor: 'newest', num_before: 5, num_after: 0, narrow: [], op: 'add', flag: 'read' } }), allow: ALL },
  ],
  'POST /messages/:message_id/reactions': [
    { target: 'other', request: async (w) => ({ path: `/messages/${await othersMessage(w)}/reactions`, params: { emoji_name: 'smile' } }), allow: ALL },
    { target: 'private', request: async (w) => ({ path: `/messages/${await privateMessage(w)}/reactions`, params: { emoji_name: 'smile' } }), allow: NOBODY, deny: INVALID_MESSAGE },
    { target: 'foreign', request: async (w) => ({ path: `/messages/${await foreignMessage(w)}/reactions`, params: { emoji_name: 'smile' } }), allow: NOBODY, deny: INVALID_MESSAGE },
  ],
  'DELETE /messages/:message_id/reactions': [
    {
      target: 'own',
      request: async (w) => {
        const id = await othersMessage(w)
        await ok(await as(w.app, w.actor, w.fx).post(`/messages/${id}/reactions`, { emoji_name: 'smile' }))
        return { path: `/messages/${id}/reactions`, params: { emoji_name: 'smile' } }
      },
      allow: ALL,
    },
    { target: 'private', request: async (w) => ({ path: `/messages/${await privateMessage(w)}/reactions`, params: { emoji_name: 'smile' } }), allow: NOBODY, deny: INVALID_MESSAGE },
  ],
  'POST /messages/:message_id/typing': [
    { target: 'own', request: async (w) => ({ path: `/messages/${await ownMessage(w)}/typing`, params: { op: 'start' } }), allow: ALL },
    { target: 'other', request: async (w) => ({ path: `/messages/${await othersMessage(w)}/typing`, params: { op: 'start' } }), allow: NOBODY, deny: bad("You don't have permission to edit this message") },
    { target: 'private', request: async (w) => ({ path: `/messages/${await privateMessage(w)}/typing`, params: { op: 'start' } }), allow: NOBODY, deny: INVALID_MESSAGE },
    { target: 'foreign', request: async (w) => ({ path: `/messages/${await foreignMessage(w)}/typing`, params: { op: 'start' } }), allow: NOBODY, deny: INVALID_MESSAGE },
  ],
  'POST /message_edit_typing': [
    { target: 'own', request: async (w) => ({ path: '/message_edit_typing', params: { op: 'start', message_id: await ownMessage(w) } }), allow: ALL },
    { target: 'other', request: async (w) => ({ path: '/message_edit_typing', params: { op: 'start', message_id: await othersMessage(w) } }), allow: NOBODY, deny: bad("You don't have permission to edit this message") },
    { target: 'private', request: async (w) => ({ path: '/message_edit_typing', params: { op: 'start', message_id: await privateMessage(w) } }), allow: NOBODY, deny: INVALID_MESSAGE },
    { target: 'foreign', request: async (w) => ({ path: '/message_edit_typing', params: { op: 'start', message_id: await foreignMessage(w) } }), allow: NOBODY, deny: INVALID_MESSAGE },
  ],
  'POST /typing': [
    { target: 'other', request: (w) => ({ path: '/typing', params: { op: 'start', to: [w.fx.users.otherMember.id] } }), allow: ALL },
    { target: 'private', request: (w) => ({ path: '/typing', params: { type: 'stream', op: 'start', stream_id: w.fx.streams.secret.id, topic: 'matrix' } }), allow: NOBODY, deny: INVALID_CHANNEL_ID },
  ],

  // --- uploads ---
  'POST /user_uploads': [{ target: 'own', request: () => ({ path: '/user_uploads' }), allow: NOBODY, deny: bad('You must specify a file to upload') }],
  'GET /user_uploads/:realm_id/*': [
    { target: 'own', request: async (w) => ({ path: (await uploadOf(w, w.actor)).replace(/^\/user_uploads/, '/user_uploads') }), allow: ALL },
  ],

  // --- user groups --- (changing a member's group: its can_manage_group or can_add_members_group, the creator's by default,
  // or the realm's can_manage_all_groups, owners by default)
  'GET /user_groups': [{ target: 'none', request: () => ({ path: '/user_groups' }), allow: MEMBERS_UP, denyFor: MEMBERS_OR_ADMINS_ONLY }],
  'POST /user_groups/create': [
    { target: 'none', request: (w) => ({ path: '/user_groups/create', params: { name: `g ${fresh()}`, description: 'd', members: [w.actor.id] } }), allow: MEMBERS_UP, denyFor: MEMBERS_OR_ADMINS_ONLY },
  ],
  'PATCH /user_groups/:user_group_id': [
    { target: 'own', request: async (w) => ({ path: `/user_groups/${await groupOf(w, w.fx.users.member)}`, params: { description: 'changed' } }), allow: OWNERS, denyFor: MEMBERS_OR_ADMINS_ONLY },
    {
      target: 'foreign',
      request: async (w) => ({ path: `/user_groups/${await groupOf(w, w.foreign.users.member, w.foreign)}`, params: { description: 'changed' } }),
      allow: NOBODY,
      deny: bad('Invalid user group'),
      denyFor: MEMBERS_OR_ADMINS_ONLY,
    },
  ],
  'POST /user_groups/:user_group_id/deactivate': [
    { target: 'other', request: async (w) => ({ path: `/user_groups/${await groupOf(w, w.fx.users.member)}/deactivate` }), allow: OWNERS, denyFor: MEMBERS_OR_ADMINS_ONLY },
    {
      target: 'foreign',
      request: async (w) => ({ path: `/user_groups/${await groupOf(w, w.foreign.users.member, w.foreign)}/deactivate` }),
      allow: NOBODY,
      deny: bad('Invalid user group'),
      denyFor: MEMBERS_OR_ADMINS_ONLY,
    },
  ],
  'POST /user_groups/:user_group_id/members': [
    { target: 'other', request: async (w) => ({ path: `/user_groups/${await groupOf(w, w.fx.users.member)}/members`, params: { add: [w.fx.users.otherMember.id] } }), allow: OWNERS, denyFor: MEMBERS_OR_ADMINS_ONLY },
    { target: 'foreign', request: async (w) => ({ path: `/user_groups/${await groupOf(w, w.foreign.users.member, w.foreign)}/members`, params: { add: [w.actor.id] } }), allow: NOBODY, deny: bad('Invalid user group'), denyFor: MEMBERS_OR_ADMINS_ONLY },
  ],
  'GET /user_groups/:user_group_id/members': [
    { target: 'other', request: async (w) => ({ path: `/user_groups/${await groupOf(w, w.fx.users.member)}/members` }), allow: MEMBERS_UP, denyFor: MEMBERS_OR_ADMINS_ONLY },
    { target: 'foreign', request: async (w) => ({ path: `/user_groups/${await groupOf(w, w.foreign.users.member, w.foreign)}/members` }), allow: NOBODY, deny: bad('Invalid user group'), denyFor: MEMBERS_OR_ADMINS_ONLY },
  ],
  'GET /user_groups/:user_group_id/members/:user_id': [
    { target: 'other', request: async (w) => ({ path: `/user_groups/${await groupOf(w, w.fx.users.member)}/members/${w.fx.users.member.id}` }), allow: MEMBERS_UP, denyFor: MEMBERS_OR_ADMINS_ONLY },
    {
      target: 'foreign',
      request: async (w) => ({ path: `/user_groups/${await groupOf(w, w.foreign.users.member, w.foreign)}/members/${w.foreign.users.member.id}` }),
      allow: NOBODY,
      deny: bad('Invalid user group'),
      denyFor: MEMBERS_OR_ADMINS_ONLY,
    },
  ],
  'POST /user_groups/:user_group_id/subgroups': [
    {
      target: 'other',
      request: async (w) => ({ path: `/user_groups/${await groupOf(w, w.fx.users.member)}/subgroups`, params: { add: [await groupOf(w, w.fx.users.member)] } }),
      allow: OWNERS,
      denyFor: MEMBERS_OR_ADMINS_ONLY,
    },
  ],
  'GET /user_groups/:user_group_id/subgroups': [
    { target: 'other', request: async (w) => ({ path: `/user_groups/${await groupOf(w, w.fx.users.member)}/subgroups` }), allow: MEMBERS_UP, denyFor: MEMBERS_OR_ADMINS_ONLY },
    { target: 'foreign', request: async (w) => ({ path: `/user_groups/${await groupOf(w, w.foreign.users.member, w.foreign)}/subgroups` }), allow: NOBODY, deny: bad('Invalid user group'), denyFor: MEMBERS_OR_ADMINS_ONLY },
  ],

  // --- invitations ---
  'GET /invites': [{ target: 'none', request: () => ({ path: '/invites' }), allow: MEMBERS_UP, denyFor: MEMBERS_OR_ADMINS_ONLY }],
  'POST /invites': [
    {
      target: 'none',
      request: () => ({ path: '/invites', params: { invitee_emails: `someone${fresh()}@example.org`, stream_ids: [] } }),
      allow: MEMBERS_UP,
      denyFor: MEMBERS_OR_ADMINS_ONLY,
    },
  ],
  'POST /invites/multiuse': [
    // Upstream: create_multiuse_invite_group (admins by default), else "Insufficient permission".
    { target: 'none', request: () => ({ path: '/invites/multiuse', params: {} }), allow: ADMINS, deny: INSUFFICIENT, denyFor: MEMBERS_OR_ADMINS_ONLY },
  ],
  'DELETE /invites/:invite_id': [
    { target: 'other', request: async (w) => ({ path: `/invites/${await inviteOf(w, w.fx.users.otherMember)}` }), allow: ADMINS, deny: MUST_BE_ADMIN, denyFor: MEMBERS_OR_ADMINS_ONLY },
    {
      target: 'foreign',
      request: async (w) => ({ path: `/invites/${await inviteOf(w, w.foreign.users.owner, w.foreign)}` }),
      allow: NOBODY,
      deny: bad('No such invitation'),
      denyFor: MEMBERS_OR_ADMINS_ONLY,
    },
  ],
  'DELETE /invites/multiuse/:invite_id': [
    { target: 'other', request: async (w) => ({ path: `/invites/multiuse/${await multiuseOf(w, w.fx.users.admin)}` }), allow: ADMINS, deny: MUST_BE_ADMIN, denyFor: MEMBERS_OR_ADMINS_ONLY },
  ],
  'POST /invites/:invite_id/resend': [
    { target: 'other', request: async (w) => ({ path: `/invites/${await inviteOf(w, w.fx.users.otherMember)}/resend` }), allow: ADMINS, deny: MUST_BE_ADMIN, denyFor: MEMBERS_OR_ADMINS_ONLY },
  ],
  // --- channel administration, default channels ---
  'GET /streams/:stream_id/members': [
    { target: 'none', request: (w) => ({ path: `/streams/${w.fx.streams.general.id}/members` }), allow: ALL },
    { target: 'private', request: (w) => ({ path: `/streams/${w.fx.streams.secret.id}/members` }), allow: ADMINS, deny: INVALID_CHANNEL_ID },
    { target: 'foreign', request: (w) => ({ path: `/streams/${w.foreign.streams.general.id}/members` }), allow: NOBODY, deny: INVALID_CHANNEL_ID },
  ],
  'GET /users/:user_id/subscriptions/:stream_id': [
    { target: 'other', request: (w) => ({ path: `/users/${w.fx.users.otherMember.id}/subscriptions/${w.fx.streams.general.id}` }), allow: ALL },
    { target: 'private', request: (w) => ({ path: `/users/${w.fx.users.member.id}/subscriptions/${w.fx.streams.secret.id}` }), allow: ADMINS, deny: INVALID_CHANNEL_ID },
    { target: 'foreign', request: (w) => ({ path: `/users/${w.foreign.users.member.id}/subscriptions/${w.foreign.streams.general.id}` }), allow: NOBODY, deny: NO_SUCH_USER },
  ],
  'PATCH /streams/:stream_id': [
    // Upstream's access_stream_for_delete_or_update_requiring_metadata_access: who may read the channel is told it cannot administer it.
    { target: 'none', request: (w) => ({ path: `/streams/${w.fx.streams.design.id}`, params: { description: `About ${fresh()}` } }), allow: ADMINS, deny: CANNOT_ADMINISTER, denyFor: { guest: INVALID_CHANNEL_ID } },
    // A private channel a non-admin has not joined, or another organization's, is an invalid ID.
    { target: 'private', request: (w) => ({ path: `/streams/${w.fx.streams.secret.id}`, params: { description: `About ${fresh()}` } }), allow: ADMINS, deny: INVALID_CHANNEL_ID },
    { target: 'foreign', request: (w) => ({ path: `/streams/${w.foreign.streams.design.id}`, params: { description: `About ${fresh()}` } }), allow: NOBODY, deny: INVALID_CHANNEL_ID },
  ],
  'DELETE /streams/:stream_id': [
    { target: 'none', request: async (w) => ({ path: `/streams/${await channelOf(w)}` }), allow: ADMINS, deny: CANNOT_ADMINISTER, denyFor: { guest: INVALID_CHANNEL_ID } },
    { target: 'foreign', request: (w) => ({ path: `/streams/${w.foreign.streams.design.id}` }), allow: NOBODY, deny: INVALID_CHANNEL_ID },
  ],
  'GET /default_streams': [{ target: 'none', request: () => ({ path: '/default_streams' }), allow: ALL }],
  'POST /default_streams': [
    { target: 'none', request: async (w) => ({ path: '/default_streams', params: { stream_id: await channelOf(w) } }), allow: ADMINS, deny: MUST_BE_ADMIN },
    { target: 'foreign', request: (w) => ({ path: '/default_streams', params: { stream_id: w.foreign.streams.design.id } }), allow: NOBODY, deny: MUST_BE_ADMIN, denyFor: adminFirst(INVALID_CHANNEL_ID) },
  ],
  'DELETE /default_streams': [
    {
      target: 'none',
      request: async (w) => {
        const id = await channelOf(w)
        await ok(await as(w.app, w.fx.users.owner, w.fx).post('/default_streams', { stream_id: id }))
        return { path: '/default_streams', params: { stream_id: id } }
      },
      allow: ADMINS,
      deny: MUST_BE_ADMIN,
    },
  ],

  // --- organization settings, linkifiers ---
  'PATCH /realm': [{ target: 'none', request: () => ({ path: '/realm', params: { name: `Renamed ${fresh()}` } }), allow: ADMINS, deny: MUST_BE_ADMIN }],
  'GET /realm/linkifiers': [{ target: 'none', request: () => ({ path: '/realm/linkifiers' }), allow: ALL }],
  'POST /realm/filters': [
    { target: 'none', request: () => ({ path: '/realm/filters', params: { pattern: `#(?P<id>[0-9]+)${fresh().replace(/[0-9]/g, '')}`, url_template: 'https://example.com/{id}' } }), allow: ADMINS, deny: MUST_BE_ADMIN },
  ],
  'PATCH /realm/filters/:filter_id': [
    { target: 'none', request: async (w) => ({ path: `/realm/filters/${await linkifierOf(w)}`, params: { pattern: `#(?P<id>[0-9]+)${fresh().replace(/[0-9]/g, '')}`, url_template: 'https://example.com/{id}' } }), allow: ADMINS, deny: MUST_BE_ADMIN },
    { target: 'foreign', request: async (w) => ({ path: `/realm/filters/${await linkifierOf(w, w.foreign)}`, params: { pattern: `#(?P<id>[0-9]+)q`, url_template: 'https://example.com/{id}' } }), allow: NOBODY, deny: MUST_BE_ADMIN, denyFor: adminFirst(bad('Linkifier not found.')) },
  ],
  'DELETE /realm/filters/:filter_id': [
    { target: 'none', request: async (w) => ({ path: `/realm/filters/${await linkifierOf(w)}` }), allow: ADMINS, deny: MUST_BE_ADMIN },
    { target: 'foreign', request: async (w) => ({ path: `/realm/filters/${await linkifierOf(w, w.foreign)}` }), allow: NOBODY, deny: MUST_BE_ADMIN, denyFor: adminFirst(bad('Linkifier not found.')) },
  ],
  'PATCH /realm/linkifiers': [
    {
      target: 'none',
      request: async (w) => {
        const ids = (await ok(await as(w.app, w.fx.users.owner, w.fx).get('/realm/linkifiers'))).linkifiers.map((l: { id: number }) => l.id)
        return { path: '/realm/linkifiers', params: { ordered_linkifier_ids: ids } }
      },
      allow: ADMINS,
      deny: MUST_BE_ADMIN,
    },
  ],
  // --- emoji, attachments, avatars, push devices ---
  'GET /realm/emoji': [{ target: 'none', request: () => ({ path: '/realm/emoji' }), allow: ALL }],
  'POST /realm/emoji/:emoji_name': [
    // Without a file: callers who may add emoji get the missing-file error (upstream checks permission first).
    { target: 'none', request: () => ({ path: `/realm/emoji/e${fresh().replace(/[0-9]/g, 'x')}` }), allow: NOBODY, deny: bad('You must upload exactly one file.'), denyFor: MEMBERS_OR_ADMINS_ONLY },
  ],
  'DELETE /realm/emoji/:emoji_name': [
    { target: 'none', request: () => ({ path: '/realm/emoji/no_such_emoji' }), allow: NOBODY, deny: { status: 404, code: 'BAD_REQUEST', msg: "Emoji 'no_such_emoji' does not exist" } },
  ],
  'GET /user_avatars/:realm_id/emoji/images/:file': [
    { target: 'none', request: (w) => ({ path: `/user_avatars/${w.fx.realm.id}/emoji/images/missing.png` }), allow: NOBODY, deny: { status: 404, code: 'NOT_FOUND' }, anonymous: { status: 404, code: 'NOT_FOUND' } },
  ],
  'GET /user_avatars/:realm_id/emoji/images/still/:file': [
    { target: 'none', request: (w) => ({ path: `/user_avatars/${w.fx.realm.id}/emoji/images/still/missing.png` }), allow: NOBODY, deny: { status: 404, code: 'NOT_FOUND' }, anonymous: { status: 404, code: 'NOT_FOUND' } },
  ],
  'GET /static/generated/emoji/:file': [
    { target: 'none', request: () => ({ path: '/static/generated/emoji/emoji_api.0.json' }), allow: NOBODY, deny: { status: 404, code: 'NOT_FOUND' }, anonymous: { status: 404, code: 'NOT_FOUND' } },
  ],
  'GET /user_uploads/temporary/:token/*': [
    { target: 'none', request: () => ({ path: '/user_uploads/temporary/not-a-token/a.txt' }), allow: NOBODY, deny: { status: 404, code: 'NOT_FOUND' }, anonymous: { status: 404, code: 'NOT_FOUND' } },
  ],
  'GET /attachments': [{ target: 'own', request: () => ({ path: '/attachments' }), allow: ALL }],
  'DELETE /attachments/:attachment_id': [
    {
      target: 'other',
      request: async (w) => {
        await uploadOf(w, w.fx.users.otherMember)
        const list = await ok(await as(w.app, w.fx.users.otherMember, w.fx).get('/attachments'))
        return { path: `/attachments/${(list.attachments as { id: number }[])[0]?.id ?? 0}` }
      },
      allow: NOBODY,
      deny: bad('Invalid attachment'),
    },
  ],
  'GET /avatar/:email_or_id': [
    { target: 'other', request: (w) => ({ path: `/avatar/${w.fx.users.otherMember.id}` }), allow: ALL, anonymous: { status: 401, code: 'UNAUTHORIZED' } },
  ],
  'GET /avatar/:email_or_id/medium': [
    { target: 'other', request: (w) => ({ path: `/avatar/${w.fx.users.otherMember.id}/medium` }), allow: ALL, anonymous: { status: 401, code: 'UNAUTHORIZED' } },
  ],
  // Upstream's push registration is human_users_only.
  'POST /users/me/apns_device_token': [
    { target: 'own', request: () => ({ path: '/users/me/apns_device_token', params: { token: 'abcdef0123456789', appid: 'org.example.app' } }), allow: HUMANS, denyFor: { bot: NOT_FOR_BOTS } },
  ],
  'DELETE /users/me/apns_device_token': [
    { target: 'own', request: () => ({ path: '/users/me/apns_device_token', params: { token: 'abcdef0123456789' } }), allow: NOBODY, deny: bad('Token does not exist'), denyFor: { bot: NOT_FOR_BOTS } },
  ],
  'POST /users/me/android_gcm_reg_id': [
    { target: 'own', request: () => ({ path: '/users/me/android_gcm_reg_id', params: { token: 'matrix-token-0123456789' } }), allow: HUMANS, denyFor: { bot: NOT_FOR_BOTS } },
  ],
  'DELETE /users/me/android_gcm_reg_id': [
    { target: 'own', request: () => ({ path: '/users/me/android_gcm_reg_id', params: { token: 'never-registered-token' } }), allow: NOBODY, deny: bad('Token does not exist'), denyFor: { bot: NOT_FOR_BOTS } },
  ],
  // Roost's browser Web Push registration, like the mobile ones (a public
  // address literal: the endpoint must pass the outbound policy without DNS).
  'POST /users/me/webpush_subscription': [
    {
      target: 'own',
      request: () => ({ path: '/users/me/webpush_subscription', params: { endpoint: 'https://8.8.8.8/matrix', p256dh: `B${'A'.repeat(86)}`, auth: 'A'.repeat(22) } }),
      allow: HUMANS,
      denyFor: { bot: NOT_FOR_BOTS },
    },
  ],
  'DELETE /users/me/webpush_subscription': [
    { target: 'own', request: () => ({ path: '/users/me/webpush_subscription', params: { endpoint: 'https://push.example.com/never' } }), allow: NOBODY, deny: bad('Web Push subscription does not exist'), denyFor: { bot: NOT_FOR_BOTS } },
  ],

  // --- reading, history, muting ---
  'POST /mark_all_as_read': [{ target: 'own', request: () => ({ path: '/mark_all_as_read' }), allow: ALL }],
  'POST /mark_stream_as_read': [
    { target: 'none', request: (w) => ({ path: '/mark_stream_as_read', params: { stream_id: w.fx.streams.general.id } }), allow: ALL },
    { target: 'private', request: (w) => ({ path: '/mark_stream_as_read', params: { stream_id: w.fx.streams.secret.id } }), allow: NOBODY, deny: INVALID_CHANNEL_ID },
    { target: 'foreign', request: (w) => ({ path: '/mark_stream_as_read', params: { stream_id: w.foreign.streams.general.id } }), allow: NOBODY, deny: INVALID_CHANNEL_ID },
  ],
  'POST /mark_topic_as_read': [
    { target: 'private', request: (w) => ({ path: '/mark_topic_as_read', params: { stream_id: w.fx.streams.secret.id, topic_name: 'matrix' } }), allow: NOBODY, deny: INVALID_CHANNEL_ID },
  ],
  'GET /users/me/:stream_id/topics': [
    { target: 'none', request: (w) => ({ path: `/users/me/${w.fx.streams.general.id}/topics` }), allow: ALL },
    { target: 'private', request: (w) => ({ path: `/users/me/${w.fx.streams.secret.id}/topics` }), allow: NOBODY, deny: INVALID_CHANNEL_ID },
    { target: 'foreign', request: (w) => ({ path: `/users/me/${w.foreign.streams.general.id}/topics` }), allow: NOBODY, deny: INVALID_CHANNEL_ID },
  ],
  'PATCH /users/me/subscriptions/muted_topics': [
    { target: 'private', request: (w) => ({ path: '/users/me/subscriptions/muted_topics', params: { stream_id: w.fx.streams.secret.id, topic: 'matrix', op: 'add' } }), allow: NOBODY, deny: INVALID_CHANNEL_ID },
  ],
  'POST /users/me/muted_users/:muted_user_id': [
    { target: 'other', request: async (w) => ({ path: `/users/me/muted_users/${(await w.fx.newUser()).id}` }), allow: ALL },
    { target: 'foreign', request: (w) => ({ path: `/users/me/muted_users/${w.foreign.users.member.id}` }), allow: NOBODY, deny: NO_SUCH_USER },
  ],
  'DELETE /users/me/muted_users/:muted_user_id': [
    { target: 'other', request: (w) => ({ path: `/users/me/muted_users/${w.fx.users.otherMember.id}` }), allow: NOBODY, deny: bad('User is not muted') },
    { target: 'foreign', request: (w) => ({ path: `/users/me/muted_users/${w.foreign.users.member.id}` }), allow: NOBODY, deny: NO_SUCH_USER },
  ],
  'GET /messages/:message_id/history': [
    { target: 'own', request: async (w) => ({ path: `/messages/${await ownMessage(w)}/history` }), allow: ALL },
    { target: 'private', request: async (w) => ({ path: `/messages/${await privateMessage(w)}/history` }), allow: NOBODY, deny: INVALID_MESSAGE },
    { target: 'foreign', request: async (w) => ({ path: `/messages/${await foreignMessage(w)}/history` }), allow: NOBODY, deny: INVALID_MESSAGE },
  ],
  'GET /messages/:message_id/read_receipts': [
    { target: 'other', request: async (w) => ({ path: `/messages/${await othersMessage(w)}/read_receipts` }), allow: ALL },
    { target: 'private', request: async (w) => ({ path: `/messages/${await privateMessage(w)}/read_receipts` }), allow: NOBODY, deny: INVALID_MESSAGE },
    { target: 'foreign', request: async (w) => ({ path: `/messages/${await foreignMessage(w)}/read_receipts` }), allow: NOBODY, deny: INVALID_MESSAGE },
  ],
  'GET /messages/matches_narrow': [
    { target: 'private', request: async (w) => ({ path: '/messages/matches_narrow', params: { msg_ids: [await privateMessage(w)], narrow: [] } }), allow: ALL },
  ],
  'POST /messages/render': [{ target: 'none', request: () => ({ path: '/messages/render', params: { content: '**matrix**' } }), allow: ALL }],
}
