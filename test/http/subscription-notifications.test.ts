import t from 'tap'
import { buildTestApp } from '../support/app.js'
import { as } from '../support/client.js'
import { expectSuccess } from '../support/expect.js'
import type { User } from '../../src/db/index.js'
import type { FastifyInstance } from 'fastify'

type Tap = Parameters<typeof expectSuccess>[0]

/** Messages in the narrow, newest first. */
async function messagesIn(t: Tap, app: FastifyInstance, user: User, narrow: unknown[]) {
  const body = expectSuccess(t, await as(app, user).get('/messages', { anchor: 'newest', num_before: 20, num_after: 0, narrow, apply_markdown: false }))
  return (body.messages as { content: string; sender_id: number; subject: string; flags: string[] }[]).reverse()
}

t.test('Notification Bot messages after subscribing', async (t) => {
  const { app, fx } = await buildTestApp(t)
  const { member, otherMember, owner } = fx.users
  const bot = fx.notificationBot
  const mention = `@_**${member.fullName}|${member.id}**`

  t.test('a new public channel gets its creation notice in "channel events"', async (t) => {
    expectSuccess(t, await as(app, member).post('/users/me/subscriptions', { subscriptions: [{ name: 'garden', description: 'Plants' }] }))
    const [notice] = await messagesIn(t, app, member, [['channel', 'garden']])
    t.equal(notice?.sender_id, bot.id)
    t.equal(notice?.subject, 'channel events')
    t.equal(notice?.content, `**Public** channel created by ${mention}. **Description:**\n\`\`\`\` quote\nPlants\n\`\`\`\``)
    t.ok(notice?.flags.includes('read'), 'the creator has it read')
  })

  t.test('a private channel without description says so', async (t) => {
    expectSuccess(t, await as(app, member).post('/users/me/subscriptions', { subscriptions: [{ name: 'vault' }], invite_only: true, principals: [member.id, otherMember.id] }))
    const [notice] = await messagesIn(t, app, otherMember, [['channel', 'vault']])
    t.equal(notice?.content, `**Private, protected history** channel created by ${mention}. **Description:**\n\`\`\`\` quote\n*No description.*\n\`\`\`\``)
    t.notOk(notice?.flags.includes('read'), 'other subscribers get it unread')
  })

  t.test('people subscribed by someone else to existing channels get a direct message', async (t) => {
    const newcomer = await fx.newUser({ fullName: 'Nina Newcomer' })
    expectSuccess(t, await as(app, member).post('/users/me/subscriptions', { subscriptions: [{ name: 'design' }], principals: [newcomer.id] }))
    const [dm] = await messagesIn(t, app, newcomer, [{ operator: 'dm', operand: [bot.id] }])
    t.equal(dm?.sender_id, bot.id)
    t.equal(dm?.content, `${mention} subscribed you to #**design**.`)
    expectSuccess(t, await as(app, member).post('/users/me/subscriptions', { subscriptions: [{ name: 'garden' }, { name: 'vault' }], principals: [newcomer.id] }))
    const [second] = await messagesIn(t, app, newcomer, [{ operator: 'dm', operand: [bot.id] }])
    t.equal(second?.content, `${mention} subscribed you to the following channels:\n\n* #**garden**\n* #**vault**`, "stored without the trailing newline, as every message")
  })

  t.test('subscribing oneself sends no direct message', async (t) => {
    const before = await messagesIn(t, app, owner, [{ operator: 'dm', operand: [bot.id] }])
    expectSuccess(t, await as(app, owner).post('/users/me/subscriptions', { subscriptions: [{ name: 'garden' }] }))
    t.equal((await messagesIn(t, app, owner, [{ operator: 'dm', operand: [bot.id] }])).length, before.length)
  })

  t.test('announce posts in the new-channel announcements channel', async (t) => {
    expectSuccess(t, await as(app, member).post('/users/me/subscriptions', { subscriptions: [{ name: 'orchard' }], announce: true }))
    const [notice] = await messagesIn(t, app, member, [['channel', 'general'], ['topic', 'new channels']])
    t.equal(notice?.content, `${mention} created a new channel #**orchard**.`)
  })
})
