import t from 'tap'
import { buildTestApp, makeFixture } from '../support/app.js'
import { as } from '../support/client.js'
import { expectError, expectSuccess } from '../support/expect.js'
import { captureEvents } from '../support/events.js'
import { send, sendTo } from './conversation-support.js'
import type { User } from '../../src/db/index.js'

const READ = 1

t.test('mark as read', async (t) => {
  const { app, fx, services } = await buildTestApp(t)
  const { owner, member, otherMember, guest } = fx.users
  const { general, design, secret } = fx.streams
  const prisma = services.prisma
  const unread = async (user: User) =>
    (await prisma.userMessage.findMany({ where: { userId: user.id }, orderBy: { messageId: 'asc' } })).filter((um) => (um.flags & READ) === 0).map((um) => um.messageId)
  const strip = (e: Record<string, unknown>) => {
    const { id: _id, ...rest } = e
    return rest
  }

  t.test('POST /mark_stream_as_read marks the channel only and lists the changed messages', async (t) => {
    const user = await fx.newUser()
    await prisma.subscription.create({ data: { userId: user.id, streamId: design.id, color: '#76ce90' } })
    const g = await sendTo(t, app, owner, 'general', 'g', 'x')
    const d1 = await sendTo(t, app, owner, 'design', 'a', 'x')
    const d2 = await sendTo(t, app, owner, 'design', 'b', 'x')
    const dm = await send(t, app, owner, { type: 'direct', to: JSON.stringify([user.id]), content: 'x' })
    t.same(await unread(user), [g, d1, d2, dm])
    const events = await captureEvents(app, user, async () => {
      t.same(expectSuccess(t, await as(app, user).post('/mark_stream_as_read', { stream_id: design.id })), { result: 'success', msg: '' })
    })
    t.same(events.map(strip), [{ type: 'update_message_flags', op: 'add', operation: 'add', flag: 'read', messages: [d1, d2], all: false }])
    t.same(await unread(user), [g, dm])
    const again = await captureEvents(app, user, () => as(app, user).post('/mark_stream_as_read', { stream_id: design.id }), { expectNone: true })
    t.same(again, [], 'nothing left to mark: no event')
  })

  t.test('POST /mark_topic_as_read marks one topic, whatever its case', async (t) => {
    const user = await fx.newUser()
    const a1 = await sendTo(t, app, owner, 'general', 'Lunch', 'x')
    const b = await sendTo(t, app, owner, 'general', 'other', 'x')
    const a2 = await sendTo(t, app, owner, 'general', 'lunch', 'x')
    const events = await captureEvents(app, user, async () => {
      expectSuccess(t, await as(app, user).post('/mark_topic_as_read', { stream_id: general.id, topic_name: 'LUNCH' }))
    })
    t.same(events.map(strip), [{ type: 'update_message_flags', op: 'add', operation: 'add', flag: 'read', messages: [a1, a2], all: false }])
    t.same(await unread(user), [b])
  })

  t.test('POST /mark_topic_as_read with an empty topic marks the whole channel, as upstream', async (t) => {
    const user = await fx.newUser()
    const ids = [await sendTo(t, app, owner, 'general', 'one', 'x'), await sendTo(t, app, owner, 'general', 'two', 'x')]
    t.same(await unread(user), ids)
    expectSuccess(t, await as(app, user).post('/mark_topic_as_read', { stream_id: general.id, topic_name: '' }))
    t.same(await unread(user), [])
  })

  t.test('POST /mark_topic_as_read of a topic the user has no message in', async (t) => {
    expectError(t, await as(app, member).post('/mark_topic_as_read', { stream_id: general.id, topic_name: 'never said' }), {
      code: 'BAD_REQUEST', status: 400, msg: "No such topic 'never said'",
    })
    const late = await fx.newUser()
    await sendTo(t, app, owner, 'secret', 'classified', 'x')
    await prisma.subscription.create({ data: { userId: late.id, streamId: secret.id, color: '#76ce90' } })
    expectError(t, await as(app, late).post('/mark_topic_as_read', { stream_id: secret.id, topic_name: 'classified' }), {
      code: 'BAD_REQUEST', msg: "No such topic 'classified'",
    })
  })

  t.test('channel access: private channels not joined, guests, unknown and foreign IDs', async (t) => {
    const invalid = { code: 'BAD_REQUEST', status: 400, msg: 'Invalid channel ID' }
    expectError(t, await as(app, otherMember).post('/mark_stream_as_read', { stream_id: secret.id }), invalid)
    expectError(t, await as(app, fx.users.admin).post('/mark_stream_as_read', { stream_id: secret.id }), invalid)
    expectError(t, await as(app, guest).post('/mark_stream_as_read', { stream_id: design.id }), invalid)
    expectError(t, await as(app, otherMember).post('/mark_topic_as_read', { stream_id: secret.id, topic_name: 'classified' }), invalid)
    expectError(t, await as(app, member).post('/mark_stream_as_read', { stream_id: 999999999 }), invalid)
    const other = await makeFixture(services)
    expectError(t, await as(app, other.users.member).post('/mark_stream_as_read', { stream_id: general.id }), invalid)
    expectSuccess(t, await as(app, guest).post('/mark_stream_as_read', { stream_id: general.id }))
  })

  t.test('bad parameters name the parameter', async (t) => {
    expectError(t, await as(app, member).post('/mark_stream_as_read', {}), { code: 'REQUEST_VARIABLE_MISSING', msg: "Missing 'stream_id' argument" })
    t.match(expectError(t, await as(app, member).post('/mark_stream_as_read', { stream_id: 'x' }), { code: 'BAD_REQUEST' }).msg, /stream_id/)
    expectError(t, await as(app, member).post('/mark_topic_as_read', { stream_id: general.id }), { code: 'REQUEST_VARIABLE_MISSING', msg: "Missing 'topic_name' argument" })
    t.match(expectError(t, await as(app, member).post('/mark_topic_as_read', { stream_id: general.id, topic_name: 'x'.repeat(61) }), { code: 'BAD_REQUEST' }).msg, /topic_name/)
  })

  t.test('POST /mark_all_as_read marks everything, answers complete, and tells the clients to reload', async (t) => {
    const user = await fx.newUser()
    await sendTo(t, app, owner, 'general', 'g', 'x')
    await send(t, app, owner, { type: 'direct', to: JSON.stringify([user.id]), content: 'x' })
    t.equal((await unread(user)).length, 2)
    const events = await captureEvents(app, user, async () => {
      t.same(expectSuccess(t, await as(app, user).post('/mark_all_as_read')), { result: 'success', msg: '', complete: true })
    })
    t.same(events.map(strip), [{ type: 'update_message_flags', op: 'add', operation: 'add', flag: 'read', messages: [], all: true }])
    t.same(await unread(user), [])
    const reg = expectSuccess(t, await as(app, user).post('/register', { fetch_event_types: ['message', 'update_message_flags'] }))
    t.equal(reg.unread_msgs.count, 0)
    // Nothing to do still answers complete, with the event.
    const again = await captureEvents(app, user, () => as(app, user).post('/mark_all_as_read'))
    t.match(again, [{ type: 'update_message_flags', all: true, messages: [] }])
    t.same(await unread(otherMember).then((ids) => ids.length > 0), true, 'other users keep their unread messages')
  })

  t.test('bots may mark too; unauthenticated requests may not', async (t) => {
    expectSuccess(t, await as(app, fx.users.bot).post('/mark_all_as_read'))
    const res = await app.inject({ method: 'POST', url: '/api/v1/mark_all_as_read', headers: { host: fx.host } })
    t.equal(res.statusCode, 401)
  })
})
