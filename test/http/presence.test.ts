import t from 'tap'
import { randomUUID } from 'node:crypto'
import { buildTestApp } from '../support/app.js'
import { as } from '../support/client.js'
import { expectError, expectSuccess } from '../support/expect.js'
import type { BusItem } from '../../src/events/bus.js'
import { eventually } from '../support/eventually.js'

t.test('presence', async (t) => {
  const { app, fx, services } = await buildTestApp(t)
  let clock = Date.parse('2024-06-01T12:00:00Z')
  services.now = () => new Date(clock)
  const sec = () => Math.floor(clock / 1000)

  t.test('modern protocol: -1 fetches everything, then only what is new', async (t) => {
    const a = await fx.newUser()
    const b = await fx.newUser()
    const first = expectSuccess(t, await as(app, a).post('/users/me/presence', { status: 'active', last_update_id: -1 }))
    t.same(first.presences[String(a.id)], { active_timestamp: sec(), idle_timestamp: sec() })
    t.equal(typeof first.server_timestamp, 'number')
    const id1 = first.presence_last_update_id as number
    t.ok(id1 > 0)
    // Nothing new: the same id comes back, and no presences.
    const again = expectSuccess(t, await as(app, a).post('/users/me/presence', { status: 'active', last_update_id: id1 }))
    t.same(again.presences, {})
    t.equal(again.presence_last_update_id, id1)
    clock += 10_000
    expectSuccess(t, await as(app, b).post('/users/me/presence', { status: 'idle', last_update_id: -1 }))
    const next = expectSuccess(t, await as(app, a).post('/users/me/presence', { status: 'active', last_update_id: id1 }))
    t.same(Object.keys(next.presences), [String(b.id)])
    t.ok(next.presence_last_update_id > id1)
    t.equal(next.presences[String(b.id)].idle_timestamp, sec())
  })

  t.test('history_limit_days and presence_history_limit_days list only users connected within that many days (level 288)', async (t) => {
    const a = await fx.newUser()
    const b = await fx.newUser()
    expectSuccess(t, await as(app, a).post('/users/me/presence', { status: 'active', last_update_id: -1 }))
    clock += 3 * 24 * 3600 * 1000
    const listed = async (params: Record<string, unknown>) =>
      Object.keys(expectSuccess(t, await as(app, b).post('/users/me/presence', { status: 'active', last_update_id: -1, ...params })).presences)
    t.same((await listed({ history_limit_days: 1 })).filter((id) => id === String(a.id) || id === String(b.id)), [String(b.id)])
    t.same((await listed({ history_limit_days: 5 })).filter((id) => id === String(a.id) || id === String(b.id)), [String(a.id), String(b.id)])
    // Without the parameter: upstream's 14 days.
    t.same((await listed({})).filter((id) => id === String(a.id) || id === String(b.id)), [String(a.id), String(b.id)])
    const registered = async (params: Record<string, unknown>) =>
      Object.keys(expectSuccess(t, await as(app, b).post('/register', { fetch_event_types: ['presence'], slim_presence: true, ...params })).presences)
    t.same((await registered({ presence_history_limit_days: 1 })).filter((id) => id === String(a.id) || id === String(b.id)), [String(b.id)])
    t.same((await registered({})).filter((id) => id === String(a.id) || id === String(b.id)), [String(a.id), String(b.id)])
    expectError(t, await as(app, b).post('/users/me/presence', { status: 'active', history_limit_days: 'x' }), { code: 'BAD_REQUEST', status: 400 })
    expectError(t, await as(app, b).post('/register', { presence_history_limit_days: 'x' }), { code: 'BAD_REQUEST', status: 400 })
  })

  t.test('legacy format when last_update_id is omitted and slim_presence is false', async (t) => {
    const a = await fx.newUser()
    clock += 1000
    const body = expectSuccess(t, await as(app, a).post('/users/me/presence', { status: 'active' }))
    t.same(body.presences[a.email], {
      aggregated: { client: 'website', status: 'active', timestamp: sec() },
      website: { client: 'website', status: 'active', timestamp: sec(), pushable: false },
    })
    const slim = expectSuccess(t, await as(app, a).post('/users/me/presence', { status: 'active', slim_presence: true }))
    t.ok(slim.presences[String(a.id)])
    const realm = expectSuccess(t, await as(app, fx.users.owner).get('/realm/presence'))
    t.ok(realm.presences[a.email])
    t.equal(typeof realm.server_timestamp, 'number')
  })

  t.test("the node's copy of the users follows deactivation, reactivation, new users and email changes at once", async (t) => {
    const watcher = fx.users.owner
    const gone = await fx.newUser()
    await services.presenceDirectory.whenListening()
    clock += 1000
    expectSuccess(t, await as(app, gone).post('/users/me/presence', { status: 'active' }))
    const list = async () => expectSuccess(t, await as(app, watcher).post('/users/me/presence', { status: 'active' })).presences as Record<string, unknown>
    t.ok((await list())[gone.email], 'listed')
    const hits = services.presenceDirectory.hits
    t.ok((await list())[gone.email], 'listed again')
    t.ok(services.presenceDirectory.hits > hits, 'from the copy')
    expectSuccess(t, await as(app, fx.users.admin).delete(`/users/${gone.id}`))
    t.notOk((await list())[gone.email], 'a deactivated user is not listed')
    expectSuccess(t, await as(app, fx.users.admin).post(`/users/${gone.id}/reactivate`))
    t.ok((await list())[gone.email], 'listed once reactivated')
    await list()
    const fresh = await fx.newUser()
    expectSuccess(t, await as(app, fresh).post('/users/me/presence', { status: 'idle' }))
    t.ok((await list())[fresh.email], 'a new user is listed')
    await services.prisma.user.update({ where: { id: fresh.id }, data: { email: `renamed-${fresh.email}` } })
    const renamed = await list()
    t.notOk(renamed[fresh.email])
    t.ok(renamed[`renamed-${fresh.email}`], 'under its new email')
  })

  t.test('the answers built from each row\'s JSON text equal the register state, in user ID order, and follow new reports', async (t) => {
    const watcher = fx.users.owner
    const users = [await fx.newUser(), await fx.newUser(), await fx.newUser()]
    clock += 1000
    for (const u of users) expectSuccess(t, await as(app, u).post('/users/me/presence', { status: 'active' }))
    const compare = async (label: string) => {
      const legacy = expectSuccess(t, await as(app, watcher).post('/users/me/presence', { status: 'active' }))
      const modern = expectSuccess(t, await as(app, watcher).post('/users/me/presence', { status: 'active', slim_presence: true }))
      const realm = expectSuccess(t, await as(app, watcher).get('/realm/presence'))
      const registeredLegacy = expectSuccess(t, await as(app, watcher).post('/register', { event_types: JSON.stringify(['presence']), fetch_event_types: JSON.stringify(['presence']) }))
      const registeredModern = expectSuccess(t, await as(app, watcher).post('/register', { event_types: JSON.stringify(['presence']), fetch_event_types: JSON.stringify(['presence']), slim_presence: true }))
      t.same(legacy.presences, registeredLegacy.presences, `${label}: legacy`)
      t.same(realm.presences, registeredLegacy.presences, `${label}: GET /realm/presence`)
      t.same(modern.presences, registeredModern.presences, `${label}: modern`)
      const ids = Object.keys(modern.presences).map(Number)
      t.same(ids, [...ids].sort((x, y) => x - y), `${label}: user ID order`)
      return { legacy: legacy.presences as Record<string, { aggregated: { status: string; timestamp: number } }>, modern: modern.presences as Record<string, { idle_timestamp: number }> }
    }
    const before = await compare('first')
    await compare('served again from the kept texts')
    clock += 100_000
    expectSuccess(t, await as(app, users[1]!).post('/users/me/presence', { status: 'idle' }))
    const after = await compare('after a new report')
    t.equal(after.modern[String(users[1]!.id)]?.idle_timestamp, sec(), 'the new report is in the modern answer')
    t.same(after.legacy[users[1]!.email]?.aggregated, { client: 'website', status: 'idle', timestamp: sec() }, 'and in the legacy one')
    t.same(after.legacy[users[0]!.email], before.legacy[users[0]!.email], 'the others unchanged')
  })

  t.test('ping_only returns no presence data', async (t) => {
    const a = await fx.newUser()
    const body = expectSuccess(t, await as(app, a).post('/users/me/presence', { status: 'idle', ping_only: true }))
    t.notOk('presences' in body)
    t.notOk('server_timestamp' in body)
  })

  t.test('aggregates a user’s clients: active wins; idle after 70 s without activity; offline after 200 s', async (t) => {
    const a = await fx.newUser()
    expectSuccess(t, await as(app, a).post('/users/me/presence', { status: 'active' }))
    const activeAt = sec()
    clock += 30_000
    expectSuccess(t, await as(app, a).post('/users/me/presence', { status: 'idle' }))
    let p = expectSuccess(t, await as(app, fx.users.owner).get(`/users/${a.id}/presence`)).presence
    t.match(p.aggregated, { status: 'active', timestamp: activeAt })
    clock += 60_000
    expectSuccess(t, await as(app, a).post('/users/me/presence', { status: 'idle' }))
    p = expectSuccess(t, await as(app, fx.users.owner).get(`/users/${a.email}/presence`)).presence
    t.match(p.aggregated, { status: 'idle', timestamp: sec() })
    clock += 201_000
    p = expectSuccess(t, await as(app, fx.users.owner).get(`/users/${a.id}/presence`)).presence
    t.equal(p.aggregated.status, 'offline')
  })

  t.test('users who disabled presence show offline since before they did, and their reports are ignored', async (t) => {
    const a = await fx.newUser()
    const disabledAt = sec()
    expectSuccess(t, await as(app, a).patch('/settings', { presence_enabled: false }))
    clock += 1000
    expectSuccess(t, await as(app, a).post('/users/me/presence', { status: 'active' }))
    const body = expectSuccess(t, await as(app, fx.users.owner).post('/users/me/presence', { status: 'active', last_update_id: -1 }))
    // Upstream lists them (no presence_enabled filter): one idle report dated 320 s before disabling, never active.
    t.same(body.presences[String(a.id)], { active_timestamp: Math.floor(a.dateJoined.getTime() / 1000), idle_timestamp: disabledAt - 320 })
    expectError(t, await as(app, fx.users.owner).get(`/users/${a.id}/presence`), { code: 'BAD_REQUEST', msg: `No presence data for ${a.email}` })
  })

  t.test('sends a presence event when a user comes online, not on every ping', async (t) => {
    const a = await fx.newUser()
    const items: BusItem[] = []
    const stop = services.bus.subscribe((i) => items.push(i))
    t.teardown(stop)
    await as(app, a).post('/users/me/presence', { status: 'active' })
    clock += 60_000
    await as(app, a).post('/users/me/presence', { status: 'active' })
    const ofA = () => items.filter((i) => i.event.type === 'presence' && i.event.user_id === a.id)
    const events = await eventually('the presence event', ofA, { until: (found) => found.length > 0 }).catch(ofA)
    t.equal(events.length, 1)
    t.match(events[0]?.event, { type: 'presence', user_id: a.id, email: a.email, presence: { website: { client: 'website', status: 'active', pushable: false } } })
    t.ok(events[0]?.userIds.includes(fx.users.owner.id))
  })

  t.test('errors', async (t) => {
    const a = await fx.newUser()
    expectError(t, await as(app, a).post('/users/me/presence', { status: 'away' }), { code: 'BAD_REQUEST', msg: 'Invalid status: away' })
    expectError(t, await as(app, a).post('/users/me/presence', {}), { code: 'REQUEST_VARIABLE_MISSING' })
    expectError(t, await as(app, fx.users.bot).post('/users/me/presence', { status: 'active' }), { code: 'BAD_REQUEST' })
    expectError(t, await as(app, a).get(`/users/${fx.users.bot.id}/presence`), { code: 'BAD_REQUEST', msg: 'Presence is not supported for bot users.' })
    expectError(t, await as(app, a).get('/users/999999/presence'), { code: 'BAD_REQUEST', msg: 'No such user' })
    const quiet = await fx.newUser()
    expectError(t, await as(app, a).get(`/users/${quiet.id}/presence`), { code: 'BAD_REQUEST', msg: `No presence data for ${quiet.email}` })
  })
})

t.test('presence is shared by the nodes of a cluster (Redis)', async (t) => {
  const redisPrefix = `test:${randomUUID()}`
  const a = await buildTestApp(t, { bus: 'redis', redisPrefix })
  const b = await buildTestApp(t, { bus: 'redis', redisPrefix, fixture: a.fx })
  const one = await a.fx.newUser()
  const two = await a.fx.newUser()
  const first = expectSuccess(t, await as(a.app, one).post('/users/me/presence', { status: 'active', last_update_id: -1 }))
  const id1 = first.presence_last_update_id as number
  t.ok(first.presences[String(one.id)])
  // Nothing new on the other node either.
  const same = expectSuccess(t, await as(b.app, one).post('/users/me/presence', { status: 'active', last_update_id: id1 }))
  t.equal(same.presence_last_update_id, id1)
  t.same(same.presences, {})
  expectSuccess(t, await as(b.app, two).post('/users/me/presence', { status: 'idle' }))
  const seen = expectSuccess(t, await as(a.app, one).post('/users/me/presence', { status: 'active', last_update_id: id1 }))
  t.same(Object.keys(seen.presences), [String(two.id)])
  t.ok(seen.presence_last_update_id > id1)
})
