import t from 'tap'
import { buildTestApp } from '../support/app.js'
import { as } from '../support/client.js'
import { expectSuccess } from '../support/expect.js'

t.test('POST /register: drafts, groups and other per-type keys', async (t) => {
  const { app, fx } = await buildTestApp(t)
  const member = fx.users.member

  t.test('returns the user\'s drafts newest first', async (t) => {
    expectSuccess(t, await as(app, member).post('/drafts', { drafts: [{ type: '', to: [], topic: '', content: 'older', timestamp: 1000 }] }))
    expectSuccess(t, await as(app, member).post('/drafts', { drafts: [{ type: '', to: [], topic: '', content: 'newer', timestamp: 2000 }] }))
    const body = expectSuccess(t, await as(app, member).post('/register', { fetch_event_types: ['drafts'] }))
    t.same(body.drafts.map((d: { content: string }) => d.content), ['newer', 'older'])
    t.notOk('realm_user_groups' in body, 'only the requested keys')
  })

  t.test('returns the realm\'s user groups, system groups included', async (t) => {
    const body = expectSuccess(t, await as(app, member).post('/register', { fetch_event_types: ['realm_user_groups'] }))
    const names = body.realm_user_groups.map((g: { name: string }) => g.name)
    t.ok(names.includes('role:everyone'))
    t.ok(names.includes('role:administrators'))
    const admins = body.realm_user_groups.find((g: { name: string }) => g.name === 'role:administrators')
    t.ok(admins.members.includes(fx.users.admin.id))
    t.equal(admins.is_system_group, true)
  })

  t.test('returns empty realm_emoji, muted_users and onboarding_steps for a new realm', async (t) => {
    const body = expectSuccess(t, await as(app, member).post('/register', { fetch_event_types: ['realm_emoji', 'muted_users', 'onboarding_steps'] }))
    t.same(body.realm_emoji, {})
    t.same(body.muted_users, [])
    t.same(body.onboarding_steps, [])
  })
})

t.test('POST /register: topic preferences', async (t) => {
  const { app, fx } = await buildTestApp(t)
  const member = fx.users.member
  expectSuccess(t, await as(app, member).post('/user_topics', { stream_id: fx.streams.general.id, topic: 'noise', visibility_policy: 1 }))
  expectSuccess(t, await as(app, member).post('/user_topics', { stream_id: fx.streams.design.id, topic: 'launch', visibility_policy: 3 }))

  t.test('user_topics lists every non-default policy', async (t) => {
    const body = expectSuccess(t, await as(app, member).post('/register', { fetch_event_types: ['user_topic'] }))
    t.match(body.user_topics, [
      { stream_id: fx.streams.general.id, topic_name: 'noise', visibility_policy: 1, last_updated: Number },
      { stream_id: fx.streams.design.id, topic_name: 'launch', visibility_policy: 3, last_updated: Number },
    ])
    t.equal(body.user_topics.length, 2)
    t.notOk('muted_topics' in body)
  })

  t.test('muted_topics is the legacy list of muted topics, only without user_topic', async (t) => {
    const body = expectSuccess(t, await as(app, member).post('/register', { fetch_event_types: ['muted_topics'] }))
    t.match(body.muted_topics, [['general', 'noise', Number]])
    t.equal(body.muted_topics.length, 1)
    const both = expectSuccess(t, await as(app, member).post('/register', { fetch_event_types: ['muted_topics', 'user_topic'] }))
    t.notOk('muted_topics' in both)
  })
})

t.test('POST /register: channels left', async (t) => {
  const { app, fx } = await buildTestApp(t)
  const { owner, admin, member } = fx.users
  const unsubscribed = async (user: typeof member) =>
    (expectSuccess(t, await as(app, user).post('/register', { fetch_event_types: ['subscription'] })).unsubscribed as { name: string }[]).map((s) => s.name)

  t.test('a private channel left is listed only to those who may still see it (upstream gather_subscriptions_helper)', async (t) => {
    expectSuccess(t, await as(app, owner).post('/users/me/subscriptions', { subscriptions: [{ name: 'left-private' }], invite_only: true, principals: [member.id, admin.id] }))
    for (const user of [member, admin]) expectSuccess(t, await as(app, user).delete('/users/me/subscriptions', { subscriptions: ['left-private'] }))
    t.notOk((await unsubscribed(member)).includes('left-private'), 'a member no longer knows of it')
    t.ok((await unsubscribed(admin)).includes('left-private'), 'administrators see every channel')
  })

  t.test('a public channel left stays in unsubscribed', async (t) => {
    expectSuccess(t, await as(app, member).delete('/users/me/subscriptions', { subscriptions: [fx.streams.design.name] }))
    t.ok((await unsubscribed(member)).includes(fx.streams.design.name))
  })
})
