// POST /register reads what most clients ask for (settings, max_message_id,
// subscriptions, never_subscribed, unread_msgs) in one statement whose own
// snapshot is the queue's when nothing else is read from the database, and
// inside the repeatable-read transaction otherwise. Both ways give the same
// state: compared here for the same event types, once alone (one statement,
// no transaction) and once with alert_words added (the transaction; its
// own key is left out of the comparison), for an
// owner, a member and a guest with muted channels and topics, unread channel,
// direct and group messages and mentions.
import t from 'tap'
import { buildTestApp } from '../support/app.js'
import { as } from '../support/client.js'
import { expectSuccess, type Body } from '../support/expect.js'
import { stateIsCoreOnly } from '../../src/queries/register-state.js'
import { countStatements, countingDatabase } from '../support/statements.js'
import type { User } from '../../src/db/index.js'

const CORE_TYPES = ['message', 'update_message_flags', 'subscription', 'presence', 'user_settings', 'realm_filters']

t.test('the core state is the same in one statement and in the transaction', async (t) => {
  const database = await countingDatabase()
  const { app, fx } = await buildTestApp(t, { database })
  const { owner, member, otherMember, guest } = fx.users
  const { general, design, secret } = fx.streams
  const send = async (user: User, params: Record<string, unknown>) => expectSuccess(t, await as(app, user).post('/messages', params)).id as number

  // Unread: channel messages in two topics (one muted by the member), a muted channel, DMs, a group DM, a mention.
  await send(owner, { type: 'stream', to: general.name, topic: 'plain', content: 'hello' })
  await send(owner, { type: 'stream', to: general.name, topic: 'quiet', content: 'in a muted topic' })
  await send(owner, { type: 'stream', to: general.name, topic: 'plain', content: `@**${member.fullName}** look` })
  await send(owner, { type: 'stream', to: secret.name, topic: 'hush', content: 'secret channel' })
  await send(otherMember, { type: 'direct', to: JSON.stringify([member.id]), content: 'a DM' })
  await send(otherMember, { type: 'direct', to: JSON.stringify([member.id, owner.id]), content: 'a group DM' })
  expectSuccess(t, await as(app, member).post('/user_topics', { stream_id: general.id, topic: 'quiet', visibility_policy: 1 }))
  expectSuccess(t, await as(app, member).post('/users/me/subscriptions/properties', { subscription_data: [{ stream_id: secret.id, property: 'is_muted', value: true }] }))
  expectSuccess(t, await as(app, member).post('/users/me/subscriptions', { subscriptions: [{ name: design.name }] }))
  expectSuccess(t, await as(app, member).delete('/users/me/subscriptions', { subscriptions: [design.name] }))

  const stable = (body: Body) => {
    const { queue_id: _queue, server_timestamp: _now, alert_words: _words, ...rest } = body
    return rest
  }
  for (const [name, user] of [
    ['owner', owner],
    ['member', member],
    ['guest', guest],
  ] as const) {
    t.test(name, async (t) => {
      t.equal(stateIsCoreOnly(CORE_TYPES, { includeSubscribers: false }, user), name !== 'guest', 'the core types alone: one statement (not for a guest)')
      t.notOk(stateIsCoreOnly([...CORE_TYPES, 'alert_words'], { includeSubscribers: false }, user), 'with alert_words: the transaction')
      const alone = await countStatements(() => as(app, user).post('/register', { fetch_event_types: CORE_TYPES }), { untracked: true })
      const inTransaction = await countStatements(() => as(app, user).post('/register', { fetch_event_types: [...CORE_TYPES, 'alert_words'] }), { untracked: true })
      const fast = expectSuccess(t, alone.result)
      const slow = expectSuccess(t, inTransaction.result)
      const began = (statements: string[]) => statements.includes('BEGIN')
      t.ok(began(inTransaction.statements), 'with alert_words: BEGIN')
      t.equal(began(alone.statements), name === 'guest', `the core types alone: ${name === 'guest' ? 'BEGIN' : 'no BEGIN'}`)
      t.same(stable(fast), stable(slow), 'same state')
      t.ok(fast.subscriptions.length > 0 && Array.isArray(fast.never_subscribed) && typeof fast.max_message_id === 'number')
    })
  }

  t.test("the member's unread summary", async (t) => {
    const state = expectSuccess(t, await as(app, member).post('/register', { fetch_event_types: CORE_TYPES }))
    t.equal(state.unread_msgs.count, 4, 'the muted topic and the muted channel are not counted')
    t.same(
      state.unread_msgs.streams.map((s: Body) => [s.stream_id, s.topic, s.unread_message_ids.length]),
      [
        [general.id, 'plain', 2],
        [general.id, 'quiet', 1],
        [secret.id, 'hush', 1],
      ],
    )
    t.same(state.unread_msgs.pms.map((p: Body) => p.other_user_id), [otherMember.id])
    t.same(state.unread_msgs.huddles.map((h: Body) => h.user_ids_string), [[owner.id, member.id, otherMember.id].sort((a, b) => a - b).join(',')])
    t.equal(state.unread_msgs.mentions.length, 1)
    t.ok(state.unsubscribed.some((s: Body) => s.stream_id === design.id), 'design, left, is in unsubscribed')
    t.notOk(state.never_subscribed.some((s: Body) => s.stream_id === design.id))
  })
})
