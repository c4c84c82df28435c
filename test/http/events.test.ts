import t from 'tap'
import { buildTestApp } from '../support/app.js'
import { anon, as } from '../support/client.js'
import { bodyOf, expectError, expectSuccess } from '../support/expect.js'
import { waitForHeld, withTimeout } from '../events/queue-store.contract.js'

t.test('POST /register', async (t) => {
  const { app, fx, services } = await buildTestApp(t)
  const member = await fx.user('member')

  t.test('returns a queue and every initial-state key by default', async (t) => {
    const body = expectSuccess(t, await as(app, member).post('/register'))
    t.match(body, {
      queue_id: String,
      last_event_id: -1,
      service_feature_level: Number,
      service_version: String,
      service_merge_base: String,
      max_message_length: 10000,
      max_topic_length: 60,
      event_queue_longpoll_timeout_seconds: 90,
      alert_words: [],
      custom_profile_fields: [],
      unread_msgs: { count: 0, pms: [], streams: [], huddles: [], mentions: [], old_unreads_missing: false },
      starred_messages: [],
      realm_default_streams: Array,
      realm_users: Array,
      subscriptions: Array,
      unsubscribed: [],
      never_subscribed: Array,
      user_settings: Object,
      recent_private_conversations: [],
      presences: {},
      max_message_id: -1,
      realm_name: fx.realm.name,
    })
    t.same(body.subscriptions.map((s: { name: string }) => s.name), ['design', 'general', 'secret'])
    t.ok(body.streams.some((s: { name: string }) => s.name === 'secret'), 'a subscriber sees the private channel')
    t.ok(body.realm_users.every((u: Record<string, unknown>) => !('is_active' in u)))
  })

  t.test('returns only the keys fetch_event_types selects', async (t) => {
    const body = expectSuccess(t, await as(app, member).post('/register', { fetch_event_types: ['alert_words', 'message'], event_types: ['message'] }))
    t.same(Object.keys(body).sort(), [
      'alert_words',
      'last_event_id',
      'max_message_id',
      'msg',
      'queue_id',
      'result',
      'service_feature_level',
      'service_merge_base',
      'service_version',
      'zulip_feature_level',
      'zulip_merge_base',
      'zulip_version',
    ])
  })

  t.test('needs message and update_message_flags for unread_msgs', async (t) => {
    const body = expectSuccess(t, await as(app, member).post('/register', { event_types: ['message', 'update_message_flags'] }))
    t.ok(body.unread_msgs)
    t.notOk(expectSuccess(t, await as(app, member).post('/register', { event_types: ['message'] })).unread_msgs)
  })

  t.test('shows administrators every private channel', async (t) => {
    const admin = await fx.user('admin')
    const body = expectSuccess(t, await as(app, admin).post('/register', { fetch_event_types: ['stream'] }))
    t.ok(body.streams.some((s: { name: string }) => s.name === 'secret'))
    const other = await fx.user('otherMember')
    const plain = expectSuccess(t, await as(app, other).post('/register', { fetch_event_types: ['stream'] }))
    t.notOk(plain.streams.some((s: { name: string }) => s.name === 'secret'))
  })

  t.test('rejects narrow operators events cannot match', async (t) => {
    expectError(t, await as(app, member).post('/register', { narrow: [['search', 'x']] }), { code: 'BAD_REQUEST', msg: 'Operator search not supported.' })
    // Upstream's check_narrow_for_events: the legacy DM operators are known (no BAD_NARROW) but events cannot be matched on them.
    for (const op of ['pm_with', 'pm-with', 'group_pm_with', 'group-pm-with']) {
      expectError(t, await as(app, member).post('/register', { narrow: [[op, member.deliveryEmail]] }), { code: 'BAD_REQUEST', status: 400, msg: `Operator ${op} not supported.` })
    }
    expectSuccess(t, await as(app, member).post('/register', { narrow: [['stream', 'general'], ['is', 'private']], event_types: ['message'] }))
    expectError(t, await as(app, member).post('/register', { narrow: 'nope' }), { code: 'BAD_REQUEST' })
    expectError(t, await as(app, member).post('/register', { client_capabilities: '{"bulk_message_deletion": 3}' }), { code: 'BAD_REQUEST' })
  })

  t.test('refuses all_public_streams to guests', async (t) => {
    const guest = await fx.user('guest')
    expectError(t, await as(app, guest).post('/register', { all_public_streams: true }), { code: 'BAD_REQUEST', msg: 'User not authorized for this query' })
  })

  t.test('lets visitors of a public realm register without a queue', async (t) => {
    expectError(t, await anon(app, fx).post('/register'), { code: 'UNAUTHORIZED', status: 401 })
    await services.prisma.realm.update({ where: { id: fx.realm.id }, data: { webPublicAccessEnabled: true } })
    t.teardown(() => services.prisma.realm.update({ where: { id: fx.realm.id }, data: { webPublicAccessEnabled: false } }))
    const body = expectSuccess(t, await anon(app, fx).post('/register', { fetch_event_types: ['realm'] }))
    t.equal(body.queue_id, null)
    t.equal(body.realm_allow_message_editing, false)
    expectError(t, await anon(app, fx).post('/register', { client_extavatar: true }), { code: 'BAD_REQUEST', msg: /client_extavatar/ })
    expectError(t, await anon(app, fx).post('/register', { include_subscribers: true }), { code: 'BAD_REQUEST', msg: /include_subscribers/ })
  })
})

