import t from 'tap'
import { buildTestApp } from '../support/app.js'
import { as } from '../support/client.js'
import { expectError, expectSuccess } from '../support/expect.js'
import { captureEvents, MODERN_CAPABILITIES } from '../support/events.js'

t.test('POST /typing', async (t) => {
  const { app, fx, services } = await buildTestApp(t)
  const { member, otherMember, guest } = fx.users

  t.test('tells every participant of a direct conversation, the sender included', async (t) => {
    const events = await captureEvents(app, otherMember, () => as(app, member).post('/typing', { op: 'start', to: [otherMember.id] }), {
      register: { event_types: ['typing'] },
    })
    const ids = [member.id, otherMember.id].sort((a, b) => a - b)
    const byId = new Map([member, otherMember].map((u) => [u.id, u.email]))
    t.strictSame(events.map(({ id: _id, ...e }) => e), [
      { type: 'typing', op: 'start', message_type: 'direct', sender: { user_id: member.id, email: member.email }, recipients: ids.map((id) => ({ user_id: id, email: byId.get(id) })) },
    ])
  })

  t.test('tells channel subscribers whose clients support channel typing', async (t) => {
    const send = () => as(app, member).post('/typing', { type: 'stream', op: 'stop', stream_id: fx.streams.general.id, topic: 'lunch' })
    const events = await captureEvents(app, otherMember, send, { register: { event_types: ['typing'] } })
    t.strictSame(events.map(({ id: _id, ...e }) => e), [
      { type: 'typing', op: 'stop', message_type: 'stream', sender: { user_id: member.id, email: member.email }, stream_id: fx.streams.general.id, topic: 'lunch' },
    ])
    const old = await captureEvents(app, otherMember, send, {
      register: { event_types: ['typing'], client_capabilities: { ...MODERN_CAPABILITIES, stream_typing_notifications: false } },
      expectNone: true,
    })
    t.same(old, [], 'queues without stream_typing_notifications get nothing')
  })

  t.test('skips people who turned typing notifications off', async (t) => {
    await services.prisma.userSettings.update({ where: { userId: otherMember.id }, data: { receivesTypingNotifications: false } })
    t.teardown(() => services.prisma.userSettings.update({ where: { userId: otherMember.id }, data: { receivesTypingNotifications: true } }))
    const events = await captureEvents(app, otherMember, () => as(app, member).post('/typing', { op: 'start', to: [otherMember.id] }), {
      register: { event_types: ['typing'] },
      expectNone: true,
    })
    t.same(events, [])
  })

  t.test('rejects bad requests with upstream messages', async (t) => {
    expectError(t, await as(app, member).post('/typing', { op: 'start' }), { code: 'REQUEST_VARIABLE_MISSING', msg: "Missing 'to' argument" })
    expectError(t, await as(app, member).post('/typing', { op: 'start', to: [] }), { code: 'BAD_REQUEST', msg: "Empty 'to' list" })
    expectError(t, await as(app, member).post('/typing', { op: 'begin', to: [otherMember.id] }), { code: 'BAD_REQUEST', msg: 'Invalid op' })
    expectError(t, await as(app, member).post('/typing', { op: 'start', to: [999999] }), { code: 'BAD_REQUEST', msg: 'Invalid user ID 999999' })
    expectError(t, await as(app, member).post('/typing', { op: 'start', to: 'x' }), { code: 'BAD_REQUEST', msg: 'to is not valid JSON' })
    expectError(t, await as(app, member).post('/typing', { type: 'stream', op: 'start', topic: 'x' }), { code: 'REQUEST_VARIABLE_MISSING', msg: "Missing 'stream_id' argument" })
    expectError(t, await as(app, member).post('/typing', { type: 'stream', op: 'start', stream_id: fx.streams.general.id }), { code: 'BAD_REQUEST', msg: 'Missing topic' })
    expectError(t, await as(app, guest).post('/typing', { type: 'stream', op: 'start', stream_id: fx.streams.secret.id, topic: 'x' }), { code: 'BAD_REQUEST', msg: 'Invalid channel ID' })
  })

  t.test('refuses when the sender disabled sending typing notifications', async (t) => {
    const quiet = await fx.newUser()
    await services.prisma.userSettings.update({ where: { userId: quiet.id }, data: { sendPrivateTypingNotifications: false, sendStreamTypingNotifications: false } })
    expectError(t, await as(app, quiet).post('/typing', { op: 'start', to: [member.id] }), { code: 'BAD_REQUEST', msg: 'User has disabled typing notifications for direct messages' })
    expectError(t, await as(app, quiet).post('/typing', { type: 'channel', op: 'start', stream_id: fx.streams.general.id, topic: 'x' }), {
      code: 'BAD_REQUEST',
      msg: 'User has disabled typing notifications for channel messages',
    })
  })

  t.test('answers the bare envelope', async (t) => {
    const body = expectSuccess(t, await as(app, member).post('/typing', { op: 'start', to: [otherMember.id] }))
    t.same(Object.keys(body).sort(), ['msg', 'result'])
  })
})
