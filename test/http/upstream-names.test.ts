// Upstream's names of what the spec renamed answer too (UPSTREAM_NAMES, on by
// default); JSON null means "not given" for register's optional parameters;
// bot_type is null for people in user objects (not on GET /users/me); the legacy settings events (domain/upstream-names.ts).
import t from 'tap'
import { buildTestApp } from '../support/app.js'
import { anon, as } from '../support/client.js'
import { expectError, expectSuccess, type Body } from '../support/expect.js'
import { captureEvents, MODERN_CAPABILITIES } from '../support/events.js'

const VERSION = { service_feature_level: 372, service_version: '10.1', service_merge_base: '' }
const UPSTREAM_VERSION = { zulip_feature_level: 372, zulip_version: '10.1', zulip_merge_base: '' }
const byId = (members: Body[]) => new Map(members.map((m) => [m.user_id as number, m]))

t.test('with UPSTREAM_NAMES on (the default)', async (t) => {
  const { app, fx } = await buildTestApp(t)
  const { member, otherMember } = fx.users

  t.test('/server_settings and /register carry both names of the version fields', async (t) => {
    t.match(expectSuccess(t, await anon(app, fx).get('/server_settings')), { ...VERSION, ...UPSTREAM_VERSION })
    const body = expectSuccess(t, await as(app, member).post('/register', { fetch_event_types: [] }))
    t.match(body, { ...VERSION, ...UPSTREAM_VERSION })
  })

  t.test('client_gravatar is client_extavatar on every route that takes it', async (t) => {
    // otherMember's avatar is externally hosted: with the parameter true its URL is left to the client.
    const get = async (path: string, params: Body) => expectSuccess(t, await as(app, member).get(path, params))
    t.equal(byId((await get('/users', {})).members).get(otherMember.id)?.avatar_url, null, 'default true, as upstream')
    t.type(byId((await get('/users', { client_gravatar: false })).members).get(otherMember.id)?.avatar_url, 'string')
    t.type((await get(`/users/${otherMember.id}`, { client_gravatar: false })).user.avatar_url, 'string')
    t.equal((await get(`/users/${otherMember.id}`, { client_gravatar: true })).user.avatar_url, null)
    expectSuccess(t, await as(app, otherMember).post('/messages', { type: 'stream', to: 'general', topic: 'names', content: 'avatar' }))
    const narrow = [{ operator: 'topic', operand: 'names' }]
    const [withUrl] = (await get('/messages', { anchor: 'newest', num_before: 1, narrow, client_gravatar: false })).messages
    t.type(withUrl.avatar_url, 'string')
    const [without] = (await get('/messages', { anchor: 'newest', num_before: 1, narrow, client_gravatar: true })).messages
    t.equal(without.avatar_url, null)
    const reg = expectSuccess(t, await as(app, member).post('/register', { fetch_event_types: ['realm_user'], client_gravatar: false }))
    t.type(byId(reg.realm_users).get(otherMember.id)?.avatar_url, 'string')
    t.equal(reg.ignored_parameters_unsupported, undefined)
    const implicit = expectSuccess(t, await as(app, member).get('/events', { dont_block: true, event_types: ['message'], client_gravatar: true }))
    t.type(implicit.queue_id, 'string')
    t.equal(implicit.ignored_parameters_unsupported, undefined)
  })

  t.test('sending both names is an error naming them', async (t) => {
    for (const [method, path] of [
      ['get', '/users'],
      ['get', `/users/${otherMember.id}`],
      ['get', '/messages'],
      ['post', '/register'],
    ] as const) {
      expectError(t, await as(app, member)[method](path, { anchor: 'newest', client_gravatar: true, client_extavatar: false }), {
        code: 'REQUEST_CONFUSING_VAR',
        status: 400,
        msg: "Can't decide between 'client_extavatar' and 'client_gravatar' arguments",
      })
    }
  })

  t.test('zulip_extra_emoji is the extra-emoji reaction type', async (t) => {
    expectSuccess(t, await as(app, member).post('/users/me/status', { emoji_name: 'zulip', emoji_code: 'zulip', reaction_type: 'zulip_extra_emoji' }))
    t.match(expectSuccess(t, await as(app, otherMember).get(`/users/${member.id}/status`)).status, { emoji_name: 'zulip', reaction_type: 'service_extra_emoji' })
    const id = expectSuccess(t, await as(app, member).post('/messages', { type: 'stream', to: 'general', topic: 'react', content: 'react' })).id
    expectSuccess(t, await as(app, otherMember).post(`/messages/${id}/reactions`, { emoji_name: 'zulip', emoji_code: 'zulip', reaction_type: 'zulip_extra_emoji' }))
    const [message] = expectSuccess(t, await as(app, otherMember).get('/messages', { anchor: id, num_before: 0, num_after: 0 })).messages
    t.match(message.reactions, [{ emoji_name: 'zulip', reaction_type: 'service_extra_emoji', user_id: otherMember.id }])
    expectSuccess(t, await as(app, otherMember).delete(`/messages/${id}/reactions`, { emoji_name: 'zulip', emoji_code: 'zulip', reaction_type: 'zulip_extra_emoji' }))
    const [after] = expectSuccess(t, await as(app, otherMember).get('/messages', { anchor: id, num_before: 0, num_after: 0 })).messages
    t.same(after.reactions, [])
  })

  t.test('JSON null means not given for register parameters', async (t) => {
    const nulls = expectSuccess(
      t,
      await as(app, member).post('/register', { event_types: 'null', fetch_event_types: 'null', narrow: 'null', client_capabilities: 'null', client_gravatar: 'null', all_public_streams: 'null' }),
    )
    const plain = expectSuccess(t, await as(app, member).post('/register', {}))
    t.same(Object.keys(nulls).sort(), Object.keys(plain).sort(), 'the same keys as with nothing sent')
    t.equal(byId(nulls.realm_users).get(otherMember.id)?.avatar_url, null, "client_gravatar's default applies")
    t.equal(nulls.ignored_parameters_unsupported, undefined)
    // The queue takes every event type and no narrow.
    await as(app, otherMember).post('/users/me/presence', { status: 'active' })
    expectSuccess(t, await as(app, otherMember).post('/messages', { type: 'private', to: [member.id], content: 'to the null queue' }))
    const events = expectSuccess(t, await as(app, member).get('/events', { queue_id: nulls.queue_id, last_event_id: -1 })).events
    t.ok(events.some((e: Body) => e.type === 'message'))
    const implicit = expectSuccess(t, await as(app, member).get('/events', { dont_block: true, event_types: 'null', narrow: 'null' }))
    t.type(implicit.queue_id, 'string')
    expectError(t, await as(app, member).post('/register', { event_types: 'nul' }), { code: 'BAD_REQUEST', status: 400, msg: /event_types/ })
  })

  t.test('bot_type is null for people and the bot type for bots in user objects; GET /users/me has it only for bots', async (t) => {
    const bot = fx.users.bot
    const users = byId(expectSuccess(t, await as(app, member).get('/users')).members)
    t.equal(users.get(otherMember.id)?.bot_type, null)
    t.ok('bot_type' in (users.get(otherMember.id) ?? {}))
    t.equal(users.get(bot.id)?.bot_type, bot.botType)
    t.equal(expectSuccess(t, await as(app, member).get(`/users/${otherMember.id}`)).user.bot_type, null)
    t.equal(expectSuccess(t, await as(app, member).get(`/users/${bot.id}`)).user.bot_type, bot.botType)
    t.notOk('bot_type' in expectSuccess(t, await as(app, member).get('/users/me')), 'not among the spec fields of GET /users/me')
    t.equal(expectSuccess(t, await as(app, bot).get('/users/me')).bot_type, bot.botType)
    const reg = expectSuccess(t, await as(app, member).post('/register', { fetch_event_types: ['realm_user'] }))
    t.equal(byId(reg.realm_users).get(otherMember.id)?.bot_type, null)
    t.equal(byId(reg.realm_users).get(bot.id)?.bot_type, bot.botType)
    const email = `person-${Date.now()}@${fx.realm.stringId}.example.com`
    const events = await captureEvents(app, member, () => as(app, fx.users.admin).post('/users', { email, password: 'a-long-password', full_name: 'A Person' }), {
      register: { event_types: ['realm_user'] },
    })
    const add = events.find((e) => e.type === 'realm_user' && e.op === 'add')
    t.equal(add?.person.bot_type, null)
    t.ok(add && 'bot_type' in add.person)
  })

  t.test('the own avatar_url in /register is a URL even with client_gravatar', async (t) => {
    const reg = expectSuccess(t, await as(app, member).post('/register', { fetch_event_types: ['realm_user'], client_gravatar: true }))
    t.type(reg.avatar_url, 'string')
    t.type(reg.avatar_url_medium, 'string')
  })
})

