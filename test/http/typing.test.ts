import t from 'tap'
import { buildTestApp } from '../support/app.js'
import { as } from '../support/client.js'
import { expectError, expectSuccess } from '../support/expect.js'
import { captureEvents, MODERN_CAPABILITIES } from '../support/events.js'
import { checkStateAfter } from '../support/state-check.js'

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

t.test('POST /messages/{id}/typing and POST /message_edit_typing (levels 351, 361)', async (t) => {
  const { app, fx, services } = await buildTestApp(t)
  const { owner, member, otherMember, guest } = fx.users
  const { general, secret } = fx.streams
  const send = async (params: Record<string, unknown>): Promise<number> => expectSuccess(t, await as(app, member).post('/messages', params)).id as number
  const inGeneral = await send({ type: 'stream', to: 'general', topic: 'drafts', content: 'first take' })
  const inSecret = await send({ type: 'stream', to: 'secret', topic: 'plans', content: 'hush' })
  const direct = await send({ type: 'direct', to: JSON.stringify([otherMember.id]), content: 'hello' })
  const withoutIds = (events: { id?: number }[]) => events.map(({ id: _id, ...e }) => e)
  const register = { register: { event_types: ['typing_edit_message'] } }

  t.test('a channel message: the subscribers hear, with the channel and topic', async (t) => {
    const events = await captureEvents(app, otherMember, () => as(app, member).post(`/messages/${inGeneral}/typing`, { op: 'start' }), register)
    t.strictSame(withoutIds(events), [
      { type: 'typing_edit_message', op: 'start', sender_id: member.id, message_id: inGeneral, recipient: { type: 'channel', channel_id: general.id, topic: 'drafts' } },
    ])
    const stop = await captureEvents(app, member, () => as(app, member).post('/message_edit_typing', { op: 'stop', message_id: inGeneral }), register)
    t.strictSame(withoutIds(stop), [
      { type: 'typing_edit_message', op: 'stop', sender_id: member.id, message_id: inGeneral, recipient: { type: 'channel', channel_id: general.id, topic: 'drafts' } },
    ], 'the level-351 spelling, heard by the sender too')
    const outside = await captureEvents(app, otherMember, () => as(app, member).post(`/messages/${inSecret}/typing`, { op: 'start' }), { ...register, expectNone: true })
    t.same(outside, [], 'not subscribed to the channel: nothing')
    const owners = await captureEvents(app, owner, () => as(app, member).post(`/messages/${inSecret}/typing`, { op: 'start' }), register)
    t.strictSame(withoutIds(owners), [
      { type: 'typing_edit_message', op: 'start', sender_id: member.id, message_id: inSecret, recipient: { type: 'channel', channel_id: secret.id, topic: 'plans' } },
    ])
  })

  t.test('a direct message: its participants hear, named in user_ids', async (t) => {
    const events = await captureEvents(app, otherMember, () => as(app, member).post(`/messages/${direct}/typing`, { op: 'start' }), register)
    t.strictSame(withoutIds(events), [
      { type: 'typing_edit_message', op: 'start', sender_id: member.id, message_id: direct, recipient: { type: 'direct', user_ids: [member.id, otherMember.id].sort((a, b) => a - b) } },
    ])
    await services.prisma.userSettings.update({ where: { userId: otherMember.id }, data: { receivesTypingNotifications: false } })
    t.teardown(() => services.prisma.userSettings.update({ where: { userId: otherMember.id }, data: { receivesTypingNotifications: true } }))
    const mine = await captureEvents(app, member, () => as(app, member).post(`/messages/${direct}/typing`, { op: 'stop' }), register)
    t.strictSame(withoutIds(mine), [
      { type: 'typing_edit_message', op: 'stop', sender_id: member.id, message_id: direct, recipient: { type: 'direct', user_ids: [member.id] } },
    ], 'those who turned typing notifications off are neither told nor named')
  })

  t.test("only someone who may edit the message's content now; upstream's errors", async (t) => {
    expectError(t, await as(app, otherMember).post(`/messages/${inGeneral}/typing`, { op: 'start' }), { code: 'BAD_REQUEST', msg: "You don't have permission to edit this message" })
    expectError(t, await as(app, guest).post(`/messages/${inSecret}/typing`, { op: 'start' }), { code: 'BAD_REQUEST', msg: 'Invalid message(s)' })
    expectError(t, await as(app, member).post('/messages/99999999/typing', { op: 'start' }), { code: 'BAD_REQUEST', msg: 'Invalid message(s)' })
    expectError(t, await as(app, member).post(`/messages/${inGeneral}/typing`, { op: 'begin' }), { code: 'BAD_REQUEST' })
    expectError(t, await as(app, member).post(`/messages/${inGeneral}/typing`, {}), { code: 'REQUEST_VARIABLE_MISSING', msg: "Missing 'op' argument" })
    expectError(t, await as(app, member).post('/message_edit_typing', { op: 'start' }), { code: 'REQUEST_VARIABLE_MISSING', msg: "Missing 'message_id' argument" })
    await services.prisma.realm.update({ where: { id: fx.realm.id }, data: { messageContentEditLimitSeconds: 60 } })
    t.teardown(() => services.prisma.realm.update({ where: { id: fx.realm.id }, data: { messageContentEditLimitSeconds: 600 } }))
    await services.prisma.message.update({ where: { id: inGeneral }, data: { dateSent: new Date(Date.now() - 70_000) } })
    expectError(t, await as(app, member).post(`/messages/${inGeneral}/typing`, { op: 'start' }), {
      code: 'BAD_REQUEST',
      msg: 'The time limit for editing this message has passed',
    })
    expectSuccess(t, await as(app, member).patch(`/messages/${inGeneral}`, { content: 'within the grace an edit still has' }))
    await services.prisma.userSettings.update({ where: { userId: member.id }, data: { sendPrivateTypingNotifications: false, sendStreamTypingNotifications: false } })
    t.teardown(() => services.prisma.userSettings.update({ where: { userId: member.id }, data: { sendPrivateTypingNotifications: true, sendStreamTypingNotifications: true } }))
    expectError(t, await as(app, member).post(`/messages/${direct}/typing`, { op: 'start' }), { code: 'BAD_REQUEST', msg: 'User has disabled typing notifications for direct messages' })
    expectError(t, await as(app, member).post(`/messages/${inSecret}/typing`, { op: 'start' }), { code: 'BAD_REQUEST', msg: 'User has disabled typing notifications for channel messages' })
  })

  t.test('the events change no register state', async (t) => {
    const events = await checkStateAfter(t, app, member, () => as(app, member).post(`/messages/${direct}/typing`, { op: 'start' }))
    t.same(events.filter((e) => e.type === 'typing_edit_message').length, 1)
  })

  t.test('answers the bare envelope', async (t) => {
    t.same(expectSuccess(t, await as(app, member).post(`/messages/${direct}/typing`, { op: 'stop' })), { result: 'success', msg: '' })
  })
})
