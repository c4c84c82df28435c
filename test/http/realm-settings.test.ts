import t from 'tap'
import { buildTestApp, makeFixture } from '../support/app.js'
import { as } from '../support/client.js'
import { expectError, expectSuccess } from '../support/expect.js'
import { captureEvents } from '../support/events.js'

t.test('PATCH /realm', async (t) => {
  const { app, fx, services } = await buildTestApp(t)
  const { owner, admin, moderator, member, guest } = fx.users

  t.test('changes settings, answers what changed and tells every user', async (t) => {
    const everyoneId = (await services.prisma.userGroup.findFirstOrThrow({ where: { realmId: fx.realm.id, name: 'role:everyone' } })).id
    let body: Record<string, unknown> = {}
    const events = await captureEvents(app, guest, async () => {
      body = expectSuccess(t, await as(app, admin).patch('/realm', { name: 'Renamed', mandatory_topics: true, wildcard_mention_policy: 1, waiting_period_threshold: 3 }))
    })
    t.same(body, { result: 'success', msg: '', name: 'updated', mandatory_topics: true, wildcard_mention_policy: 1, waiting_period_threshold: 3 })
    t.same(events.map(({ id: _id, ...e }) => e), [
      { type: 'realm', op: 'update', property: 'name', value: 'Renamed' },
      { type: 'realm', op: 'update', property: 'mandatory_topics', value: true },
      { type: 'realm', op: 'update', property: 'waiting_period_threshold', value: 3 },
      // The deprecated policy sets the group setting that replaced it; clients hear of both.
      { type: 'realm', op: 'update_dict', property: 'default', data: { can_mention_many_users_group: everyoneId } },
      { type: 'realm', op: 'update', property: 'wildcard_mention_policy', value: 1 },
    ])
    const reg = expectSuccess(t, await as(app, member).post('/register', { fetch_event_types: ['realm'] }))
    t.match(reg, { realm_name: 'Renamed', realm_mandatory_topics: true, realm_wildcard_mention_policy: 1, realm_waiting_period_threshold: 3 })
  })

  t.test('message-editing settings use update_dict', async (t) => {
    const events = await captureEvents(app, member, () => as(app, admin).patch('/realm', { allow_message_editing: false, message_content_edit_limit_seconds: 'unlimited', edit_topic_policy: 2 }))
    const admins = (await services.prisma.userGroup.findFirstOrThrow({ where: { realmId: fx.realm.id, name: 'role:administrators' } })).id
    t.same(events.map(({ id: _id, ...e }) => e), [
      { type: 'realm', op: 'update_dict', property: 'default', data: { allow_message_editing: false } },
      { type: 'realm', op: 'update_dict', property: 'default', data: { message_content_edit_limit_seconds: null } },
      { type: 'realm', op: 'update_dict', property: 'default', data: { can_move_messages_between_topics_group: admins } },
      { type: 'realm', op: 'update_dict', property: 'default', data: { edit_topic_policy: 2 } },
    ])
  })

  t.test('enable_guest_user_dm_warning (level 348): on by default, an administrator turns it off', async (t) => {
    const { app: app2, fx: fx2 } = await buildTestApp(t)
    const register = expectSuccess(t, await as(app2, fx2.users.member).post('/register', { fetch_event_types: ['realm'] }))
    t.equal(register.realm_enable_guest_user_dm_warning, true)
    expectError(t, await as(app2, fx2.users.member).patch('/realm', { enable_guest_user_dm_warning: false }), { code: 'UNAUTHORIZED_PRINCIPAL', status: 400, msg: 'Must be an organization administrator' })
    expectError(t, await as(app2, fx2.users.admin).patch('/realm', { enable_guest_user_dm_warning: 'sometimes' }), { code: 'BAD_REQUEST', status: 400, msg: 'enable_guest_user_dm_warning is not a boolean' })
    const events = await captureEvents(app2, fx2.users.guest, async () => {
      t.same(expectSuccess(t, await as(app2, fx2.users.admin).patch('/realm', { enable_guest_user_dm_warning: false })), { result: 'success', msg: '', enable_guest_user_dm_warning: false })
    })
    t.same(events.map(({ id: _id, ...e }) => e), [{ type: 'realm', op: 'update', property: 'enable_guest_user_dm_warning', value: false }])
    t.equal(expectSuccess(t, await as(app2, fx2.users.member).post('/register', { fetch_event_types: ['realm'] })).realm_enable_guest_user_dm_warning, false)
  })

  t.test('an unchanged value is not an update', async (t) => {
    t.same(expectSuccess(t, await as(app, admin).patch('/realm', { mandatory_topics: true })), { result: 'success', msg: '' })
    t.same(await captureEvents(app, member, () => as(app, admin).patch('/realm', { mandatory_topics: true }), { expectNone: true }), [])
  })

  t.test('group settings take a group of the realm that upstream allows', async (t) => {
    const group = (name: string) => services.prisma.userGroup.findFirstOrThrow({ where: { realmId: fx.realm.id, name } })
    const admins = await group('role:administrators')
    const events = await captureEvents(app, member, () => as(app, admin).patch('/realm', { can_create_public_channel_group: admins.id }))
    t.match(events, [{ type: 'realm', op: 'update_dict', property: 'default', data: { can_create_public_channel_group: admins.id } }])
    expectError(t, await as(app, admin).patch('/realm', { can_create_public_channel_group: (await group('role:everyone')).id }), { code: 'BAD_REQUEST', msg: "'can_create_public_channel_group' setting cannot be set to 'role:everyone' group." })
    expectError(t, await as(app, admin).patch('/realm', { can_access_all_users_group: (await group('role:moderators')).id }), { code: 'BAD_REQUEST', msg: "'can_access_all_users_group' setting cannot be set to 'role:moderators' group." })
    expectError(t, await as(app, admin).patch('/realm', { can_create_private_channel_group: 999999 }), { code: 'BAD_REQUEST', msg: 'Invalid user group' })
  })

  t.test('announcement channels: -1 disables, others must be accessible', async (t) => {
    const events = await captureEvents(app, member, () => as(app, admin).patch('/realm', { new_stream_announcements_stream_id: fx.streams.design.id }))
    t.match(events, [{ type: 'realm', op: 'update', property: 'new_stream_announcements_stream_id', value: fx.streams.design.id }])
    expectError(t, await as(app, admin).patch('/realm', { signup_announcements_stream_id: fx.streams.secret.id }), { code: 'BAD_REQUEST', msg: 'Invalid channel ID' })
    t.match(expectSuccess(t, await as(app, admin).patch('/realm', { new_stream_announcements_stream_id: -1 })), { new_stream_announcements_stream_id: -1 })
  })

  t.test('moderation_request_channel_id (level 331): a private channel or -1; that channel cannot be made public', async (t) => {
    const { general, secret } = fx.streams
    const state = async () => expectSuccess(t, await as(app, member).post('/register', { fetch_event_types: JSON.stringify(['realm']) })).realm_moderation_request_channel_id
    t.equal(await state(), -1, 'none by default')
    expectError(t, await as(app, owner).patch('/realm', { moderation_request_channel_id: general.id }), { code: 'BAD_REQUEST', status: 400, msg: 'Moderation request channel must be private.' })
    const events = await captureEvents(app, member, async () => {
      t.same(expectSuccess(t, await as(app, owner).patch('/realm', { moderation_request_channel_id: secret.id })), { result: 'success', msg: '', moderation_request_channel_id: secret.id })
    })
    t.same(events.map(({ id: _id, ...e }) => e), [{ type: 'realm', op: 'update', property: 'moderation_request_channel_id', value: secret.id }])
    t.equal(await state(), secret.id)
    expectError(t, await as(app, owner).patch(`/streams/${secret.id}`, { is_private: false }), { code: 'BAD_REQUEST', status: 400, msg: 'Moderation request channel must be private.' })
    t.equal((await services.prisma.stream.findUniqueOrThrow({ where: { id: secret.id } })).inviteOnly, true, 'still private')
    expectError(t, await as(app, admin).patch('/realm', { moderation_request_channel_id: secret.id }), { code: 'BAD_REQUEST', msg: 'Invalid channel ID' })
    expectError(t, await as(app, member).patch('/realm', { moderation_request_channel_id: -1 }), { code: 'UNAUTHORIZED_PRINCIPAL', msg: 'Must be an organization administrator' })
    t.same(expectSuccess(t, await as(app, owner).patch('/realm', { moderation_request_channel_id: -1 })), { result: 'success', msg: '', moderation_request_channel_id: -1 })
    t.equal(await state(), -1)
  })

  t.test('rejects bad values naming the setting, writing nothing', async (t) => {
    const before = await services.prisma.realm.findUniqueOrThrow({ where: { id: fx.realm.id } })
    expectError(t, await as(app, admin).patch('/realm', { name: 'ok', edit_topic_policy: 9 }), { code: 'BAD_REQUEST', msg: 'Invalid edit_topic_policy' })
    expectError(t, await as(app, admin).patch('/realm', { default_language: 'xx-nope' }), { code: 'BAD_REQUEST', msg: "Invalid language 'xx-nope'" })
    expectError(t, await as(app, admin).patch('/realm', { video_chat_provider: 7 }), { code: 'BAD_REQUEST', msg: 'Invalid video_chat_provider 7' })
    expectError(t, await as(app, admin).patch('/realm', { giphy_rating: 9 }), { code: 'BAD_REQUEST', msg: 'Invalid giphy_rating 9' })
    expectError(t, await as(app, admin).patch('/realm', { name: 'n'.repeat(41) }), { code: 'BAD_REQUEST', msg: 'name is too long (limit: 40 characters)' })
    expectError(t, await as(app, admin).patch('/realm', { message_content_delete_limit_seconds: -3 }), { code: 'REQUEST_VARIABLE_INVALID' })
    expectError(t, await as(app, admin).patch('/realm', { mandatory_topics: 'maybe' }), { code: 'BAD_REQUEST', msg: /mandatory_topics/ })
    expectError(t, await as(app, admin).patch('/realm', { waiting_period_threshold: -1 }), { code: 'BAD_REQUEST', msg: /waiting_period_threshold/ })
    t.same(await services.prisma.realm.findUniqueOrThrow({ where: { id: fx.realm.id } }), before)
  })

  t.test('administrators only; owners for some settings', async (t) => {
    for (const who of [moderator, member, guest]) {
      expectError(t, await as(app, who).patch('/realm', { mandatory_topics: false }), { code: 'UNAUTHORIZED_PRINCIPAL', msg: 'Must be an organization administrator' })
    }
    for (const params of [{ invite_required: false }, { message_retention_days: 30 }, { invite_to_realm_policy: 2 }, { emails_restricted_to_domains: true }]) {
      expectError(t, await as(app, admin).patch('/realm', params), { code: 'UNAUTHORIZED_PRINCIPAL', msg: 'Must be an organization owner' })
    }
    t.same(expectSuccess(t, await as(app, owner).patch('/realm', { message_retention_days: 'unlimited', invite_required: false })), { result: 'success', msg: '', invite_required: false })
    t.match(expectSuccess(t, await as(app, owner).patch('/realm', { message_retention_days: 30 })), { message_retention_days: 30 })
  })

  t.test('changes only the caller’s organization', async (t) => {
    const other = await makeFixture(services)
    expectSuccess(t, await as(app, other.users.owner, other).patch('/realm', { name: 'Elsewhere' }))
    t.equal((await services.prisma.realm.findUniqueOrThrow({ where: { id: fx.realm.id } })).name, 'Renamed')
  })
})
