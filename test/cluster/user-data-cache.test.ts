// The user-data cache (GET /users/me's newest message and profile values)
// across nodes: node B has a database connection of its own, so only the
// NOTIFY of migration *_user_data_invalidation can tell it about a change
// made through node A. Each case warms B's cache (and checks that B answers
// from it), changes something through A, then retries B until it answers the
// change, within a deadline far below the cache's 60 s safety TTL. The last
// cases check what needs no waiting: the requester's own change on the node
// that made it.
import pg from 'pg'
import t from 'tap'
import type { User } from '../../src/db/index.js'
import { TEST_DATABASE_URL, twoNodesOwnConnections, type TestApp } from '../support/app.js'
import { as } from '../support/client.js'
import { expectSuccess, type Asserts } from '../support/expect.js'
import { withTimeout } from '../events/queue-store.contract.js'
import { eventually } from '../support/eventually.js'

const DEADLINE_MS = 10_000

type Profile = Record<string, unknown> & { max_message_id: number; profile_data?: Record<string, unknown> }

async function me(t: Asserts, node: TestApp, user: User): Promise<Profile> {
  return expectSuccess(t, await as(node.app, user, node.fx).get('/users/me')) as Profile
}

/** Reads through `node` until `done` holds or the deadline passes; returns the last answer. */
/** The user's profile on `node`, once `done` holds of it. */
const profileOn = (t: Asserts, node: TestApp, user: User, done: (profile: Profile) => boolean) => eventually('the profile on the other node', () => me(t, node, user), { until: done })

/** Reads through `node` until its cache listens; the next read must be a hit. Returns that answer. */
async function warm(t: Asserts, node: TestApp, user: User): Promise<Profile> {
  await me(t, node, user)
  await withTimeout(node.services.userDataCache.whenListening(), DEADLINE_MS, 'the invalidation listener')
  await me(t, node, user)
  const hits = node.services.userDataCache.hits
  const profile = await me(t, node, user)
  t.equal(node.services.userDataCache.hits, hits + 1, 'answered from the cache')
  return profile
}

async function send(node: TestApp, sender: User, to: string, content: string): Promise<number> {
  const res = await as(node.app, sender, node.fx).post('/messages', { type: 'stream', to, topic: 'cache', content })
  return Number(expectSuccess(t, res).id)
}

t.test('a message received through node A moves max_message_id on node B', async (t) => {
  const { a, b } = await twoNodesOwnConnections(t)
  const reader = a.fx.users.member
  await warm(t, b, reader)
  const id = await send(a, a.fx.users.otherMember, 'general', 'news')
  const profile = await profileOn(t, b, reader, (p) => p.max_message_id === id)
  t.equal(profile.max_message_id, id)
})

t.test('the newest message deleted through node A moves max_message_id back on node B', async (t) => {
  const { a, b } = await twoNodesOwnConnections(t)
  const reader = a.fx.users.member
  const first = await send(a, a.fx.users.otherMember, 'general', 'first')
  const second = await send(a, a.fx.users.otherMember, 'general', 'second')
  t.equal((await warm(t, b, reader)).max_message_id, second)
  expectSuccess(t, await as(a.app, a.fx.users.admin).delete(`/messages/${second}`))
  const profile = await profileOn(t, b, reader, (p) => p.max_message_id === first)
  t.equal(profile.max_message_id, first)
})

t.test("a direct message through node A evicts its two users only: node B keeps answering a third from its cache", async (t) => {
  const { a, b } = await twoNodesOwnConnections(t)
  const { admin, member, otherMember: bystander } = a.fx.users
  await warm(t, b, member)
  await warm(t, b, bystander)
  const res = await as(a.app, admin).post('/messages', { type: 'private', to: JSON.stringify([member.id]), content: 'between us' })
  const id = Number(expectSuccess(t, res).id)
  t.equal((await profileOn(t, b, member, (p) => p.max_message_id === id)).max_message_id, id)
  const hits = b.services.userDataCache.hits
  t.not((await me(t, b, bystander)).max_message_id, id)
  t.equal(b.services.userDataCache.hits, hits + 1, "the bystander's entry was kept")
})