t.test('with UPSTREAM_NAMES=off only the spec\'s names are understood', async (t) => {
  const { app, fx } = await buildTestApp(t, { config: { upstreamNames: false } })
  const { member, otherMember } = fx.users
  const settings = expectSuccess(t, await anon(app, fx).get('/server_settings'))
  t.match(settings, VERSION)
  t.same(Object.keys(settings).filter((k) => k.startsWith('zulip_')), [])
  const reg = expectSuccess(t, await as(app, member).post('/register', { fetch_event_types: ['realm_user'], client_gravatar: false }))
  t.same(Object.keys(reg).filter((k) => k.startsWith('zulip_')), [])
  t.match(reg, VERSION)
  t.same(reg.ignored_parameters_unsupported, ['client_gravatar'], 'client_gravatar is not a parameter')
  t.equal(byId(reg.realm_users).get(otherMember.id)?.avatar_url, null, 'so the default applies')
  const users = expectSuccess(t, await as(app, member).get('/users', { client_gravatar: false, client_extavatar: true }))
  t.same(users.ignored_parameters_unsupported, ['client_gravatar'], 'sending both is no conflict')
  expectError(t, await as(app, member).post('/users/me/status', { emoji_name: 'zulip', emoji_code: 'zulip', reaction_type: 'zulip_extra_emoji' }), { code: 'BAD_REQUEST', status: 400 })
  expectSuccess(t, await as(app, member).post('/users/me/status', { emoji_name: 'zulip', emoji_code: 'zulip', reaction_type: 'service_extra_emoji' }))
})

