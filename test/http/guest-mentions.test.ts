// Restricted guests (can_access_all_users_group = members) learn no name of a
// user they may not access: mentions render, are stored and are edited as
// mentions of an unknown user, read receipts leave such users out and their
// typing reaches no such guest.
import t from 'tap'
import type { User } from '../../src/db/index.js'
import { buildTestApp, type TestApp } from '../support/app.js'
import { as } from '../support/client.js'
import { expectSuccess } from '../support/expect.js'
import { MODERN_CAPABILITIES } from '../support/events.js'
import { eventsUntil, ofType, register, sentinel, sentinelArrived } from '../support/queues.js'

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
})
