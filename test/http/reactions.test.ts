import t from 'tap'
import { buildTestApp } from '../support/app.js'
import { as } from '../support/client.js'
import { expectError, expectSuccess } from '../support/expect.js'
import { capture, messageAs, ofType, sendTo } from './conversation-support.js'
import type { Body } from '../support/expect.js'

const withoutId = ({ id: _id, ...event }: Body): Body => event

t.test('POST and DELETE /messages/{id}/reactions', async (t) => {
  const { app, fx, services } = await buildTestApp(t)
  const { owner, member, otherMember, guest } = fx.users
  const prisma = services.prisma

  t.test('adds a reaction by name, publishes it to the readers, removes it by code', async (t) => {
    const id = await sendTo(t, app, member, 'design', 'r', 'react to me')
    const events = await capture(t, app, [owner, member, otherMember], () =>
      as(app, member).post(`/messages/${id}/reactions`, { emoji_name: 'big_smile' }),
    )
    const expected = {
      type: 'reaction',
      op: 'add',
      user_id: member.id,
      user: { user_id: member.id, email: member.email, full_name: 'Mia Member' },
      message_id: id,
      emoji_name: 'big_smile',
      emoji_code: '1f604',
      reaction_type: 'unicode_emoji',
    }
    t.same(ofType(events.get(owner.id), 'reaction').map(withoutId), [expected])
    t.same(ofType(events.get(member.id), 'reaction').map(withoutId), [expected])
    t.same(ofType(events.get(otherMember.id), 'reaction'), [], 'not subscribed to design')
    // The event keeps the deprecated `user` (level 339); the message's reactions have none (level 328).
    t.same((await messageAs(t, app, owner, id)).reactions, [{ emoji_name: 'big_smile', emoji_code: '1f604', reaction_type: 'unicode_emoji', user_id: member.id }])

    expectError(t, await as(app, member).post(`/messages/${id}/reactions`, { emoji_name: 'big_smile' }), {
      code: 'REACTION_ALREADY_EXISTS',
      msg: 'Reaction already exists.',
    })
    const removed = await capture(t, app, [owner], () => as(app, member).delete(`/messages/${id}/reactions`, { emoji_code: '1f604' }))
    t.same(ofType(removed.get(owner.id), 'reaction').map(withoutId), [{ ...expected, op: 'remove' }])
    expectError(t, await as(app, member).delete(`/messages/${id}/reactions`, { emoji_name: 'big_smile' }), {
      code: 'REACTION_DOES_NOT_EXIST',
      msg: "Reaction doesn't exist.",
    })
    t.same((await messageAs(t, app, owner, id)).reactions, [])
  })

  t.test('a vote for an existing reaction keeps its name', async (t) => {
    const id = await sendTo(t, app, member, 'general', 'votes', 'x')
    expectSuccess(t, await as(app, member).post(`/messages/${id}/reactions`, { emoji_name: '+1', emoji_code: '1f44d', reaction_type: 'unicode_emoji' }))
    expectSuccess(t, await as(app, otherMember).post(`/messages/${id}/reactions`, { emoji_name: 'thumbs_up', emoji_code: '1f44d', reaction_type: 'unicode_emoji' }))
    t.same((await messageAs(t, app, owner, id)).reactions.map((r: { emoji_name: string }) => r.emoji_name), ['+1', '+1'])
  })

  t.test('emoji validation is the one user status uses', async (t) => {
    const id = await sendTo(t, app, member, 'general', 'emoji', 'x')
    const post = (params: Record<string, unknown>) => as(app, member).post(`/messages/${id}/reactions`, params)
    expectError(t, await post({}), { code: 'BAD_REQUEST', msg: "Missing 'emoji_name' argument" })
    expectError(t, await post({ emoji_code: '1f604' }), {
      code: 'BAD_REQUEST',
      msg: 'Client must pass emoji_name if they pass either emoji_code or reaction_type.',
    })
    expectError(t, await post({ emoji_name: 'no_such_emoji' }), { code: 'BAD_REQUEST', msg: "Emoji 'no_such_emoji' does not exist" })
    expectError(t, await post({ emoji_name: 'big_smile', emoji_code: 'ffff', reaction_type: 'unicode_emoji' }), { code: 'BAD_REQUEST', msg: 'Invalid emoji code.' })
    expectError(t, await post({ emoji_name: 'frown', emoji_code: '1f604', reaction_type: 'unicode_emoji' }), { code: 'BAD_REQUEST', msg: 'Invalid emoji name.' })
    expectError(t, await post({ emoji_name: 'big_smile', emoji_code: '1f604', reaction_type: 'bogus' }), { code: 'BAD_REQUEST', msg: 'Invalid emoji type.' })
    expectSuccess(t, await post({ emoji_name: 'zulip', emoji_code: 'zulip', reaction_type: 'service_extra_emoji' }))
    expectError(t, await as(app, member).delete(`/messages/${id}/reactions`, {}), {
      code: 'BAD_REQUEST',
      msg: 'At least one of the following arguments must be present: emoji_name, emoji_code',
    })
  })

  t.test('reacting to a public message never received adds a historical copy', async (t) => {
    const id = await sendTo(t, app, member, 'design', 'history', 'old news')
    t.equal(await prisma.userMessage.count({ where: { userId: otherMember.id, messageId: id } }), 0)
    expectSuccess(t, await as(app, otherMember).post(`/messages/${id}/reactions`, { emoji_name: 'big_smile' }))
    t.same((await messageAs(t, app, otherMember, id)).flags, ['read', 'historical'])
  })

  t.test('inaccessible messages are Invalid message(s)', async (t) => {
    const id = await sendTo(t, app, member, 'secret', 'hidden', 'x')
    expectError(t, await as(app, guest).post(`/messages/${id}/reactions`, { emoji_name: 'big_smile' }), { code: 'BAD_REQUEST', msg: 'Invalid message(s)' })
    expectError(t, await as(app, otherMember).delete(`/messages/${id}/reactions`, { emoji_name: 'big_smile' }), { code: 'BAD_REQUEST', msg: 'Invalid message(s)' })
  })
})
