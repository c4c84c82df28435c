// The authentication cache across nodes: node B has a database connection
// of its own (as a node in another process would), so only PostgreSQL's
// NOTIFY can tell it about a change made through node A. Each case warms B's
// cache, changes something through A, then retries B until it answers the
// change, within a deadline far below the cache's 60 s safety TTL.
import type { LightMyRequestResponse } from 'fastify'
import t from 'tap'
import type { User } from '../../src/db/index.js'
import { ROLE } from '../../src/domain/roles.js'
import { twoNodesOwnConnections, type TestApp } from '../support/app.js'
import { as } from '../support/client.js'
import { expectError, expectSuccess, type Asserts } from '../support/expect.js'
import { withTimeout } from '../events/queue-store.contract.js'
import { eventually } from '../support/eventually.js'

const DEADLINE_MS = 10_000

/** Retries `attempt` until `done` holds or the deadline passes; returns the last response. */
/** The response of `attempt` once it has `status`. */
const answeredWith = (status: number, attempt: () => Promise<LightMyRequestResponse>) => eventually(`an answer with status ${status}`, attempt, { until: (r) => r.statusCode === status })

/** Requests on B until its cache listens, then twice more: the last one is served from the cache. */
async function warm(t: Asserts, node: TestApp, user: User): Promise<void> {
  expectSuccess(t, await as(node.app, user, node.fx).get('/users/me'))
  await withTimeout(node.services.authCache.whenListening(), DEADLINE_MS, 'the invalidation listener')
  expectSuccess(t, await as(node.app, user, node.fx).get('/users/me'))
  expectSuccess(t, await as(node.app, user, node.fx).get('/users/me'))
}

t.test('a user deactivated through node A is refused by node B', async (t) => {
  const { a, b } = await twoNodesOwnConnections(t)
  const user = await a.fx.newUser()
  await warm(t, b, user)
  expectSuccess(t, await as(a.app, a.fx.users.admin).delete(`/users/${user.id}`))
  const res = await answeredWith(401, () => as(b.app, user).get('/users/me'))
  expectError(t, res, { code: 'USER_DEACTIVATED', status: 401, msg: 'Account is deactivated' })
  expectSuccess(t, await as(a.app, a.fx.users.admin).post(`/users/${user.id}/reactivate`))
  const back = await answeredWith(200, () => as(b.app, user).get('/users/me'))
  t.equal(expectSuccess(t, back).user_id, user.id)
})

t.test('a role given through node A applies on node B', async (t) => {
  const { a, b } = await twoNodesOwnConnections(t)
  const user = await a.fx.newUser()
  const victim = await a.fx.newUser()
  await warm(t, b, user)
  const deactivateVictim = () => as(b.app, user).delete(`/users/${victim.id}`)
  expectError(t, await deactivateVictim(), { code: 'BAD_REQUEST', status: 400, msg: 'Insufficient permission' })
  expectSuccess(t, await as(a.app, a.fx.users.admin).patch(`/users/${user.id}`, { role: ROLE.ADMIN }))
  expectSuccess(t, await answeredWith(200, deactivateVictim))
})

t.test("a user's API key changed on node A stops working on node B", async (t) => {
  const { a, b } = await twoNodesOwnConnections(t)
  const user = await a.fx.newUser()
  await warm(t, b, user)
  const newKey = 'K'.repeat(16) + String(user.id).padStart(16, '0')
  await a.services.prisma.user.update({ where: { id: user.id }, data: { apiKey: newKey } })
  const res = await answeredWith(401, () => as(b.app, user).get('/users/me'))
  expectError(t, res, { code: 'UNAUTHORIZED', status: 401, msg: 'Invalid API key' })
  expectSuccess(t, await as(b.app, { deliveryEmail: user.deliveryEmail, apiKey: newKey }, b.fx).get('/users/me'))
})

t.test("presence_enabled turned off through node A: node A at once and node B after its NOTIFY ignore the user's pings", async (t) => {
  const { a, b } = await twoNodesOwnConnections(t)
  const user = await a.fx.newUser()
  const owner = a.fx.users.owner
  const ping = (node: TestApp) => as(node.app, user).post('/users/me/presence', { status: 'active', ping_only: true })
  const noPresence = { code: 'BAD_REQUEST', status: 400, msg: `No presence data for ${user.email}` }
  await warm(t, a, user)
  await warm(t, b, user)
  expectSuccess(t, await ping(b))
  t.equal(b.services.authCache.cachedPresenceEnabled(user), true, "B's cache holds the setting with the user")
  t.equal(a.services.authCache.cachedPresenceEnabled(user), true, "and so does A's")
  expectSuccess(t, await as(a.app, user).patch('/settings', { presence_enabled: false }))
  // A's own write evicted its entry before the answer: the next ping reads the new setting.
  expectSuccess(t, await ping(a))
  t.equal(a.services.authCache.cachedPresenceEnabled(user), false)
  expectError(t, await as(a.app, owner).get(`/users/${user.id}/presence`), noPresence)
  // B's entry goes when the NOTIFY arrives; nothing else asks B for this user meanwhile.
  await eventually('the cached entry dropped on B', () => b.services.authCache.cachedPresenceEnabled(user), { until: (cached) => cached === undefined })
  expectSuccess(t, await ping(b))
  t.equal(b.services.authCache.cachedPresenceEnabled(user), false)
  expectError(t, await as(b.app, owner).get(`/users/${user.id}/presence`), noPresence)
  // Turned on again: B learns that too, and records the next ping.
  expectSuccess(t, await as(a.app, user).patch('/settings', { presence_enabled: true }))
  await eventually('the cached entry dropped on B', () => b.services.authCache.cachedPresenceEnabled(user), { until: (cached) => cached === undefined })
  expectSuccess(t, await ping(b))
  t.equal(b.services.authCache.cachedPresenceEnabled(user), true)
  const presence = expectSuccess(t, await as(b.app, owner).get(`/users/${user.id}/presence`)).presence
  t.equal(presence.aggregated.status, 'active')
})

