// A channel's first message sets its first_message_id, and everyone whose
// register lists the channel hears of it through a `stream` update event
// (the shape upstream sends when a deletion moves first_message_id), so that
// clients not subscribed — who get no message event — match a fresh register.
import t from 'tap'
import { buildTestApp } from '../support/app.js'
import { as } from '../support/client.js'
import { expectSuccess } from '../support/expect.js'
import { checkStateAfter } from '../support/state-check.js'
import { capture, ofType, sendTo } from './conversation-support.js'

t.test('first_message_id of a channel that gets its first message', async (t) => {
  const { app, fx, services } = await buildTestApp(t)
  const { owner, admin, member, otherMember, guest } = fx.users
  const prisma = services.prisma
  const canRemove = fx.streams.general.canRemoveSubscribersGroupId
  const channel = async (name: string, data: { inviteOnly?: boolean } = {}) => {
    const stream = await prisma.stream.create({ data: { realmId: fx.realm.id, name, canRemoveSubscribersGroupId: canRemove, ...data } })
    await prisma.subscription.create({ data: { userId: member.id, streamId: stream.id, color: '#111111' } })
    return stream
  }
  const strip = (events: Record<string, unknown>[]) => events.map(({ id: _id, ...e }) => e)

  t.test('a public channel: every user who lists it gets one stream update; later messages send none', async (t) => {
    const stream = await channel('first-public')
    let id = 0
    const events = await capture(t, app, [member, otherMember, admin, guest], async () => (id = await sendTo(t, app, member, 'first-public', 'a', 'first')))
    const update = { type: 'stream', op: 'update', property: 'first_message_id', value: id, stream_id: stream.id, name: 'first-public' }
    for (const user of [member, otherMember, admin]) t.same(strip(ofType(events.get(user.id), 'stream')), [update], `user ${user.id}`)
    t.same(ofType(events.get(guest.id), 'stream'), [], 'not to a guest, who does not list a public channel it is not in')
    t.equal((await prisma.stream.findUniqueOrThrow({ where: { id: stream.id } })).firstMessageId, id)
    const later = await capture(t, app, [member, otherMember], () => sendTo(t, app, member, 'first-public', 'a', 'second'))
    for (const user of [member, otherMember]) t.same(ofType(later.get(user.id), 'stream'), [], 'no event once the channel has a first message')
    t.equal(expectSuccess(t, await as(app, otherMember).get(`/streams/${stream.id}`)).stream.first_message_id, id)
  })

  t.test('a private channel: its subscribers and the administrators, not other members', async (t) => {
    const stream = await channel('first-private', { inviteOnly: true })
    let id = 0
    const events = await capture(t, app, [member, owner, otherMember], async () => (id = await sendTo(t, app, member, 'first-private', 'a', 'first')))
    const update = { type: 'stream', op: 'update', property: 'first_message_id', value: id, stream_id: stream.id, name: 'first-private' }
    for (const user of [member, owner]) t.same(strip(ofType(events.get(user.id), 'stream')), [update], `user ${user.id}`)
    t.same(ofType(events.get(otherMember.id), 'stream'), [])
  })

  t.test('state check: a bystander, an administrator and the sender match a fresh register', async (t) => {
    await channel('first-seen')
    await checkStateAfter(t, app, otherMember, () => sendTo(t, app, member, 'first-seen', 'a', 'hello'), { expectTypes: ['stream'] })
    await channel('first-hidden', { inviteOnly: true })
    await checkStateAfter(t, app, admin, () => sendTo(t, app, member, 'first-hidden', 'a', 'hello'), { expectTypes: ['stream'] })
    await channel('first-own')
    await checkStateAfter(t, app, member, () => sendTo(t, app, member, 'first-own', 'a', 'hello'), { expectTypes: ['message', 'stream'] })
  })

  t.test("state check: a channel created by subscribing, whose first message is the Notification Bot's", async (t) => {
    await checkStateAfter(t, app, otherMember, () => as(app, member).post('/users/me/subscriptions', { subscriptions: [{ name: 'first-created' }] }), {
      expectTypes: ['stream'],
    })
    await checkStateAfter(
      t,
      app,
      admin,
      () => as(app, member).post('/users/me/subscriptions', { subscriptions: [{ name: 'first-created-private' }], invite_only: true }),
      { expectTypes: ['stream'] },
    )
  })
})
