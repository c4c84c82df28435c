import t from 'tap'
import { buildTestApp, makeFixture } from '../support/app.js'
import { as } from '../support/client.js'
import { expectError, expectSuccess } from '../support/expect.js'
import { captureEvents } from '../support/events.js'

t.test('PATCH /users/me/subscriptions/muted_topics (legacy)', async (t) => {
  const { app, fx, services } = await buildTestApp(t)
  const { member, otherMember, guest, admin } = fx.users
  const { general, design, secret } = fx.streams
  const patch = (user = member, p: Record<string, unknown> = {}) => as(app, user).patch('/users/me/subscriptions/muted_topics', p)
  const policies = async (userId: number) =>
    (await services.prisma.userTopic.findMany({ where: { userId }, orderBy: { id: 'asc' } })).map((r) => [r.streamId, r.topicName, r.visibilityPolicy])

  t.test('add mutes by channel ID, with the muted_topics and user_topic events', async (t) => {
    const events = await captureEvents(app, member, async () => {
      t.same(expectSuccess(t, await patch(member, { stream_id: general.id, topic: 'lunch', op: 'add' })), { result: 'success', msg: '' })
    }, { register: { event_types: ['muted_topics', 'user_topic'] } })
    t.equal(events.length, 1, 'a client asking for user_topic does not get muted_topics too')
    t.match(events[0], { type: 'user_topic', stream_id: general.id, topic_name: 'lunch', visibility_policy: 1 })
    t.same(await policies(member.id), [[general.id, 'lunch', 1]])

    const legacy = await captureEvents(app, member, () => patch(member, { stream: 'design', topic: 'Plans', op: 'add' }), { register: { event_types: ['muted_topics'] } })
    t.equal(legacy.length, 1)
    t.equal(legacy[0]?.type, 'muted_topics')
    t.same(legacy[0]?.muted_topics.map((m: unknown[]) => m.slice(0, 2)), [['general', 'lunch'], ['design', 'Plans']])
    t.type(legacy[0]?.muted_topics[1][2], 'number')
  })

  t.test('remove unmutes (by name or ID); since feature level 170 repeating either is no error and sends nothing', async (t) => {
    const none = await captureEvents(app, member, async () => {
      expectSuccess(t, await patch(member, { stream_id: general.id, topic: 'LUNCH', op: 'add' }))
    }, { expectNone: true })
    t.same(none, [])
    const events = await captureEvents(app, member, async () => {
      expectSuccess(t, await patch(member, { stream: 'general', topic: 'lunch', op: 'remove' }))
    })
    t.match(events, [{ type: 'muted_topics' }, { type: 'user_topic', stream_id: general.id, topic_name: 'lunch', visibility_policy: 0 }])
    expectSuccess(t, await patch(member, { stream_id: general.id, topic: 'lunch', op: 'remove' }))
    t.same(await policies(member.id), [[design.id, 'Plans', 1]])
  })

  t.test('a followed topic becomes muted', async (t) => {
    expectSuccess(t, await as(app, otherMember).post('/user_topics', { stream_id: general.id, topic: 'fun', visibility_policy: 3 }))
    expectSuccess(t, await patch(otherMember, { stream_id: general.id, topic: 'fun', op: 'add' }))
    t.same(await policies(otherMember.id), [[general.id, 'fun', 1]])
  })

  t.test('muting needs access to the channel; unmuting only a channel of the organization', async (t) => {
    expectError(t, await patch(otherMember, { stream_id: secret.id, topic: 't', op: 'add' }), { code: 'BAD_REQUEST', status: 400, msg: 'Invalid channel ID' })
    expectError(t, await patch(admin, { stream_id: secret.id, topic: 't', op: 'add' }), { code: 'BAD_REQUEST', msg: 'Invalid channel ID' })
    expectError(t, await patch(guest, { stream_id: design.id, topic: 't', op: 'add' }), { code: 'BAD_REQUEST', msg: 'Invalid channel ID' })
    expectError(t, await patch(otherMember, { stream: 'secret', topic: 't', op: 'add' }), { code: 'BAD_REQUEST', msg: "Invalid channel name 'secret'" })
    expectError(t, await patch(otherMember, { stream: 'nowhere', topic: 't', op: 'add' }), { code: 'BAD_REQUEST', msg: "Invalid channel name 'nowhere'" })
    expectError(t, await patch(otherMember, { stream_id: 999999999, topic: 't', op: 'add' }), { code: 'BAD_REQUEST', msg: 'Invalid channel ID' })
    expectSuccess(t, await patch(otherMember, { stream_id: secret.id, topic: 't', op: 'remove' }))
    expectError(t, await patch(otherMember, { stream_id: 999999999, topic: 't', op: 'remove' }), { code: 'BAD_REQUEST', status: 400, msg: 'Topic is not muted' })
    expectError(t, await patch(otherMember, { stream: 'nowhere', topic: 't', op: 'remove' }), { code: 'BAD_REQUEST', msg: 'Topic is not muted' })
    const other = await makeFixture(services)
    expectError(t, await patch(other.users.member, { stream_id: general.id, topic: 't', op: 'add' }), { code: 'BAD_REQUEST', msg: 'Invalid channel ID' })
    expectError(t, await patch(other.users.member, { stream_id: general.id, topic: 't', op: 'remove' }), { code: 'BAD_REQUEST', msg: 'Topic is not muted' })
  })

  t.test('bad input names the parameter', async (t) => {
    expectError(t, await patch(member, { topic: 't', op: 'add' }), { code: 'BAD_REQUEST', status: 400, msg: "Missing 'stream_id' argument" })
    expectError(t, await patch(member, { stream_id: general.id, stream: 'general', topic: 't', op: 'add' }), {
      code: 'BAD_REQUEST', msg: 'Unsupported parameter combination: stream_id, stream',
    })
    expectError(t, await patch(member, { stream_id: general.id, topic: 't', op: 'toggle' }), { code: 'BAD_REQUEST', msg: 'Invalid op' })
    expectError(t, await patch(member, { stream_id: general.id, op: 'add' }), { code: 'REQUEST_VARIABLE_MISSING', msg: "Missing 'topic' argument" })
    expectError(t, await patch(member, { stream_id: general.id, topic: 'x'.repeat(61), op: 'add' }), { code: 'BAD_REQUEST', msg: 'topic is too long (limit: 60 characters)' })
    t.match(expectError(t, await patch(member, { stream_id: 'general', topic: 't', op: 'add' }), { code: 'BAD_REQUEST' }).msg, /stream_id/)
  })
})