t.test("a sender renamed through node A: GET /messages shows the new name on node A at once and on node B after its NOTIFY", async (t) => {
  const { a, b } = await twoNodesOwnConnections(t)
  const { owner, member, admin } = a.fx.users
  const general = a.fx.streams.general
  expectSuccess(t, await as(a.app, member).post('/messages', { type: 'stream', to: general.name, topic: 'names', content: 'hello' }))
  const senderName = async (node: TestApp) => {
    const body = expectSuccess(t, await as(node.app, owner).get('/messages', { anchor: 'newest', num_before: 1, narrow: [{ operator: 'channel', operand: general.id }] }))
    return body.messages[0].sender_full_name as string
  }
  for (const node of [a, b]) {
    await warm(t, node, member)
    t.ok(node.services.authCache.cachedUserById(member.id), "the node's cache holds the sender")
    t.equal(await senderName(node), member.fullName)
  }
  expectSuccess(t, await as(a.app, admin).patch(`/users/${member.id}`, { full_name: 'Renamed Member' }))
  // A's own write evicted the sender before the answer.
  t.equal(await senderName(a), 'Renamed Member')
  // B's entry goes when the NOTIFY arrives (within the deadline, far below the 60 s TTL).
  const name = await eventually('the new name on B', () => senderName(b), { until: (found) => found === 'Renamed Member' })
  t.equal(name, 'Renamed Member')
  t.equal(b.services.authCache.cachedUserById(member.id), undefined, "B's entry was evicted")
})

t.test('a realm setting changed through node A applies on node B', async (t) => {
  const { a, b } = await twoNodesOwnConnections(t)
  const member = a.fx.users.member
  await warm(t, b, member)
  const noTopic = () => as(b.app, member).post('/messages', { type: 'stream', to: 'general', topic: '(no topic)', content: 'x' })
  expectSuccess(t, await noTopic())
  await a.services.prisma.realm.update({ where: { id: a.fx.realm.id }, data: { mandatoryTopics: true } })
  const res = await answeredWith(400, noTopic)
  expectError(t, res, { code: 'BAD_REQUEST', status: 400, msg: 'Topics are required in this organization' })
})

t.test('a realm deactivated through node A refuses requests on node B', async (t) => {
  const { a, b } = await twoNodesOwnConnections(t)
  const member = a.fx.users.member
  await warm(t, b, member)
  await a.services.prisma.realm.update({ where: { id: a.fx.realm.id }, data: { deactivated: true } })
  const res = await answeredWith(401, () => as(b.app, member).get('/users/me'))
  expectError(t, res, { code: 'REALM_DEACTIVATED', status: 401, msg: 'This organization has been deactivated' })
})

t.test("node B's listener connection is cut: B still never serves a stale row, and listens again", async (t) => {
  const { a, b } = await twoNodesOwnConnections(t)
  const user = await a.fx.newUser()
  await warm(t, b, user)
  // Cut every listener connection to this test database (other test processes on it reconnect too).
  await a.services.prisma.$queryRaw`
    SELECT pg_terminate_backend(pid)::text FROM pg_stat_activity
    WHERE datname = current_database() AND query LIKE 'LISTEN roost_row_change%' AND pid <> pg_backend_pid()`
  expectSuccess(t, await as(a.app, a.fx.users.admin).delete(`/users/${user.id}`))
  const res = await answeredWith(401, () => as(b.app, user).get('/users/me'))
  expectError(t, res, { code: 'USER_DEACTIVATED', status: 401, msg: 'Account is deactivated' })
  await withTimeout(b.services.authCache.whenListening(), DEADLINE_MS, 'the listener to reconnect')
  expectSuccess(t, await as(a.app, a.fx.users.admin).post(`/users/${user.id}/reactivate`))
  const back = await answeredWith(200, () => as(b.app, user).get('/users/me'))
  expectSuccess(t, back)
})
