import t from 'tap'
import { buildTestApp } from '../support/app.js'
import { as } from '../support/client.js'
import { expectError, expectSuccess } from '../support/expect.js'
import type { Services } from '../../src/services.js'
import type { CapturedBusItem as BusItem } from '../support/events.js'
import { deliverDue, startScheduledDelivery } from '../../src/scheduler/delivery.js'
import { busItemsDuring } from '../support/events.js'
import { MAX_SCHEDULED_MESSAGES_PER_USER } from '../../src/domain/limits.js'

/** Bus items published while `fn` runs (and any delivery it awaits). */
const capture = busItemsDuring

const inAnHour = () => Math.floor(Date.now() / 1000) + 3600
const ofType = (items: BusItem[], type: string) => items.filter((i) => i.event.type === type)

t.test('scheduled messages', async (t) => {
  const { app, fx, services } = await buildTestApp(t)
  const { member, otherMember } = fx.users
  const { general, secret } = fx.streams
  const log = app.log
  /** Runs delivery as if the clock were `seconds` later. */
  const deliverAt = (seconds: number) => deliverDue({ ...services, now: () => new Date(seconds * 1000) }, { log, realmIds: [fx.realm.id] })

  t.test('POST schedules a channel message, GET lists it and the sender is told', async (t) => {
    const user = await fx.newUser()
    const at = inAnHour()
    const { result, items } = await capture(services, () =>
      as(app, user).post('/scheduled_messages', { type: 'stream', to: general.id, topic: 'plans', content: 'Hello **all**', scheduled_delivery_timestamp: at }),
    )
    const id = expectSuccess(t, result).scheduled_message_id
    t.type(id, 'number')
    const list = expectSuccess(t, await as(app, user).get('/scheduled_messages')).scheduled_messages
    const expected = { scheduled_message_id: id, type: 'stream', to: general.id, topic: 'plans', content: 'Hello **all**', rendered_content: '<p>Hello <strong>all</strong></p>', scheduled_delivery_timestamp: at, failed: false }
    t.same(list, [expected])
    const events = ofType(items, 'scheduled_messages')
    t.equal(events.length, 1)
    t.same(events[0]?.userIds, [user.id])
    t.same(events[0]?.event, { type: 'scheduled_messages', op: 'add', scheduled_messages: [expected] })
  })

  t.test('accepts every message type name', async (t) => {
    const user = await fx.newUser()
    for (const type of ['channel', 'stream']) {
      expectSuccess(t, await as(app, user).post('/scheduled_messages', { type, to: general.id, topic: 't', content: type, scheduled_delivery_timestamp: inAnHour() }))
    }
    for (const type of ['direct', 'private']) {
      expectSuccess(t, await as(app, user).post('/scheduled_messages', { type, to: [otherMember.id, user.id], content: type, scheduled_delivery_timestamp: inAnHour() }))
    }
    const list = expectSuccess(t, await as(app, user).get('/scheduled_messages')).scheduled_messages
    t.same(list.map((m: { type: string }) => m.type), ['stream', 'stream', 'private', 'private'])
    t.same(list[2].to, [otherMember.id], 'direct recipients exclude the sender')
    t.notOk('topic' in list[2])
    expectError(t, await as(app, user).post('/scheduled_messages', { type: 'huddle', to: [otherMember.id], content: 'x', scheduled_delivery_timestamp: inAnHour() }), { code: 'BAD_REQUEST' })
  })

  t.test('a note to self lists the sender as recipient', async (t) => {
    const user = await fx.newUser()
    expectSuccess(t, await as(app, user).post('/scheduled_messages', { type: 'direct', to: [user.id], content: 'me', scheduled_delivery_timestamp: inAnHour() }))
    t.same(expectSuccess(t, await as(app, user).get('/scheduled_messages')).scheduled_messages[0].to, [user.id])
  })

  t.test('an unknown channel is STREAM_DOES_NOT_EXIST with stream_id', async (t) => {
    const body = expectError(t, await as(app, member).post('/scheduled_messages', { type: 'channel', to: 999999, topic: 't', content: 'x', scheduled_delivery_timestamp: inAnHour() }), {
      code: 'STREAM_DOES_NOT_EXIST', status: 400, msg: "Channel with ID '999999' does not exist",
    })
    t.equal(body.stream_id, 999999)
  })

  t.test('an unknown user is BAD_REQUEST', async (t) => {
    expectError(t, await as(app, member).post('/scheduled_messages', { type: 'direct', to: [999999], content: 'x', scheduled_delivery_timestamp: inAnHour() }), {
      code: 'BAD_REQUEST', status: 400, msg: 'Invalid user ID 999999',
    })
  })

  t.test('the delivery time must be in the future', async (t) => {
    for (const at of [Math.floor(Date.now() / 1000) - 10, 0]) {
      expectError(t, await as(app, member).post('/scheduled_messages', { type: 'channel', to: general.id, topic: 't', content: 'x', scheduled_delivery_timestamp: at }), {
        code: 'BAD_REQUEST', status: 400, msg: 'Scheduled delivery time must be in the future.',
      })
    }
  })

  t.test('checks the addressee and content as a send does', async (t) => {
    const base = { scheduled_delivery_timestamp: inAnHour() }
    expectError(t, await as(app, member).post('/scheduled_messages', { ...base, type: 'channel', to: general.id, content: 'x' }), { code: 'BAD_REQUEST', msg: 'Missing topic' })
    expectError(t, await as(app, member).post('/scheduled_messages', { ...base, type: 'channel', to: general.id, topic: 't', content: '  ' }), { code: 'BAD_REQUEST', msg: 'Message must not be empty' })
    expectError(t, await as(app, member).post('/scheduled_messages', { ...base, type: 'channel', to: [general.id, secret.id], topic: 't', content: 'x' }), { code: 'BAD_REQUEST' })
    expectError(t, await as(app, otherMember).post('/scheduled_messages', { ...base, type: 'channel', to: secret.id, topic: 't', content: 'x' }), { code: 'BAD_REQUEST', msg: "Not authorized to send to channel 'secret'" })
    expectError(t, await as(app, member).post('/scheduled_messages', { ...base, type: 'channel', topic: 't', content: 'x' }), { code: 'REQUEST_VARIABLE_MISSING', msg: "Missing 'to' argument" })
    expectError(t, await as(app, member).post('/scheduled_messages', { ...base, type: 'channel', to: 'general', topic: 't', content: 'x' }), { code: 'BAD_REQUEST' })
  })

  t.test('content and topic are cut to the message limits', async (t) => {
    const user = await fx.newUser()
    expectSuccess(t, await as(app, user).post('/scheduled_messages', { type: 'channel', to: general.id, topic: 'y'.repeat(80), content: 'x'.repeat(10_050), scheduled_delivery_timestamp: inAnHour() }))
    const [m] = expectSuccess(t, await as(app, user).get('/scheduled_messages')).scheduled_messages
    t.equal(Array.from(m.topic as string).length, 60)
    t.ok((m.topic as string).endsWith('...'))
    t.equal((m.content as string).length, 10_000)
    t.ok((m.content as string).endsWith('[message truncated]'))
  })

  t.test('read_by_sender follows the client and the recipient when omitted', async (t) => {
    const user = await fx.newUser()
    const post = (params: Record<string, unknown>, agent: string) =>
      as(app, user).request('POST', '/scheduled_messages', { content: 'x', scheduled_delivery_timestamp: inAnHour(), ...params }, { headers: { 'user-agent': agent } })
    const ids = [
      expectSuccess(t, await post({ type: 'direct', to: [otherMember.id] }, 'ZulipMobile/1.0')).scheduled_message_id,
      expectSuccess(t, await post({ type: 'direct', to: [user.id] }, 'ZulipMobile/1.0')).scheduled_message_id,
      expectSuccess(t, await post({ type: 'direct', to: [otherMember.id] }, 'python-requests/2')).scheduled_message_id,
      expectSuccess(t, await post({ type: 'direct', to: [otherMember.id], read_by_sender: true }, 'python-requests/2')).scheduled_message_id,
    ]
    const rows = await services.prisma.scheduledMessage.findMany({ where: { id: { in: ids } }, orderBy: { id: 'asc' } })
    t.same(rows.map((r) => r.readBySender), [true, false, false, true])
  })

  t.test('PATCH edits and tells the sender; its rules', async (t) => {
    const user = await fx.newUser()
    const id = expectSuccess(t, await as(app, user).post('/scheduled_messages', { type: 'direct', to: [otherMember.id], content: 'old', scheduled_delivery_timestamp: inAnHour() })).scheduled_message_id
    const path = `/scheduled_messages/${id}`
    expectError(t, await as(app, user).patch(path, {}), { code: 'BAD_REQUEST', msg: 'Nothing to change' })
    expectError(t, await as(app, user).patch(path, { type: 'stream' }), { code: 'BAD_REQUEST', msg: 'Recipient required when updating type of scheduled message.' })
    expectError(t, await as(app, user).patch(path, { type: 'channel', to: general.id }), { code: 'BAD_REQUEST', msg: 'Topic required when updating scheduled message type to channel.' })
    expectError(t, await as(app, user).patch(path, { scheduled_delivery_timestamp: 1000 }), { code: 'BAD_REQUEST', msg: 'Scheduled delivery time must be in the future.' })
    expectError(t, await as(app, user).patch('/scheduled_messages/999999', { content: 'x' }), { code: 'BAD_REQUEST', status: 404, msg: 'Scheduled message does not exist' })
    expectError(t, await as(app, member).patch(path, { content: 'x' }), { code: 'BAD_REQUEST', status: 404, msg: 'Scheduled message does not exist' })

    const at = inAnHour() + 60
    const { result, items } = await capture(services, () => as(app, user).patch(path, { type: 'channel', to: general.id, topic: 'moved', content: 'new', scheduled_delivery_timestamp: at }))
    expectSuccess(t, result)
    const expected = { scheduled_message_id: id, type: 'stream', to: general.id, topic: 'moved', content: 'new', rendered_content: '<p>new</p>', scheduled_delivery_timestamp: at, failed: false }
    t.same(expectSuccess(t, await as(app, user).get('/scheduled_messages')).scheduled_messages, [expected])
    t.same(ofType(items, 'scheduled_messages').map((i) => i.event), [{ type: 'scheduled_messages', op: 'update', scheduled_message: expected }])

    expectSuccess(t, await as(app, user).patch(path, { topic: 'renamed' }))
    t.equal(expectSuccess(t, await as(app, user).get('/scheduled_messages')).scheduled_messages[0].topic, 'renamed')
  })

  t.test('DELETE removes and tells the sender', async (t) => {
    const user = await fx.newUser()
    const id = expectSuccess(t, await as(app, user).post('/scheduled_messages', { type: 'direct', to: [otherMember.id], content: 'x', scheduled_delivery_timestamp: inAnHour() })).scheduled_message_id
    expectError(t, await as(app, member).delete(`/scheduled_messages/${id}`), { code: 'BAD_REQUEST', status: 404, msg: 'Scheduled message does not exist' })
    const { result, items } = await capture(services, () => as(app, user).delete(`/scheduled_messages/${id}`))
    expectSuccess(t, result)
    t.same(ofType(items, 'scheduled_messages').filter((i) => i.userIds.includes(user.id)).map((i) => i.event), [{ type: 'scheduled_messages', op: 'remove', scheduled_message_id: id }])
    t.same(expectSuccess(t, await as(app, user).get('/scheduled_messages')).scheduled_messages, [])
    expectError(t, await as(app, user).delete(`/scheduled_messages/${id}`), { code: 'BAD_REQUEST', status: 404 })
  })

  t.test(`at most ${MAX_SCHEDULED_MESSAGES_PER_USER} scheduled messages waiting per user`, async (t) => {
    const user = await fx.newUser()
    const row = (i: number, extra: Record<string, unknown> = {}) => ({
      realmId: fx.realm.id, senderId: user.id, recipientType: 'stream', streamId: general.id, topic: 'later', content: `m${i}`,
      renderedContent: `<p>m${i}</p>`, scheduledTimestamp: new Date(inAnHour() * 1000), ...extra,
    })
    // Failed ones wait too (the sender may reschedule them); delivered ones do not count.
    await services.prisma.scheduledMessage.createMany({
      data: [
        ...Array.from({ length: MAX_SCHEDULED_MESSAGES_PER_USER - 2 }, (_, i) => row(i)),
        row(-1, { failed: true, failureMessage: 'gone' }),
        ...Array.from({ length: 5 }, (_, i) => row(1000 + i, { delivered: true })),
      ],
    })
    const schedule = () => as(app, user).post('/scheduled_messages', { type: 'stream', to: general.id, topic: 'later', content: 'one more', scheduled_delivery_timestamp: inAnHour() })
    const id = expectSuccess(t, await schedule()).scheduled_message_id as number
    const msg = `You can have at most ${MAX_SCHEDULED_MESSAGES_PER_USER} scheduled messages.`
    const { result, items } = await capture(services, schedule)
    expectError(t, result, { code: 'BAD_REQUEST', status: 400, msg })
    t.same(items, [], 'no event')
    t.equal(expectSuccess(t, await as(app, user).get('/scheduled_messages')).scheduled_messages.length, MAX_SCHEDULED_MESSAGES_PER_USER)
    t.equal(expectSuccess(t, await as(app, user).patch(`/scheduled_messages/${id}`, { content: 'edited' })).result, 'success', 'editing at the cap is fine')
    expectSuccess(t, await as(app, user).delete(`/scheduled_messages/${id}`))
    t.type(expectSuccess(t, await schedule()).scheduled_message_id, 'number', 'a deleted one makes room')
  })

  t.test('register includes scheduled_messages', async (t) => {
    const user = await fx.newUser()
    expectSuccess(t, await as(app, user).post('/scheduled_messages', { type: 'direct', to: [otherMember.id], content: 'x', scheduled_delivery_timestamp: inAnHour() }))
    const state = expectSuccess(t, await as(app, user).post('/register', { fetch_event_types: ['scheduled_messages'] }))
    t.match(state.scheduled_messages, [{ type: 'private', to: [otherMember.id], content: 'x' }])
  })

  t.test('delivery sends a real message with its events and flags, then removes the scheduled one', async (t) => {
    const user = await fx.newUser()
    const at = inAnHour()
    const id = expectSuccess(t, await as(app, user).post('/scheduled_messages', { type: 'direct', to: [otherMember.id], content: 'on time', scheduled_delivery_timestamp: at, read_by_sender: true })).scheduled_message_id
    const { result: settled, items } = await capture(services, () => deliverAt(at))
    t.ok(settled >= 1)
    const row = await services.prisma.scheduledMessage.findUniqueOrThrow({ where: { id } })
    t.ok(row.delivered)
    t.notOk(row.failed)
    const message = await services.prisma.message.findUniqueOrThrow({ where: { id: row.deliveredMessageId ?? 0 } })
    t.equal(message.content, 'on time')
    t.equal(message.senderId, user.id)
    const messageEvents = ofType(items, 'message').filter((i) => (i.event.message as { id: number }).id === message.id)
    t.equal(messageEvents.length, 1)
    t.same(messageEvents[0]?.userIds, [otherMember.id, user.id].sort((a, b) => a - b))
    t.same(messageEvents[0]?.perUser?.[user.id]?.flags, ['read'])
    t.same(messageEvents[0]?.perUser?.[otherMember.id]?.flags, [])
    t.same(ofType(items, 'scheduled_messages').filter((i) => i.userIds.includes(user.id)).map((i) => i.event), [{ type: 'scheduled_messages', op: 'remove', scheduled_message_id: id }])
    t.same(expectSuccess(t, await as(app, user).get('/scheduled_messages')).scheduled_messages, [])
    expectError(t, await as(app, user).patch(`/scheduled_messages/${id}`, { content: 'late edit' }), { code: 'BAD_REQUEST', msg: 'Scheduled message was already sent' })
    t.equal(await deliverAt(at), 0, 'nothing is delivered twice')
  })

  t.test('a message whose channel was archived fails and the notification bot tells the sender', async (t) => {
    const user = await fx.newUser()
    const stream = await services.prisma.stream.create({ data: { realmId: fx.realm.id, name: `doomed-${user.id}`, canRemoveSubscribersGroupId: general.canRemoveSubscribersGroupId, dateCreated: new Date() } })
    const at = inAnHour()
    const id = expectSuccess(t, await as(app, user).post('/scheduled_messages', { type: 'channel', to: stream.id, topic: 't', content: 'x', scheduled_delivery_timestamp: at })).scheduled_message_id
    await services.prisma.stream.update({ where: { id: stream.id }, data: { deactivated: true } })
    const { items } = await capture(services, () => deliverAt(at))
    const row = await services.prisma.scheduledMessage.findUniqueOrThrow({ where: { id } })
    t.ok(row.failed)
    t.notOk(row.delivered)
    t.equal(row.failureMessage, `Not authorized to send to channel 'doomed-${user.id}'`)
    t.match(ofType(items, 'scheduled_messages').filter((i) => i.userIds.includes(user.id)).map((i) => i.event), [{ type: 'scheduled_messages', op: 'update', scheduled_message: { scheduled_message_id: id, failed: true } }])
    const dm = ofType(items, 'message').filter((i) => i.userIds.includes(user.id)).map((i) => i.event.message as { sender_id: number; content: string; display_recipient: { id: number }[] })
    t.equal(dm.length, 1)
    t.equal(dm[0]?.sender_id, fx.notificationBot.id)
    t.match(dm[0]?.content, /was not sent because of the following error/)
    t.match(dm[0]?.content, /Not authorized to send to channel/)
    const listed = expectSuccess(t, await as(app, user).get('/scheduled_messages')).scheduled_messages
    t.match(listed, [{ scheduled_message_id: id, failed: true }], 'failed messages stay listed')

    // Editing a failed message clears the failure, but only for a delivery time still ahead.
    await services.prisma.scheduledMessage.update({ where: { id }, data: { scheduledTimestamp: new Date(Date.now() - 60_000) } })
    expectError(t, await as(app, user).patch(`/scheduled_messages/${id}`, { to: general.id, topic: 't' }), { code: 'BAD_REQUEST', msg: 'Scheduled delivery time must be in the future.' })
    expectSuccess(t, await as(app, user).patch(`/scheduled_messages/${id}`, { to: general.id, topic: 't', scheduled_delivery_timestamp: inAnHour() }))
    t.match(expectSuccess(t, await as(app, user).get('/scheduled_messages')).scheduled_messages, [{ scheduled_message_id: id, to: general.id, failed: false }])
  })

  t.test('a message whose sender lost access to the channel fails', async (t) => {
    const user = await fx.newUser()
    await services.prisma.subscription.create({ data: { userId: user.id, streamId: secret.id, color: '#ffffff' } })
    const at = inAnHour()
    const id = expectSuccess(t, await as(app, user).post('/scheduled_messages', { type: 'channel', to: secret.id, topic: 't', content: 'x', scheduled_delivery_timestamp: at })).scheduled_message_id
    await services.prisma.subscription.deleteMany({ where: { userId: user.id, streamId: secret.id } })
    await deliverAt(at)
    const row = await services.prisma.scheduledMessage.findUniqueOrThrow({ where: { id } })
    t.ok(row.failed)
    t.equal(row.failureMessage, "Not authorized to send to channel 'secret'")
  })

  t.test('a deactivated sender fails without a notification', async (t) => {
    const user = await fx.newUser()
    const at = inAnHour()
    const id = expectSuccess(t, await as(app, user).post('/scheduled_messages', { type: 'direct', to: [otherMember.id], content: 'x', scheduled_delivery_timestamp: at })).scheduled_message_id
    await services.prisma.user.update({ where: { id: user.id }, data: { isActive: false } })
    const { items } = await capture(services, () => deliverAt(at))
    const row = await services.prisma.scheduledMessage.findUniqueOrThrow({ where: { id } })
    t.ok(row.failed)
    t.equal(row.failureMessage, 'Account is deactivated')
    t.equal(ofType(items, 'message').filter((i) => i.userIds.includes(user.id)).length, 0)
  })

  t.test('a message more than ten minutes late fails', async (t) => {
    const user = await fx.newUser()
    const at = inAnHour()
    const id = expectSuccess(t, await as(app, user).post('/scheduled_messages', { type: 'direct', to: [otherMember.id], content: 'x', scheduled_delivery_timestamp: at })).scheduled_message_id
    await deliverAt(at + 11 * 60)
    const row = await services.prisma.scheduledMessage.findUniqueOrThrow({ where: { id } })
    t.ok(row.failed)
    t.equal(row.failureMessage, 'Message could not be sent at the scheduled time.')
  })

  t.test('the worker delivers within a second of the timestamp', async (t) => {
    const user = await fx.newUser()
    const at = Math.floor(Date.now() / 1000) + 2
    const id = expectSuccess(t, await as(app, user).post('/scheduled_messages', { type: 'direct', to: [otherMember.id], content: 'prompt', scheduled_delivery_timestamp: at })).scheduled_message_id
    const removed = new Promise<number>((resolve) => {
      const off = services.bus.subscribe((item) => {
        if (item.event.type === 'scheduled_messages' && item.event.op === 'remove' && item.event.scheduled_message_id === id) {
          off()
          resolve(Date.now())
        }
      })
    })
    const worker = startScheduledDelivery(services, { log, realmIds: [fx.realm.id] })
    t.teardown(() => worker.stop())
    const timeout = new Promise<never>((_, reject) => setTimeout(() => reject(new Error('not delivered in time')), 10_000).unref())
    const deliveredAt = await Promise.race([removed, timeout])
    t.ok(deliveredAt - at * 1000 < 1000, `delivered ${deliveredAt - at * 1000} ms after the timestamp`)
    t.ok(deliveredAt >= at * 1000, 'not before the timestamp')
    await worker.stop()
  })
})
