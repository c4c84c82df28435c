// Several organizations on one server: each answers at its own host
// (<subdomain>.<EXTERNAL_URL host>; the root one at EXTERNAL_URL's host), and
// nothing of one (people, channels, messages, uploads, event queues,
// credentials) is visible or usable from another.
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import type { FastifyInstance } from 'fastify'
import { buildTestApp, makeFixture, type Fixture } from '../support/app.js'
import { anon, as, basicAuth } from '../support/client.js'
import { expectError, expectSuccess } from '../support/expect.js'
import { createOrganization } from '../../src/actions/create-organization.js'
import type { User } from '../../src/db/index.js'

function uploadText(app: FastifyInstance, user: User, fx: Fixture, name: string, text: string) {
  const boundary = '----roostorgs'
  const body = `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${name}"\r\nContent-Type: text/plain\r\n\r\n${text}\r\n--${boundary}--\r\n`
  return app.inject({
    method: 'POST',
    url: '/api/v1/user_uploads',
    headers: { authorization: basicAuth(user.deliveryEmail, user.apiKey), host: fx.host, 'content-type': `multipart/form-data; boundary=${boundary}` },
    payload: body,
  })
}

t.test('organizations on one server are isolated', async (t) => {
  const dataDir = await mkdtemp(join(tmpdir(), 'roost-orgs-'))
  t.teardown(() => rm(dataDir, { recursive: true, force: true }))
  const { app, fx: a, services } = await buildTestApp(t, { config: { dataDir } })
  const b = await makeFixture(services)
  const memberA = await a.user('member')
  const memberB = await b.user('member')

  t.test('server_settings answers for the organization of the host', async (t) => {
    const sa = expectSuccess(t, await anon(app, a).get('/server_settings'))
    const sb = expectSuccess(t, await anon(app, b).get('/server_settings'))
    t.equal(sa.realm_name, a.realm.name)
    t.equal(sb.realm_name, b.realm.name)
    t.equal(sb.realm_url, `http://${b.realm.stringId}.localhost:9991`)
    expectError(t, await anon(app, { host: 'no-such-org.localhost' }).get('/server_settings'), { code: 'BAD_REQUEST', status: 400, msg: 'Invalid subdomain' })
  })

  t.test('an organization made by createOrganization answers at its subdomain', async (t) => {
    const subdomain = `org-${a.realm.stringId}`
    const made = await createOrganization(services, { name: 'Made Here', subdomain, ownerEmail: `boss@${subdomain}.example.com`, ownerPassword: 'made-password-1' })
    t.equal(made.url, `http://${subdomain}.localhost:9991`)
    const host = { host: `${subdomain}.localhost` }
    t.equal(expectSuccess(t, await anon(app, host).get('/server_settings')).realm_name, 'Made Here')
    expectSuccess(t, await anon(app, host).post('/fetch_api_key', { username: `boss@${subdomain}.example.com`, password: 'made-password-1' }))
    expectError(t, await anon(app, a).post('/fetch_api_key', { username: `boss@${subdomain}.example.com`, password: 'made-password-1' }), { code: 'AUTHENTICATION_FAILED', status: 401 })
  })

  t.test("login and API keys work only at the user's own host", async (t) => {
    expectSuccess(t, await anon(app, a).post('/fetch_api_key', { username: a.users.owner.deliveryEmail, password: 'owner-password-1' }))
    expectError(t, await anon(app, b).post('/fetch_api_key', { username: a.users.owner.deliveryEmail, password: 'owner-password-1' }), { code: 'AUTHENTICATION_FAILED', status: 401 })
    expectError(t, await as(app, memberA, b).get('/users/me'), { code: 'UNAUTHORIZED', status: 401, msg: 'Account is not associated with this subdomain' })
    expectError(t, await as(app, memberA, { host: 'no-such-org.localhost' }).get('/users/me'), { code: 'UNAUTHORIZED', status: 401 })
  })

  t.test('user lists and lookups stay inside the organization', async (t) => {
    const usersA = expectSuccess(t, await as(app, memberA, a).get('/users')).members as { user_id: number }[]
    const idsB = new Set(Object.values(b.users).map((u) => u.id))
    t.ok(usersA.length > 0)
    t.notOk(usersA.some((u) => idsB.has(u.user_id)), "no user of B in A's list")
    expectError(t, await as(app, memberA, a).get(`/users/${memberB.id}`), { code: 'BAD_REQUEST', status: 400, msg: 'No such user' })
    expectError(t, await as(app, memberA, a).get(`/users/${encodeURIComponent(memberB.deliveryEmail)}`), { code: 'BAD_REQUEST', status: 400, msg: 'No such user' })
  })

  t.test('channels of one organization are invisible to the other, even with the same name', async (t) => {
    const streamsA = expectSuccess(t, await as(app, memberA, a).get('/streams')).streams as { stream_id: number; name: string }[]
    t.same(streamsA.map((s) => s.stream_id).sort(), [a.streams.general.id, a.streams.design.id, a.streams.secret.id].sort())
    expectError(t, await as(app, memberA, a).get(`/streams/${b.streams.design.id}`), { code: 'BAD_REQUEST', status: 400 })
    const sub = await as(app, memberA, a).post('/users/me/subscriptions', { subscriptions: [{ name: 'design' }] })
    expectSuccess(t, sub)
    const subscribers = expectSuccess(t, await as(app, memberB, b).get(`/streams/${b.streams.design.id}/members`)).subscribers as number[]
    t.notOk(subscribers.includes(memberA.id), "subscribing to A's 'design' does not touch B's 'design'")
  })

  t.test("messages, narrows and message IDs of one organization are not reachable from the other; events never cross", async (t) => {
    const regB = expectSuccess(t, await as(app, memberB, b).post('/register', { all_public_streams: true }))
    const sent = expectSuccess(t, await as(app, memberA, a).post('/messages', { type: 'stream', to: 'general', topic: 'only A', content: 'for A only' }))
    expectSuccess(t, await as(app, memberA, a).patch('/settings', { color_scheme: 2 }))
    const msgsB = expectSuccess(t, await as(app, memberB, b).get('/messages', { anchor: 'newest', num_before: 100, num_after: 0, narrow: [{ operator: 'channel', operand: 'general' }] })).messages as { id: number }[]
    t.notOk(msgsB.some((m) => m.id === sent.id), "A's message is not in B's 'general'")
    const searched = expectSuccess(t, await as(app, memberB, b).get('/messages', { anchor: 'newest', num_before: 100, num_after: 0, narrow: [{ operator: 'search', operand: 'only' }] })).messages as unknown[]
    t.same(searched, [])
    expectError(t, await as(app, memberB, b).get('/messages', { anchor: 'newest', num_before: 10, num_after: 0, narrow: [{ operator: 'channel', operand: a.streams.general.id }] }), { code: 'BAD_NARROW', status: 400 })
    expectError(t, await as(app, memberB, b).get(`/messages/${sent.id as number}`), { code: 'BAD_REQUEST', status: 400 })
    expectError(t, await as(app, memberB, b).post('/messages', { type: 'private', to: JSON.stringify([memberA.id]), content: 'hi' }), { code: 'BAD_REQUEST', status: 400 })
    expectError(t, await as(app, memberB, b).post('/messages/flags', { messages: [sent.id], op: 'add', flag: 'starred' }), { code: 'BAD_REQUEST', status: 400 })
    const eventsB = expectSuccess(t, await as(app, memberB, b).get('/events', { queue_id: regB.queue_id, last_event_id: -1, dont_block: true })).events as unknown[]
    t.same(eventsB, [], "no event of A in B's all_public_streams queue")
    expectError(t, await as(app, memberA, a).get('/events', { queue_id: regB.queue_id, last_event_id: -1, dont_block: true }), { code: 'BAD_EVENT_QUEUE_ID', status: 400 })
    expectError(t, await as(app, memberA, a).delete('/events', { queue_id: regB.queue_id }), { code: 'BAD_EVENT_QUEUE_ID', status: 400 })
  })

  t.test("an upload of one organization cannot be fetched from the other", async (t) => {
    const up = expectSuccess(t, await uploadText(app, memberA, a, 'a.txt', 'secret of A'))
    const path = up.url as string
    const own = await app.inject({ method: 'GET', url: path, headers: { authorization: basicAuth(memberA.deliveryEmail, memberA.apiKey), host: a.host } })
    t.equal(own.statusCode, 200)
    const fromB = await app.inject({ method: 'GET', url: path, headers: { authorization: basicAuth(memberB.deliveryEmail, memberB.apiKey), host: b.host } })
    t.equal(fromB.statusCode, 404)
    t.notMatch(fromB.body, 'secret of A')
    const crossHost = await app.inject({ method: 'GET', url: path, headers: { authorization: basicAuth(memberA.deliveryEmail, memberA.apiKey), host: b.host } })
    t.equal(crossHost.statusCode, 401)
  })
})
