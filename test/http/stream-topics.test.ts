import t from 'tap'
import { buildTestApp, makeFixture } from '../support/app.js'
import { as } from '../support/client.js'
import { expectError, expectSuccess } from '../support/expect.js'
import { sendTo } from './conversation-support.js'

t.test('GET /users/me/{stream_id}/topics', async (t) => {
  const { app, fx, services } = await buildTestApp(t)
  const { owner, admin, member, otherMember, guest } = fx.users
  const { general, design, secret } = fx.streams

  t.test('lists the topics newest first with their latest message, one entry per case-insensitive name', async (t) => {
    const a1 = await sendTo(t, app, member, 'design', 'Lunch', 'a')
    const b1 = await sendTo(t, app, member, 'design', 'plans', 'b')
    const a2 = await sendTo(t, app, owner, 'design', 'lunch', 'c')
    void a1
    const body = expectSuccess(t, await as(app, member).get(`/users/me/${design.id}/topics`))
    t.same(body, { result: 'success', msg: '', topics: [{ name: 'lunch', max_id: a2 }, { name: 'plans', max_id: b1 }] })
  })

  t.test('public history: a member who never received the messages sees every topic; so does a subscribed guest', async (t) => {
    const id = await sendTo(t, app, owner, 'general', 'before guest', 'x')
    t.same(expectSuccess(t, await as(app, otherMember).get(`/users/me/${design.id}/topics`)).topics.map((x: { name: string }) => x.name), ['lunch', 'plans'])
    const topics = expectSuccess(t, await as(app, guest).get(`/users/me/${general.id}/topics`)).topics
    t.match(topics, [{ name: 'before guest', max_id: id }])
  })

  t.test('protected history: only topics of messages the user received', async (t) => {
    const early = await sendTo(t, app, owner, 'secret', 'early', 'before the newcomer')
    const newcomer = await fx.newUser()
    await services.prisma.subscription.create({ data: { userId: newcomer.id, streamId: secret.id, color: '#76ce90' } })
    const late = await sendTo(t, app, owner, 'secret', 'late', 'after')
    t.same(expectSuccess(t, await as(app, newcomer).get(`/users/me/${secret.id}/topics`)).topics, [{ name: 'late', max_id: late }])
    t.same(expectSuccess(t, await as(app, member).get(`/users/me/${secret.id}/topics`)).topics, [
      { name: 'late', max_id: late },
      { name: 'early', max_id: early },
    ])
  })

  t.test('shared history of a private channel: every topic for a subscriber', async (t) => {
    const shared = await services.prisma.stream.create({
      data: { realmId: fx.realm.id, name: 'shared', inviteOnly: true, historyPublicToSubscribers: true, canRemoveSubscribersGroupId: general.canRemoveSubscribersGroupId },
    })
    await services.prisma.subscription.create({ data: { userId: owner.id, streamId: shared.id, color: '#76ce90' } })
    const id = await sendTo(t, app, owner, 'shared', 'old news', 'x')
    await services.prisma.subscription.create({ data: { userId: otherMember.id, streamId: shared.id, color: '#76ce90' } })
    t.same(expectSuccess(t, await as(app, otherMember).get(`/users/me/${shared.id}/topics`)).topics, [{ name: 'old news', max_id: id }])
  })

  t.test('a channel without messages has no topics', async (t) => {
    const empty = await services.prisma.stream.create({ data: { realmId: fx.realm.id, name: 'empty', canRemoveSubscribersGroupId: general.canRemoveSubscribersGroupId } })
    t.same(expectSuccess(t, await as(app, member).get(`/users/me/${empty.id}/topics`)).topics, [])
  })

  t.test('channels the user cannot read are invalid, administrators included', async (t) => {
    for (const user of [otherMember, admin, guest]) {
      expectError(t, await as(app, user).get(`/users/me/${secret.id}/topics`), { code: 'BAD_REQUEST', status: 400, msg: 'Invalid channel ID' })
    }
    expectError(t, await as(app, guest).get(`/users/me/${design.id}/topics`), { code: 'BAD_REQUEST', status: 400, msg: 'Invalid channel ID' })
  })

  t.test('unknown and foreign channel IDs are invalid; a non-integer ID names the parameter', async (t) => {
    expectError(t, await as(app, member).get('/users/me/999999999/topics'), { code: 'BAD_REQUEST', status: 400, msg: 'Invalid channel ID' })
    const other = await makeFixture(services)
    expectError(t, await as(app, other.users.member).get(`/users/me/${design.id}/topics`), { code: 'BAD_REQUEST', status: 400, msg: 'Invalid channel ID' })
    const res = expectError(t, await as(app, member).get('/users/me/abc/topics'), { code: 'BAD_REQUEST', status: 400 })
    t.match(res.msg, /stream_id/)
  })
})
