// Realm-wide presence across nodes: each node answers from its own copy of
// the presence rows (refreshed from Redis on every read) and of the users'
// emails and join dates (emptied by PostgreSQL's NOTIFY). Node B has a
// database connection of its own, as a node in another process would, so
// only NOTIFY can tell it about a change made through node A. Each case warms
// B's copies, changes something through A, then asks B again (retrying
// until a deadline for what travels by NOTIFY).
import t, { type Test } from 'tap'
import type { User } from '../../src/db/index.js'
import { twoNodesOwnConnections, type TestApp } from '../support/app.js'
import { as } from '../support/client.js'
import { expectSuccess } from '../support/expect.js'
import { withTimeout } from '../events/queue-store.contract.js'
import { eventually } from '../support/eventually.js'

const DEADLINE_MS = 10_000

type Presences = Record<string, { aggregated?: unknown; active_timestamp?: number }>

const legacy = async (t: Test, node: TestApp, user: User): Promise<Presences> =>
  expectSuccess(t, await as(node.app, user, node.fx).post('/users/me/presence', { status: 'active' })).presences as Presences


/** Asks B until its copy of the users is in use, then once more: B answers from its copies. */
async function warm(t: Test, b: TestApp, watcher: User): Promise<void> {
  await legacy(t, b, watcher)
  await withTimeout(b.services.presenceDirectory.whenListening(), DEADLINE_MS, 'the invalidation listener')
  await legacy(t, b, watcher)
  const hits = b.services.presenceDirectory.hits
  await legacy(t, b, watcher)
  t.ok(b.services.presenceDirectory.hits > hits, "B answered from its copy of the users")
}

t.test('a report on node A appears in the incremental answer of node B, whose copy was warm', async (t) => {
  const { a, b } = await twoNodesOwnConnections(t)
  const watcher = a.fx.users.owner
  const other = await a.fx.newUser()
  await warm(t, b, watcher)
  const before = expectSuccess(t, await as(b.app, watcher, b.fx).post('/users/me/presence', { status: 'active', last_update_id: -1 }))
  const since = before.presence_last_update_id as number
  t.notOk(before.presences[String(other.id)])
  expectSuccess(t, await as(a.app, other).post('/users/me/presence', { status: 'idle' }))
  const after = expectSuccess(t, await as(b.app, watcher, b.fx).post('/users/me/presence', { status: 'active', last_update_id: since }))
  t.same(Object.keys(after.presences), [String(other.id)])
  t.ok(after.presence_last_update_id > since)
})

t.test('a user deactivated through node A leaves the answers of node B; reactivated, comes back', async (t) => {
  const { a, b } = await twoNodesOwnConnections(t)
  const watcher = a.fx.users.owner
  const user = await a.fx.newUser()
  expectSuccess(t, await as(a.app, user).post('/users/me/presence', { status: 'active' }))
  await warm(t, b, watcher)
  t.ok((await legacy(t, b, watcher))[user.email])
  expectSuccess(t, await as(a.app, a.fx.users.admin).delete(`/users/${user.id}`))
  t.notOk((await eventually('the presence gone on B', () => legacy(t, b, watcher), { until: (p) => !p[user.email] }))[user.email], 'gone on B')
  expectSuccess(t, await as(a.app, a.fx.users.admin).post(`/users/${user.id}/reactivate`))
  t.ok((await eventually('the presence back on B', () => legacy(t, b, watcher), { until: (p) => Boolean(p[user.email]) }))[user.email], 'back on B')
})

t.test("a user's email changed through node A is the key of node B's legacy answer", async (t) => {
  const { a, b } = await twoNodesOwnConnections(t)
  const watcher = a.fx.users.owner
  const user = await a.fx.newUser()
  expectSuccess(t, await as(a.app, user).post('/users/me/presence', { status: 'active' }))
  await warm(t, b, watcher)
  const renamed = `renamed-${user.email}`
  await a.services.prisma.user.update({ where: { id: user.id }, data: { email: renamed } })
  const seen = await eventually('the renamed presence on B', () => legacy(t, b, watcher), { until: (p) => Boolean(p[renamed]) })
  t.ok(seen[renamed])
  t.notOk(seen[user.email])
})

t.test('a user created through node A is listed by node B as soon as it reports', async (t) => {
  const { a, b } = await twoNodesOwnConnections(t)
  const watcher = a.fx.users.owner
  await warm(t, b, watcher)
  const fresh = await a.fx.newUser()
  expectSuccess(t, await as(a.app, fresh).post('/users/me/presence', { status: 'active' }))
  t.ok((await legacy(t, b, watcher))[fresh.email])
})
