// Who may send direct messages: direct_message_permission_group (every direct
// message needs one of its members among sender and recipients) and
// direct_message_initiator_group (only its members start a conversation with
// no message yet), as upstream's check_can_send_direct_message. Bots, and
// messages to oneself or to bots only, are never refused.
import t from 'tap'
import { buildTestApp } from '../support/app.js'
import { as } from '../support/client.js'
import { expectError, expectSuccess } from '../support/expect.js'

t.test('direct-message permission settings', async (t) => {
  const { app, fx, services } = await buildTestApp(t)
  const { owner, admin, member, otherMember, guest, bot } = fx.users
  const system = async (name: string) => (await services.prisma.userGroup.findFirstOrThrow({ where: { realmId: fx.realm.id, name } })).id
  const [everyone, admins, nobody] = await Promise.all(['role:everyone', 'role:administrators', 'role:nobody'].map(system))
  const set = async (setting: string, value: unknown) => expectSuccess(t, await as(app, owner).patch('/realm', { [setting]: { new: value } }))
  const dm = (from: { deliveryEmail: string; apiKey: string }, to: { id: number }[], content = 'hello') =>
    as(app, from).post('/messages', { type: 'direct', to: JSON.stringify(to.map((u) => u.id)), content })
  const refused = (msg: string) => ({ code: 'BAD_REQUEST', status: 400, msg })
  const DISABLED = refused('Direct messages are disabled in this organization.')
  const NO_AUTHORIZER = refused('This conversation does not include any users who can authorize it.')
  const NO_INITIATING = refused('You do not have permission to initiate direct message conversations.')
  const inAnHour = () => Math.floor(Date.now() / 1000) + 3600

  t.test('direct_message_permission_group: nobody disables them, a group needs one of its members in the conversation', async (t) => {
    t.teardown(() => set('direct_message_permission_group', everyone))
    await set('direct_message_permission_group', nobody)
    expectError(t, await dm(member, [otherMember]), DISABLED)
    expectError(t, await dm(admin, [member, otherMember]), DISABLED)
    expectSuccess(t, await dm(member, [member])) // to oneself
    expectSuccess(t, await dm(member, [bot])) // to a bot
    expectSuccess(t, await dm(bot, [member])) // from a bot
    expectError(t, await as(app, member).post('/scheduled_messages', { type: 'direct', to: JSON.stringify([otherMember.id]), content: 'later', scheduled_delivery_timestamp: inAnHour() }), DISABLED)

    await set('direct_message_permission_group', admins)
    expectError(t, await dm(member, [otherMember]), NO_AUTHORIZER)
    expectError(t, await dm(member, [otherMember, guest]), NO_AUTHORIZER)
    expectSuccess(t, await dm(member, [admin])) // an administrator as the recipient
    expectSuccess(t, await dm(admin, [member])) // an administrator as the sender
    expectSuccess(t, await dm(member, [otherMember, admin])) // an administrator among the recipients

    await set('direct_message_permission_group', { direct_members: [otherMember.id], direct_subgroups: [] })
    expectSuccess(t, await dm(member, [otherMember]))
    expectError(t, await dm(member, [guest]), NO_AUTHORIZER)
  })

  t.test('direct_message_initiator_group: others only answer conversations that have a message', async (t) => {
    t.teardown(() => set('direct_message_initiator_group', everyone))
    await set('direct_message_initiator_group', admins)
    const fresh = await fx.newUser({ fullName: 'Fresh Person' })
    expectError(t, await dm(member, [fresh]), NO_INITIATING)
    expectError(t, await dm(member, [fresh, otherMember]), NO_INITIATING)
    expectError(t, await as(app, member).post('/scheduled_messages', { type: 'direct', to: JSON.stringify([fresh.id]), content: 'later', scheduled_delivery_timestamp: inAnHour() }), NO_INITIATING)
    expectSuccess(t, await dm(member, [member])) // to oneself

    expectSuccess(t, await dm(admin, [fresh])) // an administrator starts it
    expectSuccess(t, await dm(fresh, [admin])) // the other side answers
    expectSuccess(t, await dm(admin, [fresh, member])) // an administrator starts a group conversation
    expectSuccess(t, await dm(member, [fresh, admin])) // which any of its members then writes to
    expectError(t, await dm(member, [fresh, otherMember]), NO_INITIATING) // another group of people is another conversation

    await set('direct_message_initiator_group', { direct_members: [member.id], direct_subgroups: [] })
    expectSuccess(t, await dm(member, [fresh, otherMember])) // an anonymous group of initiators
    expectError(t, await dm(guest, [otherMember]), NO_INITIATING)
  })
})
