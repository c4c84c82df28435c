import t from 'tap'
import { buildTestApp } from '../support/app.js'
import { realmSetter } from '../support/realm-settings.js'
import { as } from '../support/client.js'
import { expectError, expectSuccess } from '../support/expect.js'
import { capture, ofType, openQueue, eventsOf, send, sendTo } from './conversation-support.js'

t.test('DELETE /messages/{id}', async (t) => {
  const { app, fx, services } = await buildTestApp(t)
  const { owner, admin, moderator, member, otherMember, bot } = fx.users
  const { general } = fx.streams
  const prisma = services.prisma
  const setRealm = realmSetter(app, owner, prisma, fx.realm.id)
  const age = (id: number, seconds: number) => prisma.message.update({ where: { id }, data: { dateSent: new Date(Date.now() - seconds * 1000) } })
  const exists = async (id: number) => (await prisma.message.count({ where: { id } })) === 1

  t.test('administrators delete anything; the channel hears it in bulk form', async (t) => {
    const id = await sendTo(t, app, member, 'general', 'doomed', 'bye')
    const events = await capture(t, app, [member, otherMember], () => as(app, admin).delete(`/messages/${id}`))
    t.notOk(await exists(id))
    t.same(ofType(events.get(otherMember.id), 'delete_message').map(({ id: _id, ...e }) => e), [
      { type: 'delete_message', message_ids: [id], message_type: 'stream', stream_id: general.id, topic: 'doomed' },
    ])
    expectError(t, await as(app, admin).delete(`/messages/${id}`), { code: 'BAD_REQUEST', msg: 'Invalid message(s)' })
  })

  t.test('queues without bulk_message_deletion get one event per message', async (t) => {
    const id = await sendTo(t, app, member, 'general', 'legacy', 'bye')
    const q = await openQueue(t, app, otherMember, { client_capabilities: {} })
    expectSuccess(t, await as(app, member).delete(`/messages/${id}`))
    t.match(ofType(await eventsOf(t, app, q), 'delete_message'), [{ type: 'delete_message', message_id: id, message_type: 'stream', stream_id: general.id, topic: 'legacy' }])
  })

  t.test('direct messages: the participants hear it, without a topic', async (t) => {
    const id = await send(t, app, member, { type: 'direct', to: JSON.stringify([otherMember.id]), content: 'psst' })
    const events = await capture(t, app, [otherMember, owner], () => as(app, member).delete(`/messages/${id}`))
    t.match(ofType(events.get(otherMember.id), 'delete_message'), [{ message_ids: [id], message_type: 'private' }])
    t.notOk('topic' in (ofType(events.get(otherMember.id), 'delete_message')[0] ?? {}))
    t.same(ofType(events.get(owner.id), 'delete_message'), [])
  })

  t.test('senders delete their own and their bots’ messages within the limit, if the policy allows', async (t) => {
    const theirs = await sendTo(t, app, otherMember, 'general', 'own', 'x')
    expectError(t, await as(app, member).delete(`/messages/${theirs}`), { code: 'BAD_REQUEST', msg: "You don't have permission to delete this message" })
    expectError(t, await as(app, moderator).delete(`/messages/${theirs}`), { code: 'BAD_REQUEST', msg: "You don't have permission to delete this message" })
    const byBot = await sendTo(t, app, bot, 'general', 'own', 'beep')
    expectSuccess(t, await as(app, member).delete(`/messages/${byBot}`))
    const mine = await sendTo(t, app, member, 'general', 'own', 'x')
    await age(mine, 601)
    expectError(t, await as(app, member).delete(`/messages/${mine}`), { code: 'BAD_REQUEST', msg: 'The time limit for deleting this message has passed' })
    await setRealm({ messageContentDeleteLimitSeconds: null })
    expectSuccess(t, await as(app, member).delete(`/messages/${mine}`))
    const again = await sendTo(t, app, member, 'general', 'own', 'x')
    await setRealm({ deleteOwnMessagePolicy: 2 })
    expectError(t, await as(app, member).delete(`/messages/${again}`), { code: 'BAD_REQUEST', msg: "You don't have permission to delete this message" })
    await setRealm({ deleteOwnMessagePolicy: 4 })
    const modOwn = await sendTo(t, app, moderator, 'general', 'own', 'x')
    expectSuccess(t, await as(app, moderator).delete(`/messages/${modOwn}`))
    await setRealm({ deleteOwnMessagePolicy: 5, messageContentDeleteLimitSeconds: 600 })
    t.ok(await exists(again))
  })

  t.test("deleting a channel's first message moves first_message_id", async (t) => {
    const fresh = await prisma.stream.create({ data: { realmId: fx.realm.id, name: 'fresh', canRemoveSubscribersGroupId: general.canRemoveSubscribersGroupId } })
    await prisma.subscription.createMany({ data: [member, otherMember].map((u) => ({ userId: u.id, streamId: fresh.id, color: '#111111' })) })
    const a = await sendTo(t, app, member, 'fresh', 'f', '1')
    const b = await sendTo(t, app, member, 'fresh', 'f', '2')
    const events = await capture(t, app, [otherMember], () => as(app, owner).delete(`/messages/${a}`))
    t.match(ofType(events.get(otherMember.id), 'stream'), [{ op: 'update', property: 'first_message_id', value: b, stream_id: fresh.id, name: 'fresh' }])
    t.equal((await prisma.stream.findUniqueOrThrow({ where: { id: fresh.id } })).firstMessageId, b)
  })

  t.test('first_message_id of a private channel reaches its subscribers and the administrators, who list it too', async (t) => {
    const hidden = await prisma.stream.create({
      data: { realmId: fx.realm.id, name: 'hidden-first', inviteOnly: true, historyPublicToSubscribers: false, canRemoveSubscribersGroupId: general.canRemoveSubscribersGroupId },
    })
    await prisma.subscription.create({ data: { userId: member.id, streamId: hidden.id, color: '#111111' } })
    const a = await sendTo(t, app, member, 'hidden-first', 'f', '1')
    const b = await sendTo(t, app, member, 'hidden-first', 'f', '2')
    const events = await capture(t, app, [member, admin, otherMember], () => as(app, member).delete(`/messages/${a}`))
    const update = { type: 'stream', op: 'update', property: 'first_message_id', value: b, stream_id: hidden.id, name: 'hidden-first' }
    for (const user of [member, admin]) t.same(ofType(events.get(user.id), 'stream').map(({ id: _id, ...e }) => e), [update])
    t.same(ofType(events.get(otherMember.id), 'stream'), [], 'not to users who cannot see the channel')
  })
})