t.test('a reaction through node A to a message the user never received (a historical copy) moves max_message_id on node B', async (t) => {
  const { a, b } = await twoNodesOwnConnections(t)
  const { admin, member } = a.fx.users
  const channel = `lonely-${Date.now()}`
  expectSuccess(t, await as(a.app, admin).post('/users/me/subscriptions', { subscriptions: [{ name: channel }] }))
  const before = (await warm(t, b, member)).max_message_id
  const id = await send(a, admin, channel, 'nobody else here')
  expectSuccess(t, await as(a.app, member).post(`/messages/${id}/reactions`, { emoji_name: 'octopus' }))
  const profile = await profileOn(t, b, member, (p) => p.max_message_id !== before)
  t.equal(profile.max_message_id, id)
})

t.test('a send is announced once, by the sending node after its commit, with its recipients', async (t) => {
  const { a } = await twoNodesOwnConnections(t)
  const { admin, member } = a.fx.users
  const listener = new pg.Client({ connectionString: TEST_DATABASE_URL })
  await listener.connect()
  t.teardown(() => listener.end())
  const ours = new Set([admin.id, member.id])
  // No real user has this ID: announcing it evicts nothing, and its arrival shows that everything committed before it has arrived.
  const sync = '2147483647'
  const payloads: string[] = []
  let synced: () => void = () => {}
  const arrived = new Promise<void>((resolve) => (synced = resolve))
  listener.on('notification', (message) => {
    const payload = message.payload ?? ''
    if (payload === sync) synced()
    else if (payload.split(',').some((id) => ours.has(Number(id)))) payloads.push(payload)
  })
  await listener.query('LISTEN roost_user_data')
  expectSuccess(t, await as(a.app, admin).post('/messages', { type: 'private', to: JSON.stringify([member.id]), content: 'counted' }))
  await listener.query(`SELECT pg_notify('roost_user_data', '${sync}')`)
  await withTimeout(arrived, DEADLINE_MS, 'the sync notification')
  t.same(payloads, [[admin.id, member.id].sort((x, y) => x - y).join(',')])
})

t.test('profile values set through node A appear on node B', async (t) => {
  const { a, b } = await twoNodesOwnConnections(t)
  const field = expectSuccess(t, await as(a.app, a.fx.users.admin).post('/realm/profile_fields', { name: 'Desk', hint: '', field_type: 1 })).id as number
  const person = await a.fx.newUser()
  t.same((await warm(t, b, person)).profile_data, {})
  expectSuccess(t, await as(a.app, person).patch('/users/me/profile_data', { data: [{ id: field, value: 'B-12' }] }))
  const set = await profileOn(t, b, person, (p) => JSON.stringify(p.profile_data) !== '{}')
  t.same(set.profile_data, { [String(field)]: { value: 'B-12', rendered_value: '<p>B-12</p>' } })

  await warm(t, b, person)
  expectSuccess(t, await as(a.app, a.fx.users.admin).delete(`/realm/profile_fields/${field}`))
  const removed = await profileOn(t, b, person, (p) => JSON.stringify(p.profile_data) === '{}')
  t.same(removed.profile_data, {})
})

t.test("the sender's own message is in their next answer on the same node, without waiting", async (t) => {
  const { b } = await twoNodesOwnConnections(t)
  const sender = b.fx.users.member
  await warm(t, b, sender)
  const id = await send(b, sender, 'general', 'mine')
  t.equal((await me(t, b, sender)).max_message_id, id)
})

t.test("the requester's own profile value is in their next answer on the same node, without waiting", async (t) => {
  const { b } = await twoNodesOwnConnections(t)
  const field = expectSuccess(t, await as(b.app, b.fx.users.admin).post('/realm/profile_fields', { name: 'Floor', hint: '', field_type: 1 })).id as number
  const person = await b.fx.newUser()
  await warm(t, b, person)
  expectSuccess(t, await as(b.app, person).patch('/users/me/profile_data', { data: [{ id: field, value: '3' }] }))
  t.same((await me(t, b, person)).profile_data, { [String(field)]: { value: '3', rendered_value: '<p>3</p>' } })
})
