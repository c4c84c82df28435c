// GET /messages runs a fixed number of statements however many messages,
// senders, direct-message participants and reactions its window holds
// (issue 16: the window, the narrow's channels and everything presenting
// needs are one statement each). Counted as test/http/set-based.test.ts does.
import t from 'tap'
import { buildTestApp } from '../support/app.js'
import { as } from '../support/client.js'
import { expectSuccess, type Body } from '../support/expect.js'
import { countStatements, countingDatabase } from '../support/statements.js'
import type { User } from '../../src/db/index.js'

const AUTH_LOOKUP = /FROM user_profile u JOIN realm r ON r\.id = u\.realm_id\s+WHERE u\.api_key/

t.test('GET /messages: statements do not grow with the window', async (t) => {
  const database = await countingDatabase()
  const { app, fx, services } = await buildTestApp(t, { database })
  const { owner, admin, member, otherMember } = fx.users
  const general = fx.streams.general
  const send = async (user: User, params: Record<string, unknown>): Promise<number> => expectSuccess(t, await as(app, user).post('/messages', params)).id as number
  const senders = [owner, admin, member, otherMember, ...(await Promise.all([0, 1, 2].map(() => fx.newUser())))]
  for (const user of senders.slice(4)) {
    expectSuccess(t, await as(app, user).post('/users/me/subscriptions', { subscriptions: [{ name: general.name }] }))
  }

  /** `n` channel messages and `n` direct messages from the senders in turn, each with a reaction from the next sender. */
  const fill = async (topic: string, n: number) => {
    for (let i = 0; i < n; i++) {
      const sender = senders[i % senders.length] as User
      const reactor = senders[(i + 1) % senders.length] as User
      const channelMessage = await send(sender, { type: 'stream', to: general.name, topic, content: `message ${i}` })
      const directMessage = await send(sender, { type: 'direct', to: JSON.stringify([member.id, reactor.id]), content: `dm ${topic} ${i}` })
      for (const id of [channelMessage, directMessage]) expectSuccess(t, await as(app, reactor).post(`/messages/${id}/reactions`, { emoji_name: 'smile' }))
    }
  }
  const counted = async (narrow: unknown[], n: number) => {
    expectSuccess(t, await as(app, member).get('/users/me')) // the authentication cache holds the viewer, as for any request
    const { result, statements } = await countStatements(() => as(app, member).get('/messages', { anchor: 'newest', num_before: n, narrow }), { untracked: true })
    const body = expectSuccess(t, result)
    // The authentication cache reads the viewer again when a write anywhere
    // (another test file, on PostgreSQL) evicted it: not GET /messages' own.
    return { body, statements: statements.filter((sql) => !AUTH_LOOKUP.test(sql)) }
  }

  await fill('small', 2)
  await fill('large', 14)
  for (const [name, narrow] of [
    ['a topic of a channel', (topic: string) => [{ operator: 'channel', operand: general.id }, { operator: 'topic', operand: topic }]],
    ['direct messages', (topic: string) => [{ operator: 'is', operand: 'dm' }, { operator: 'search', operand: topic }]],
  ] as const) {
    t.test(name, async (t) => {
      const small = await counted(narrow('small'), 2)
      const large = await counted(narrow('large'), 14)
      t.equal(small.body.messages.length, 2)
      t.equal(large.body.messages.length, 14)
      t.ok(large.body.messages.every((m: Body) => m.reactions.length === 1 && m.reactions[0].emoji_name === 'smile'), 'every message has its reaction')
      t.ok(small.statements.length > 0, 'the statements were counted')
      t.equal(large.statements.length, small.statements.length, `same statements:\n${large.statements.join('\n')}`)
    })
  }
})