t.test('legacy settings events for clients without user_settings_object', async (t) => {
  const { app, fx } = await buildTestApp(t)
  const { member } = fx.users
  const legacy = { client_capabilities: { ...MODERN_CAPABILITIES, user_settings_object: false }, event_types: ['user_settings', 'update_display_settings', 'update_global_notifications'] }
  const patch = (params: Body) => () => as(app, member).patch('/settings', params)
  const email = member.email

  t.test('a notification setting also sends update_global_notifications', async (t) => {
    for (const [name, value] of [
      ['enable_sounds', false],
      ['email_notifications_batching_period_seconds', 300],
      ['presence_enabled', false],
    ] as const) {
      const events = await captureEvents(app, member, patch({ [name]: value }), { register: legacy })
      t.match(
        events.map(({ id: _id, ...e }) => e),
        [
          { type: 'user_settings', op: 'update', property: name, value },
          { type: 'update_global_notifications', user: email, notification_name: name, setting: value },
        ],
        name,
      )
      t.equal(events.length, 2)
    }
  })

  t.test('a display setting also sends update_display_settings', async (t) => {
    for (const [name, value] of [
      ['web_home_view', 'all_messages'],
      ['enable_drafts_synchronization', false],
      ['high_contrast_mode', true],
    ] as const) {
      const events = await captureEvents(app, member, patch({ [name]: value }), { register: legacy })
      t.same(
        events.map(({ id: _id, ...e }) => e),
        [
          { type: 'user_settings', op: 'update', property: name, value },
          { type: 'update_display_settings', user: email, setting_name: name, setting: value },
        ],
        name,
      )
    }
  })

  t.test('settings newer than the legacy events send none; modern clients get none', async (t) => {
    const events = await captureEvents(app, member, patch({ enable_followed_topic_push_notifications: false }), { register: legacy })
    t.same(events.map((e) => e.type), ['user_settings'])
    const modern = await captureEvents(app, member, patch({ enable_sounds: true }), { register: { event_types: legacy.event_types } })
    t.same(modern.map((e) => e.type), ['user_settings'])
  })

  t.test('a queue asking only for the legacy type gets it', async (t) => {
    const events = await captureEvents(app, member, patch({ enable_sounds: false }), {
      register: { ...legacy, event_types: ['update_global_notifications'] },
    })
    t.same(events.map((e) => e.type), ['update_global_notifications'])
  })

  t.test('/register gives the legacy settings at the top level', async (t) => {
    const reg = expectSuccess(t, await as(app, member).post('/register', { fetch_event_types: ['update_display_settings', 'update_global_notifications'] }))
    for (const key of ['web_home_view', 'enable_drafts_synchronization', 'twenty_four_hour_time', 'timezone', 'emojiset_choices']) t.ok(key in reg, key)
    for (const key of ['email_notifications_batching_period_seconds', 'pm_content_in_desktop_notifications', 'enable_sounds', 'available_notification_sounds']) t.ok(key in reg, key)
    t.notOk('receives_typing_notifications' in reg, 'a modern setting is not')
  })
})
