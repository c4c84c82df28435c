import t from 'tap'
import { buildTestApp } from '../support/app.js'
import { as } from '../support/client.js'
import { expectError, expectSuccess, type Body } from '../support/expect.js'
import { capture, ofType, sendTo } from './conversation-support.js'

t.test('POST /user_topics', async (t) => {
  const { app, fx, services } = await buildTestApp(t)
  const { owner, member, otherMember, guest } = fx.users
  const { general, secret } = fx.streams
  const set = (user = otherMember, p: Record<string, unknown> = {}) => as(app, user).post('/user_topics', { stream_id: general.id, topic: 'lunch', ...p })

  t.test('sets each policy with user_topic events (after the legacy muted_topics), nothing when unchanged', async (t) => {
    const events = await capture(t, app, [otherMember, member], () => set(otherMember, { visibility_policy: 1 }))
    const mine = events.get(otherMember.id) ?? []
    t.match(mine.map((e) => e.type), ['muted_topics', 'user_topic'])
    t.same(ofType(mine, 'muted_topics')[0]?.muted_topics.map((m: unknown[]) => m.slice(0, 2)), [['general', 'lunch']])
    const [e] = ofType(mine, 'user_topic')
    t.same({ ...e, id: undefined, last_updated: undefined }, { type: 'user_topic', id: undefined, stream_id: general.id, topic_name: 'lunch', last_updated: undefined, visibility_policy: 1 })
    t.type(e?.last_updated, 'number')
    t.same(events.get(member.id), [], 'only the user hears')

    const same = await capture(t, app, [otherMember], () => set(otherMember, { visibility_policy: 1 }))
    t.same(same.get(otherMember.id), [], 'no event for an unchanged policy')
    for (const policy of [2, 3, 0]) {
      const ev = await capture(t, app, [otherMember], () => set(otherMember, { visibility_policy: policy }))
      t.match(ofType(ev.get(otherMember.id), 'user_topic'), [{ visibility_policy: policy }])
    }
    t.equal(await services.prisma.userTopic.count({ where: { userId: otherMember.id } }), 0, 'policy 0 removes the row')
    const none = await capture(t, app, [otherMember], () => set(otherMember, { visibility_policy: 0 }))
    t.same(none.get(otherMember.id), [])
  })

  t.test('topics match case-insensitively; a topic with no messages is fine', async (t) => {
    expectSuccess(t, await set(member, { topic: 'Never Used', visibility_policy: 3 }))
    expectSuccess(t, await set(member, { topic: 'never used', visibility_policy: 1 }))
    t.same((await services.prisma.userTopic.findMany({ where: { userId: member.id } })).map((r) => [r.topicName, r.visibilityPolicy]), [['Never Used', 1]])
    const reg = expectSuccess(t, await as(app, member).post('/register', { fetch_event_types: ['user_topic'] }))
    t.match(reg.user_topics, [{ stream_id: general.id, topic_name: 'Never Used', visibility_policy: 1 }])
  })

  t.test('bad input', async (t) => {
    expectError(t, await set(otherMember, { visibility_policy: 4 }), { code: 'BAD_REQUEST' })
    expectError(t, await set(otherMember, { topic: 'x'.repeat(61), visibility_policy: 1 }), { code: 'BAD_REQUEST', msg: 'topic is too long (limit: 60 characters)' })
    expectError(t, await set(otherMember, { stream_id: secret.id, visibility_policy: 1 }), { code: 'BAD_REQUEST', msg: 'Invalid channel ID' })
    expectError(t, await set(otherMember, { stream_id: secret.id, visibility_policy: 0 }), { code: 'BAD_REQUEST', msg: 'Invalid channel ID' })
    expectError(t, await set(guest, { stream_id: fx.streams.design.id, visibility_policy: 1 }), { code: 'BAD_REQUEST', msg: 'Invalid channel ID' })
    expectError(t, await as(app, otherMember).post('/user_topics', { stream_id: general.id, visibility_policy: 1 }), { code: 'REQUEST_VARIABLE_MISSING', msg: "Missing 'topic' argument" })
  })

  t.test('muted topics drop out of the unread count and wildcard mentions, not direct mentions', async (t) => {
    const unread = async (): Promise<Body> =>
      expectSuccess(t, await as(app, otherMember).post('/register', { event_types: ['message', 'update_message_flags'], fetch_event_types: ['message', 'update_message_flags'] })).unread_msgs
    await as(app, otherMember).post('/messages/flags/narrow', { anchor: 'newest', num_before: 5000, num_after: 0, op: 'add', flag: 'read' })
    const wild = await sendTo(t, app, owner, 'general', 'noisy', '@**all** hello')
    const direct = await sendTo(t, app, owner, 'general', 'noisy', `@**${otherMember.fullName}** hello`)
    const plain = await sendTo(t, app, owner, 'general', 'quiet', 'hello')
    let u = await unread()
    t.equal(u.count, 3)
    t.same(u.mentions, [wild, direct])
    expectSuccess(t, await set(otherMember, { topic: 'noisy', visibility_policy: 1 }))
    u = await unread()
    t.equal(u.count, 1)
    t.same(u.mentions, [direct])
    t.ok(u.streams.some((s: Body) => s.topic === 'noisy'), 'still listed in streams')
    expectSuccess(t, await set(otherMember, { topic: 'noisy', visibility_policy: 0 }))
    t.equal((await unread()).count, 3)
    void plain
  })
})