t.test('GET /events and DELETE /events', async (t) => {
  const { app, fx, services } = await buildTestApp(t)
  const member = await fx.user('member')
  const other = await fx.user('otherMember')
  const register = async () => expectSuccess(t, await as(app, member).post('/register', { event_types: ['heartbeat', 'message'] })).queue_id as string

  t.test('answers at once with dont_block', async (t) => {
    const queue_id = await register()
    t.same(expectSuccess(t, await as(app, member).get('/events', { queue_id, last_event_id: -1, dont_block: true })).events, [])
  })

  t.test('answers BAD_EVENT_QUEUE_ID with the queue_id for unknown and foreign queues', async (t) => {
    const queue_id = await register()
    const unknown = expectError(t, await as(app, member).get('/events', { queue_id: 'nope', last_event_id: -1, dont_block: true }), { code: 'BAD_EVENT_QUEUE_ID', msg: 'Bad event queue ID: nope' })
    t.equal(unknown.queue_id, 'nope')
    const foreign = expectError(t, await as(app, other).get('/events', { queue_id, last_event_id: -1, dont_block: true }), { code: 'BAD_EVENT_QUEUE_ID' })
    t.equal(foreign.queue_id, queue_id)
  })

  t.test('deletes a queue once', async (t) => {
    const queue_id = await register()
    expectSuccess(t, await as(app, member).delete('/events', { queue_id }))
    t.equal(expectError(t, await as(app, member).delete('/events', { queue_id }), { code: 'BAD_EVENT_QUEUE_ID' }).queue_id, queue_id)
    expectError(t, await as(app, member).get('/events', { queue_id, last_event_id: -1, dont_block: true }), { code: 'BAD_EVENT_QUEUE_ID' })
  })

  t.test('a held poll on a queue that is then deleted finishes normally with no events, as upstream does', async (t) => {
    const queue_id = await register()
    const held = as(app, member).get('/events', { queue_id, last_event_id: -1 })
    await waitForHeld(services.events)
    expectSuccess(t, await as(app, member).delete('/events', { queue_id }))
    const res = await withTimeout(held)
    t.equal(res.statusCode, 200)
    t.same(bodyOf(res), { result: 'success', msg: '', events: [], queue_id })
    expectError(t, await as(app, member).get('/events', { queue_id, last_event_id: -1 }), { code: 'BAD_EVENT_QUEUE_ID', msg: `Bad event queue ID: ${queue_id}` })
  })

  t.test('registers implicitly without queue_id when not blocking', async (t) => {
    const body = expectSuccess(t, await as(app, member).get('/events', { dont_block: true, event_types: ['message'] }))
    t.same(body.events, [])
    t.type(body.queue_id, 'string')
    expectSuccess(t, await as(app, member).get('/events', { queue_id: body.queue_id, last_event_id: -1, dont_block: true }))
    expectError(t, await as(app, member).get('/events', {}), { code: 'REQUEST_VARIABLE_MISSING', msg: "Missing 'queue_id' argument" })
  })

  t.test('requires last_event_id and rejects an id the queue never issued', async (t) => {
    const queue_id = await register()
    expectError(t, await as(app, member).get('/events', { queue_id, dont_block: true }), { code: 'REQUEST_VARIABLE_MISSING' })
    expectError(t, await as(app, member).get('/events', { queue_id, last_event_id: 5, dont_block: true }), { code: 'BAD_REQUEST', msg: 'Event 5 was not in this queue' })
  })

  t.test('a held poll returns the events published meanwhile', async (t) => {
    const queue_id = await register()
    const poll = as(app, member).get('/events', { queue_id, last_event_id: -1 })
    await services.bus.publish({ realmId: fx.realm.id, userIds: [member.id], event: { type: 'message', message: { id: 1, type: 'private', content: 'x', raw_content: 'x' } }, origin: 'test' })
    const body = expectSuccess(t, await withTimeout(poll))
    t.match(body.events, [{ id: 0, type: 'message', message: { id: 1 } }])
    t.equal(body.queue_id, queue_id)
  })
})
