// Restricted guests (can_access_all_users_group = members) learn no name of a
// user they may not access: mentions render, are stored and are edited as
// mentions of an unknown user, read receipts leave such users out, their
// typing reaches no such guest, and messages and reactions of theirs (fetched
// or live) show them as the "Unknown user" stand-in.
import t from 'tap'
import type { User } from '../../src/db/index.js'
import { buildTestApp, type TestApp } from '../support/app.js'
import { as } from '../support/client.js'
import { expectSuccess } from '../support/expect.js'
import { MODERN_CAPABILITIES } from '../support/events.js'
import { eventsUntil, ofType, register, sentinel, sentinelArrived } from '../support/queues.js'
import { fakeEmailDomain } from '../../src/present/realm.js'
import { INACCESSIBLE_USER_AVATAR_URL } from '../../src/present/user.js'

async function restrictGuests(services: TestApp['services'], realmId: number): Promise<void> {
  const members = await services.prisma.userGroup.findFirstOrThrow({ where: { realmId, name: 'role:members' } })
  await services.prisma.realm.update({ where: { id: realmId }, data: { canAccessAllUsersGroupId: members.id } })
}

t.test('restricted guests and the names of users they may not access', async (t) => {
  const { app, fx, services } = await buildTestApp(t)
  await restrictGuests(services, fx.realm.id)
  const { guest, member } = fx.users
  const hidden: User = await fx.newUser({ fullName: 'Hidden Person' })
  await services.prisma.subscription.deleteMany({ where: { userId: hidden.id } })
  const mentions = (u: User) => [`@**|${u.id}**`, `@**${u.fullName}**`, `@**${u.fullName}|${u.id}**`, `@_**${u.fullName}**`, `@_**|${u.id}**`]
  const render = async (by: User, content: string) => expectSuccess(t, await as(app, by).post('/messages/render', { content })).rendered as string
  const storedContent = async (id: number) =>
    (expectSuccess(t, await as(app, member).get(`/messages/${id}`, { apply_markdown: true })).message as { content: string }).content

  t.test('POST /messages/render: an inaccessible user renders as an unknown one', async (t) => {
    for (const text of mentions(hidden)) {
      const rendered = await render(guest, text)
      t.notMatch(rendered, /user-mention/, `${text} is no mention`)
      if (!text.includes('Hidden Person')) t.notMatch(rendered, /Hidden Person/, `${text} reveals no name`)
      t.equal(rendered, await render(guest, text.replace(String(hidden.id), '999999').replace('Hidden Person', 'Nobody Here')).then((r) =>
        r.replace('999999', String(hidden.id)).replace('Nobody Here', 'Hidden Person')), `${text} as an unknown user`)
      t.match(await render(member, text), /Hidden Person/, `${text} for a member`)
    }
    t.match(await render(guest, `@**|${member.id}**`), new RegExp(`data-user-id="${member.id}"`), 'a channel peer still renders')
  })

  t.test('sending stores no name', async (t) => {
    const id = expectSuccess(t, await as(app, guest).post('/messages', { type: 'stream', to: 'general', topic: 'hi', content: `@**|${hidden.id}**` })).id as number
    const content = await storedContent(id)
    t.notMatch(content, /Hidden Person/)
    t.equal(content, await render(guest, `@**|${hidden.id}**`))
    t.notMatch(content, /user-mention/)
  })

  t.test('editing stores no name', async (t) => {
    const id = expectSuccess(t, await as(app, guest).post('/messages', { type: 'stream', to: 'general', topic: 'hi', content: 'first' })).id as number
    expectSuccess(t, await as(app, guest).patch(`/messages/${id}`, { content: `@**Hidden Person**` }))
    const content = await storedContent(id)
    t.notMatch(content, /user-mention|data-user-id/)
    t.equal(content, '<p>@<strong>Hidden Person</strong></p>', 'as an unknown user renders')
  })

  t.test('read receipts leave out users the guest may not access', async (t) => {
    const reader = await fx.newUser({ fullName: 'Past Reader' })
    const id = expectSuccess(t, await as(app, member).post('/messages', { type: 'stream', to: 'general', topic: 'rr', content: 'x' })).id as number
    expectSuccess(t, await as(app, reader).post('/messages/flags', { messages: [id], op: 'add', flag: 'read' }))
    expectSuccess(t, await as(app, reader).delete('/users/me/subscriptions', { subscriptions: ['general'] }))
    await services.prisma.subscription.updateMany({ where: { userId: reader.id }, data: { active: false } })
    const receipts = async (by: User) => expectSuccess(t, await as(app, by).get(`/messages/${id}/read_receipts`)).user_ids as number[]
    t.ok((await receipts(member)).includes(reader.id), 'a member sees the reader')
    t.notOk((await receipts(guest)).includes(reader.id), 'the guest does not')
  })

  t.test('typing from a user the guest may not access does not reach the guest', async (t) => {
    const types = { event_types: ['typing', 'user_settings'] }
    const guestQueue = await register(t, app, guest, MODERN_CAPABILITIES, types)
    const memberQueue = await register(t, app, member, MODERN_CAPABILITIES, types)
    expectSuccess(t, await as(app, hidden).post('/typing', { type: 'stream', op: 'start', stream_id: fx.streams.general.id, topic: 'hi' }))
    await sentinel(t, app, guest, true)
    await sentinel(t, app, member, true)
    t.same(ofType(await eventsUntil(t, app, guestQueue, sentinelArrived), 'typing'), [], 'not to the guest')
    t.equal(ofType(await eventsUntil(t, app, memberQueue, sentinelArrived), 'typing').length, 1, 'to a member')
  })

  t.test('GET /messages/{id}: a sender or reacting user the guest may not access is "Unknown user"', async (t) => {
    const id = expectSuccess(t, await as(app, hidden).post('/messages', { type: 'stream', to: 'general', topic: 'who', content: 'psst' })).id as number
    expectSuccess(t, await as(app, hidden).post(`/messages/${id}/reactions`, { emoji_name: 'smile' }))
    const seen = expectSuccess(t, await as(app, guest).get(`/messages/${id}`)).message as { sender_full_name: string; reactions: unknown[] }
    t.equal(seen.sender_full_name, 'Unknown user')
    t.same(seen.reactions, [{ emoji_name: 'smile', emoji_code: '1f642', reaction_type: 'unicode_emoji', user_id: hidden.id }], 'reactions name users by ID only')
    t.notMatch(JSON.stringify(seen), 'Hidden Person')
    const forMember = expectSuccess(t, await as(app, member).get(`/messages/${id}`)).message as { sender_full_name: string }
    t.equal(forMember.sender_full_name, 'Hidden Person')
  })

  const standIn = (u: User) => ({
    sender_id: u.id,
    sender_full_name: 'Unknown user',
    sender_email: `user${u.id}@${fakeEmailDomain(fx.realm, services.config.externalUrl)}`,
    avatar_url: INACCESSIBLE_USER_AVATAR_URL,
  })
  const senderFields = (m: Record<string, unknown>) => ({ sender_id: m.sender_id, sender_full_name: m.sender_full_name, sender_email: m.sender_email, avatar_url: m.avatar_url })

  t.test('GET /messages: a sender the guest may not access has the stand-in name, address and picture', async (t) => {
    const id = expectSuccess(t, await as(app, hidden).post('/messages', { type: 'stream', to: 'general', topic: 'window', content: 'window' })).id as number
    const window = async (by: User) =>
      (expectSuccess(t, await as(app, by).get('/messages', { anchor: id, num_before: 0, num_after: 0, narrow: [] })).messages as Record<string, unknown>[])[0] ?? {}
    const seen = await window(guest)
    t.strictSame(senderFields(seen), standIn(hidden))
    t.notMatch(JSON.stringify(seen), /Hidden Person/)
    t.notMatch(JSON.stringify(seen), new RegExp(hidden.email.replace(/[.+]/g, '\\$&')))
    const forMember = await window(member)
    t.strictSame(senderFields(forMember), { sender_id: hidden.id, sender_full_name: 'Hidden Person', sender_email: hidden.email, avatar_url: forMember.avatar_url })
    t.not(forMember.avatar_url, INACCESSIBLE_USER_AVATAR_URL)
    const single = expectSuccess(t, await as(app, guest).get(`/messages/${id}`)).message as Record<string, unknown>
    t.strictSame(senderFields(single), standIn(hidden), 'GET /messages/{id} alike')
  })

  t.test('the message event shows a sender the guest may not access as the stand-in, to that guest only', async (t) => {
    const types = { event_types: ['message', 'user_settings'] }
    const guestQueue = await register(t, app, guest, MODERN_CAPABILITIES, types)
    const memberQueue = await register(t, app, member, MODERN_CAPABILITIES, types)
    const id = expectSuccess(t, await as(app, hidden).post('/messages', { type: 'stream', to: 'general', topic: 'live', content: 'live' })).id as number
    // The typing test above left the sentinel setting on.
    await sentinel(t, app, guest, false)
    await sentinel(t, app, member, false)
    const [forGuest] = ofType(await eventsUntil(t, app, guestQueue, sentinelArrived), 'message')
    const [forMember] = ofType(await eventsUntil(t, app, memberQueue, sentinelArrived), 'message')
    const guestMessage = (forGuest?.message ?? {}) as Record<string, unknown>
    const memberMessage = (forMember?.message ?? {}) as Record<string, unknown>
    t.equal(guestMessage.id, id)
    t.strictSame(senderFields(guestMessage), standIn(hidden))
    t.notMatch(JSON.stringify(forGuest), /Hidden Person/)
    t.strictSame(forGuest?.flags, [], 'the guest still gets its flags')
    t.equal(memberMessage.id, id)
    t.equal(memberMessage.sender_full_name, 'Hidden Person', 'a member gets the real sender')
    t.equal(memberMessage.sender_email, hidden.email)
    const { sender_full_name: _g, sender_email: _ge, avatar_url: _ga, ...guestRest } = guestMessage
    const { sender_full_name: _m, sender_email: _me, avatar_url: _ma, ...memberRest } = memberMessage
    t.strictSame(guestRest, memberRest, 'otherwise the same message')
    const peerId = expectSuccess(t, await as(app, member).post('/messages', { type: 'stream', to: 'general', topic: 'live', content: 'peer' })).id as number
    const peer = expectSuccess(t, await as(app, guest).get(`/messages/${peerId}`)).message as Record<string, unknown>
    t.equal(peer.sender_full_name, member.fullName, 'a subscribed sender is shown as is')
  })

  t.test("the reaction event's user is the stand-in for a guest that may not access the reacting user", async (t) => {
    const id = expectSuccess(t, await as(app, member).post('/messages', { type: 'stream', to: 'general', topic: 'react', content: 'react to me' })).id as number
    const types = { event_types: ['reaction', 'user_settings'] }
    for (const op of ['add', 'remove'] as const) {
      const guestQueue = await register(t, app, guest, MODERN_CAPABILITIES, types)
      const memberQueue = await register(t, app, member, MODERN_CAPABILITIES, types)
      const res = op === 'add'
        ? await as(app, hidden).post(`/messages/${id}/reactions`, { emoji_name: 'smile' })
        : await as(app, hidden).delete(`/messages/${id}/reactions`, { emoji_name: 'smile' })
      expectSuccess(t, res)
      await sentinel(t, app, guest, op === 'add')
      await sentinel(t, app, member, op === 'add')
      const emoji = { message_id: id, emoji_name: 'smile', emoji_code: '1f642', reaction_type: 'unicode_emoji' }
      const stand = standIn(hidden)
      t.strictSame(ofType(await eventsUntil(t, app, guestQueue, sentinelArrived), 'reaction').map(({ id: _id, ...e }) => e), [
        { type: 'reaction', op, user_id: hidden.id, user: { user_id: hidden.id, email: stand.sender_email, full_name: 'Unknown user' }, ...emoji },
      ], `${op}: the guest's event`)
      t.strictSame(ofType(await eventsUntil(t, app, memberQueue, sentinelArrived), 'reaction').map(({ id: _id, ...e }) => e), [
        { type: 'reaction', op, user_id: hidden.id, user: { user_id: hidden.id, email: hidden.email, full_name: 'Hidden Person' }, ...emoji },
      ], `${op}: a member's event`)
    }
  })
})
