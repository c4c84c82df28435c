import t from 'tap'
import { buildTestApp, makeFixture } from '../support/app.js'
import { as } from '../support/client.js'
import { expectError, expectSuccess } from '../support/expect.js'
import { captureEvents } from '../support/events.js'
import { send, sendTo } from './conversation-support.js'

t.test('muted users', async (t) => {
  const { app, fx, services } = await buildTestApp(t)
  const { owner, member, otherMember, bot } = fx.users
  const prisma = services.prisma
  const strip = (e: Record<string, unknown>) => {
    const { id: _id, ...rest } = e
    return rest
  }
  const flagsOf = async (userId: number, messageId: number) =>
    (await prisma.userMessage.findUniqueOrThrow({ where: { userId_messageId: { userId, messageId } } })).flags

  t.test('muting marks the muted user’s messages read, then sends the whole list', async (t) => {
    const muter = await fx.newUser()
    const a = await sendTo(t, app, otherMember, 'general', 'm', 'from other')
    const dm = await send(t, app, otherMember, { type: 'direct', to: JSON.stringify([muter.id]), content: 'psst' })
    const keep = await sendTo(t, app, owner, 'general', 'm', 'from owner')
    const before = Math.floor(Date.now() / 1000)
    const events = await captureEvents(app, muter, async () => {
      t.same(expectSuccess(t, await as(app, muter).post(`/users/me/muted_users/${otherMember.id}`)), { result: 'success', msg: '' })
    })
    t.equal(events.length, 2)
    t.same(strip(events[0] ?? {}), { type: 'update_message_flags', op: 'add', operation: 'add', flag: 'read', messages: [a, dm], all: false })
    t.equal(events[1]?.type, 'muted_users')
    t.same(events[1]?.muted_users.map((m: { id: number }) => m.id), [otherMember.id])
    t.ok(events[1]?.muted_users[0].timestamp >= before - 1)
    t.equal((await flagsOf(muter.id, keep)) & 1, 0, 'other senders stay unread')

    const reg = expectSuccess(t, await as(app, muter).post('/register', { fetch_event_types: ['muted_users'] }))
    t.same(reg.muted_users, events[1]?.muted_users)
  })

  t.test('new messages from a muted user arrive read and stay out of the unread counts', async (t) => {
    const muter = await fx.newUser()
    expectSuccess(t, await as(app, muter).post(`/users/me/muted_users/${otherMember.id}`))
    let id = 0
    const events = await captureEvents(app, muter, async () => {
      id = await send(t, app, otherMember, { type: 'direct', to: JSON.stringify([muter.id]), content: 'still there?' })
    })
    t.match(events, [{ type: 'message', flags: ['read'] }])
    t.equal((await flagsOf(muter.id, id)) & 1, 1)
    const channel = await sendTo(t, app, otherMember, 'general', 'muted', 'x')
    t.equal((await flagsOf(muter.id, channel)) & 1, 1)
    t.equal((await flagsOf(member.id, channel)) & 1, 0, 'only for the muter')
    const reg = expectSuccess(t, await as(app, muter).post('/register', { fetch_event_types: ['message', 'update_message_flags'] }))
    t.equal(reg.unread_msgs.count, 0)

    const unmuted = await captureEvents(app, muter, async () => {
      t.same(expectSuccess(t, await as(app, muter).delete(`/users/me/muted_users/${otherMember.id}`)), { result: 'success', msg: '' })
    })
    t.same(unmuted.map(strip), [{ type: 'muted_users', muted_users: [] }])
    const after = await sendTo(t, app, otherMember, 'general', 'muted', 'y')
    t.equal((await flagsOf(muter.id, after)) & 1, 0)
  })

  t.test('bots and deactivated users may be muted', async (t) => {
    const muter = await fx.newUser()
    expectSuccess(t, await as(app, muter).post(`/users/me/muted_users/${bot.id}`))
    const gone = await fx.newUser()
    await prisma.user.update({ where: { id: gone.id }, data: { isActive: false } })
    expectSuccess(t, await as(app, muter).post(`/users/me/muted_users/${gone.id}`))
    const reg = expectSuccess(t, await as(app, muter).post('/register', { fetch_event_types: ['muted_users'] }))
    t.same(reg.muted_users.map((m: { id: number }) => m.id), [bot.id, gone.id])
  })

  t.test('errors', async (t) => {
    const muter = await fx.newUser()
    expectError(t, await as(app, muter).post(`/users/me/muted_users/${muter.id}`), { code: 'BAD_REQUEST', status: 400, msg: 'Cannot mute self' })
    expectSuccess(t, await as(app, muter).post(`/users/me/muted_users/${member.id}`))
    expectError(t, await as(app, muter).post(`/users/me/muted_users/${member.id}`), { code: 'BAD_REQUEST', status: 400, msg: 'User already muted' })
    expectError(t, await as(app, muter).delete(`/users/me/muted_users/${owner.id}`), { code: 'BAD_REQUEST', status: 400, msg: 'User is not muted' })
    expectError(t, await as(app, muter).post('/users/me/muted_users/999999999'), { code: 'BAD_REQUEST', status: 400, msg: 'No such user' })
    expectError(t, await as(app, muter).delete('/users/me/muted_users/999999999'), { code: 'BAD_REQUEST', status: 400, msg: 'No such user' })
    const other = await makeFixture(services)
    expectError(t, await as(app, muter).post(`/users/me/muted_users/${other.users.member.id}`), { code: 'BAD_REQUEST', msg: 'No such user' })
    t.match(expectError(t, await as(app, muter).post('/users/me/muted_users/abc'), { code: 'BAD_REQUEST', status: 400 }).msg, /muted_user_id/)
    const none = await captureEvents(app, muter, () => as(app, muter).post(`/users/me/muted_users/${member.id}`), { expectNone: true })
    t.same(none, [], 'a failed mute sends nothing')
  })

  t.test('a guest who may not see a user cannot mute them', async (t) => {
    const members = await prisma.userGroup.findFirstOrThrow({ where: { realmId: fx.realm.id, name: 'role:members' } })
    await prisma.realm.update({ where: { id: fx.realm.id }, data: { canAccessAllUsersGroupId: members.id } })
    t.teardown(async () => {
      const everyone = await prisma.userGroup.findFirstOrThrow({ where: { realmId: fx.realm.id, name: 'role:everyone' } })
      await prisma.realm.update({ where: { id: fx.realm.id }, data: { canAccessAllUsersGroupId: everyone.id } })
    })
    const stranger = await fx.newUser()
    await prisma.subscription.deleteMany({ where: { userId: stranger.id } })
    expectError(t, await as(app, fx.users.guest).post(`/users/me/muted_users/${stranger.id}`), { code: 'BAD_REQUEST', msg: 'No such user' })
  })
})
