// The organization's group permission settings (levels 280–367): register,
// PATCH /realm with {new, old} group-setting values (named and anonymous
// groups, upstream's refusals and conflict error), their events, and each
// setting enforced where the policy it replaced was.
import t from 'tap'
import { buildTestApp } from '../support/app.js'
import { as } from '../support/client.js'
import { expectError, expectSuccess } from '../support/expect.js'
import { captureEvents } from '../support/events.js'
import { checkStateAfter } from '../support/state-check.js'
import { sendTo } from './conversation-support.js'

const REALM_SETTINGS = [
  'create_multiuse_invite_group', 'can_access_all_users_group', 'can_add_custom_emoji_group', 'can_add_subscribers_group',
  'can_create_bots_group', 'can_create_groups', 'can_create_private_channel_group', 'can_create_public_channel_group',
  'can_create_web_public_channel_group', 'can_create_write_only_bots_group', 'can_delete_any_message_group',
  'can_delete_own_message_group', 'can_invite_users_group', 'can_manage_all_groups', 'can_manage_billing_group',
  'can_mention_many_users_group', 'can_move_messages_between_channels_group', 'can_move_messages_between_topics_group',
  'can_resolve_topics_group', 'can_summarize_topics_group', 'direct_message_initiator_group', 'direct_message_permission_group',
]

t.test('realm group permission settings', async (t) => {
  const { app, fx, services } = await buildTestApp(t)
  const { owner, admin, moderator, member, otherMember, guest } = fx.users
  const prisma = services.prisma
  const system = async (name: string) => (await prisma.userGroup.findFirstOrThrow({ where: { realmId: fx.realm.id, name } })).id
  const [everyone, members, moderators, admins, owners, nobody, internet] = await Promise.all(
    ['role:everyone', 'role:members', 'role:moderators', 'role:administrators', 'role:owners', 'role:nobody', 'role:internet'].map(system),
  )
  const set = async (setting: string, value: unknown) => expectSuccess(t, await as(app, owner).patch('/realm', { [setting]: { new: value } }))
  const only = (...users: { id: number }[]) => ({ direct_members: users.map((u) => u.id).sort((a, b) => a - b), direct_subgroups: [] })

  t.test('register reports every setting, its configuration and the derived policies', async (t) => {
    const reg = expectSuccess(t, await as(app, member).post('/register', { fetch_event_types: ['realm', 'realm_user'] }))
    for (const name of REALM_SETTINGS) t.type(reg[`realm_${name}`], 'number', name)
    t.match(reg, {
      realm_can_delete_any_message_group: admins,
      realm_can_delete_own_message_group: everyone,
      realm_can_manage_all_groups: owners,
      realm_can_create_web_public_channel_group: owners,
      realm_can_mention_many_users_group: admins,
      realm_edit_topic_policy: 5,
      realm_wildcard_mention_policy: 5,
      realm_create_web_public_stream_policy: 7,
      realm_bot_creation_policy: 1,
      realm_user_group_edit_policy: 1,
      server_can_summarize_topics: false,
      can_create_public_streams: true,
      can_create_web_public_streams: false,
      can_subscribe_other_users: true,
      can_invite_others_to_realm: true,
    })
    const supported = reg.server_supported_permission_settings as { realm: Record<string, unknown>; stream: Record<string, unknown>; group: Record<string, unknown> }
    t.same(Object.keys(supported.realm).sort(), [...REALM_SETTINGS].sort())
    t.same(supported.realm.can_create_web_public_channel_group, {
      require_system_group: true, allow_internet_group: false, allow_nobody_group: true, allow_everyone_group: false,
      default_group_name: 'role:owners', default_for_system_groups: null,
      allowed_system_groups: ['role:moderators', 'role:administrators', 'role:owners', 'role:nobody'],
    })
    t.ok(supported.stream.can_remove_subscribers_group)
    t.match(supported.group.can_mention_group, { default_group_name: 'role:everyone', default_for_system_groups: 'role:nobody' })
  })

  t.test('an anonymous value: stored, reported, compared as a set, replaced', async (t) => {
    const value = { direct_members: [member.id], direct_subgroups: [moderators] }
    const events = await captureEvents(app, otherMember, async () => {
      t.same(expectSuccess(t, await as(app, owner).patch('/realm', { can_invite_users_group: { new: value, old: members } })), { result: 'success', msg: '', can_invite_users_group: value })
    })
    t.same(events.map(({ id: _id, ...e }) => e), [
      { type: 'realm', op: 'update_dict', property: 'default', data: { can_invite_users_group: value } },
    ], 'the derived invite_to_realm_policy stays 1 (members, the closest policy), so no policy event')
    const reg = expectSuccess(t, await as(app, member).post('/register', { fetch_event_types: ['realm'] }))
    t.same(reg.realm_can_invite_users_group, value)
    // Unchanged (same sets, other order): nothing happens.
    t.same(await captureEvents(app, member, () => as(app, owner).patch('/realm', { can_invite_users_group: { new: { direct_members: [member.id], direct_subgroups: [moderators] } } }), { expectNone: true }), [])
    // Updated in place: still one anonymous group row.
    const before = await prisma.userGroup.count({ where: { realmId: fx.realm.id, isAnonymous: true } })
    await set('can_invite_users_group', only(member, otherMember))
    t.equal(await prisma.userGroup.count({ where: { realmId: fx.realm.id, isAnonymous: true } }), before)
    // Back to a named group: the anonymous row goes, and never shows among the groups.
    await set('can_invite_users_group', members)
    t.equal(await prisma.userGroup.count({ where: { realmId: fx.realm.id, isAnonymous: true } }), before - 1)
    const groups = expectSuccess(t, await as(app, member).get('/user_groups')).user_groups as { name: string }[]
    t.notOk(groups.some((g) => g.name.startsWith('@')), 'anonymous groups are not listed')
    const events2 = await captureEvents(app, otherMember, () => set('can_invite_users_group', admins))
    t.same(events2.map(({ id: _id, ...e }) => e), [
      { type: 'realm', op: 'update_dict', property: 'default', data: { can_invite_users_group: admins } },
      { type: 'realm', op: 'update', property: 'invite_to_realm_policy', value: 2 },
    ], 'a policy that moves is announced in its own form')
    await set('can_invite_users_group', members)
  })

  t.test('refusals: old mismatch, unknown or deactivated groups and users, system groups upstream refuses', async (t) => {
    const patch = (user: typeof owner, params: Record<string, unknown>) => as(app, user).patch('/realm', params)
    expectError(t, await patch(owner, { can_add_custom_emoji_group: { new: admins, old: moderators } }), {
      code: 'EXPECTATION_MISMATCH', status: 400, msg: "'old' value does not match the expected value.",
    })
    expectError(t, await patch(owner, { can_add_custom_emoji_group: { new: 99_999_999 } }), { code: 'BAD_REQUEST', msg: 'Invalid user group' })
    expectError(t, await patch(owner, { can_add_custom_emoji_group: { new: { direct_members: [], direct_subgroups: [99_999_999, admins] } } }), {
      code: 'BAD_REQUEST', msg: 'Invalid user group ID: 99999999',
    })
    expectError(t, await patch(owner, { can_add_custom_emoji_group: { new: { direct_members: [99_999_999], direct_subgroups: [] } } }), {
      code: 'BAD_REQUEST', msg: 'Invalid user ID: 99999999',
    })
    const team = expectSuccess(t, await as(app, admin).post('/user_groups/create', { name: 'perm-team', description: '', members: [member.id] })).group_id as number | undefined
    const teamId = team ?? (await prisma.userGroup.findFirstOrThrow({ where: { realmId: fx.realm.id, name: 'perm-team' } })).id
    await prisma.userGroup.update({ where: { id: teamId }, data: { deactivated: true } })
    expectError(t, await patch(owner, { can_add_custom_emoji_group: { new: teamId } }), { code: 'BAD_REQUEST', msg: 'User group is deactivated.' })
    expectError(t, await patch(owner, { can_add_custom_emoji_group: { new: { direct_members: [member.id], direct_subgroups: [teamId] } } }), {
      code: 'BAD_REQUEST', msg: 'User group is deactivated.',
    })
    await prisma.userGroup.update({ where: { id: teamId }, data: { deactivated: false } })
    const refused: [string, number, string][] = [
      ['can_add_custom_emoji_group', everyone, 'role:everyone'],
      ['can_add_custom_emoji_group', internet, 'role:internet'],
      ['can_manage_all_groups', nobody, 'role:nobody'],
      ['can_create_web_public_channel_group', members, 'role:members'],
      ['can_access_all_users_group', moderators, 'role:moderators'],
    ]
    for (const [setting, group, name] of refused) {
      expectError(t, await patch(owner, { [setting]: { new: group } }), { code: 'BAD_REQUEST', msg: `'${setting}' setting cannot be set to '${name}' group.` })
    }
    expectError(t, await patch(owner, { can_access_all_users_group: { new: only(member) } }), {
      code: 'SYSTEM_GROUP_REQUIRED', msg: "'can_access_all_users_group' must be a system user group.",
    })
    expectError(t, await patch(owner, { can_create_web_public_channel_group: { new: teamId } }), {
      code: 'SYSTEM_GROUP_REQUIRED', msg: "'can_create_web_public_channel_group' must be a system user group.",
    })
    // Shapes: a 400 naming the setting.
    for (const bad of ['"x"', '[1]', '{"new": {"direct_members": [1]}}', '{"new": 1, "older": 2}', '{"new": -4}']) {
      const res = await as(app, owner).patch('/realm', { can_add_custom_emoji_group: bad })
      expectError(t, res, { code: 'BAD_REQUEST', status: 400 })
      t.match(JSON.parse(res.body).msg, /can_add_custom_emoji_group/, bad)
    }
    expectError(t, await patch(owner, { can_add_custom_emoji_group: 'not json' }), { code: 'BAD_REQUEST', status: 400 })
    // Owner-only settings.
    for (const setting of ['can_create_groups', 'can_invite_users_group', 'can_manage_all_groups', 'can_manage_billing_group', 'create_multiuse_invite_group']) {
      expectError(t, await patch(admin, { [setting]: { new: admins } }), { code: 'UNAUTHORIZED_PRINCIPAL', msg: 'Must be an organization owner' })
    }
    expectError(t, await patch(moderator, { can_add_custom_emoji_group: { new: admins } }), { code: 'UNAUTHORIZED_PRINCIPAL', msg: 'Must be an organization administrator' })
    t.equal((await prisma.realm.findUniqueOrThrow({ where: { id: fx.realm.id } })).canAddCustomEmojiGroupId, members, 'nothing was written')
  })

  t.test('deleting messages: can_delete_own_message_group and can_delete_any_message_group', async (t) => {
    await set('can_delete_own_message_group', admins)
    const own = await sendTo(t, app, member, 'general', 'perm-delete', 'mine')
    expectError(t, await as(app, member).delete(`/messages/${own}`), { code: 'BAD_REQUEST', msg: "You don't have permission to delete this message" })
    await set('can_delete_any_message_group', only(member))
    const others = await sendTo(t, app, otherMember, 'general', 'perm-delete', 'theirs')
    expectSuccess(t, await as(app, member).delete(`/messages/${others}`))
    expectSuccess(t, await as(app, member).delete(`/messages/${own}`))
    const third = await sendTo(t, app, otherMember, 'general', 'perm-delete', 'again')
    expectError(t, await as(app, admin).delete(`/messages/${third}`), { code: 'BAD_REQUEST', msg: "You don't have permission to delete this message" })
    await set('can_delete_any_message_group', admins)
    await set('can_delete_own_message_group', everyone)
  })

  t.test('moving and resolving: between channels, between topics, resolving apart', async (t) => {
    const id = await sendTo(t, app, member, 'general', 'perm-move', 'x')
    await set('can_move_messages_between_topics_group', nobody)
    await set('can_resolve_topics_group', only(member))
    expectError(t, await as(app, member).patch(`/messages/${id}`, { topic: 'elsewhere' }), { code: 'BAD_REQUEST', msg: "You don't have permission to edit this message" })
    expectSuccess(t, await as(app, member).patch(`/messages/${id}`, { topic: '✔ perm-move', propagate_mode: 'change_all' }))
    expectError(t, await as(app, otherMember).patch(`/messages/${id}`, { topic: 'perm-move', propagate_mode: 'change_all' }), {
      code: 'BAD_REQUEST', msg: "You don't have permission to edit this message",
    })
    await set('can_move_messages_between_topics_group', everyone)
    await set('can_resolve_topics_group', everyone)
    await set('can_move_messages_between_channels_group', only(otherMember))
    expectError(t, await as(app, member).patch(`/messages/${id}`, { stream_id: fx.streams.design.id }), { code: 'BAD_REQUEST', msg: "You don't have permission to move this message" })
    expectSuccess(t, await as(app, otherMember).patch(`/messages/${id}`, { stream_id: fx.streams.design.id }))
    await set('can_move_messages_between_channels_group', members)
  })

  t.test('invitations, subscribing others, custom emoji, groups', async (t) => {
    await set('can_invite_users_group', nobody)
    expectError(t, await as(app, owner).post('/invites', { invitee_emails: 'perm-new@example.com', stream_ids: [] }), { code: 'BAD_REQUEST', msg: 'Insufficient permission' })
    await set('can_invite_users_group', members)
    await set('create_multiuse_invite_group', only(member))
    expectSuccess(t, await as(app, member).post('/invites/multiuse', {}))
    expectError(t, await as(app, admin).post('/invites/multiuse', {}), { code: 'BAD_REQUEST', msg: 'Insufficient permission' })
    await set('create_multiuse_invite_group', admins)

    await set('can_add_subscribers_group', only(admin))
    expectError(t, await as(app, member).post('/users/me/subscriptions', { subscriptions: [{ name: 'general' }], principals: [guest.id] }), {
      code: 'BAD_REQUEST', msg: 'Insufficient permission',
    })
    expectSuccess(t, await as(app, admin).post('/users/me/subscriptions', { subscriptions: [{ name: 'general' }], principals: [guest.id] }))
    const reg = expectSuccess(t, await as(app, member).post('/register', { fetch_event_types: ['realm_user'] }))
    t.equal(reg.can_subscribe_other_users, false)
    await set('can_add_subscribers_group', members)

    await set('can_create_groups', admins)
    expectError(t, await as(app, member).post('/user_groups/create', { name: 'perm-denied', description: '', members: [] }), { code: 'BAD_REQUEST', msg: 'Insufficient permission' })
    expectSuccess(t, await as(app, admin).post('/user_groups/create', { name: 'perm-made', description: '', members: [admin.id] }))
    const made = await system('perm-made')
    // can_manage_all_groups reaches groups the user is not in.
    expectError(t, await as(app, member).patch(`/user_groups/${made}`, { description: 'x' }), { code: 'BAD_REQUEST', msg: 'Insufficient permission' })
    await set('can_manage_all_groups', only(member))
    expectSuccess(t, await as(app, member).patch(`/user_groups/${made}`, { description: 'managed' }))
    await set('can_manage_all_groups', owners)
    await set('can_create_groups', members)

    await set('can_create_public_channel_group', only(guest, member))
    expectError(t, await as(app, guest).post('/users/me/subscriptions', { subscriptions: [{ name: 'perm-guest-made' }] }), { code: 'BAD_REQUEST' })
    expectSuccess(t, await as(app, member).post('/users/me/subscriptions', { subscriptions: [{ name: 'perm-member-made' }] }))
    expectError(t, await as(app, otherMember).post('/users/me/subscriptions', { subscriptions: [{ name: 'perm-other-made' }] }), { code: 'BAD_REQUEST', msg: 'Insufficient permission' })
    await set('can_create_public_channel_group', members)
  })

  t.test('wildcard mentions in large channels: can_mention_many_users_group', async (t) => {
    const subscribers = []
    for (let i = 0; i < 16; i++) subscribers.push(await fx.newUser({ fullName: `Perm Crowd ${i}` }))
    expectSuccess(t, await as(app, owner).post('/users/me/subscriptions', { subscriptions: [{ name: 'perm-crowd' }], principals: [member.id, otherMember.id, ...subscribers.map((u) => u.id)] }))
    await set('can_mention_many_users_group', only(member))
    expectSuccess(t, await as(app, member).post('/messages', { type: 'stream', to: 'perm-crowd', topic: 't', content: '@**all** hello' }))
    expectError(t, await as(app, otherMember).post('/messages', { type: 'stream', to: 'perm-crowd', topic: 't', content: '@**all** hello' }), {
      code: 'STREAM_WILDCARD_MENTION_NOT_ALLOWED',
    })
    await set('can_mention_many_users_group', admins)
  })

  t.test('state check: group settings and the policies derived from them', async (t) => {
    // The member loses can_create_public_streams and can_subscribe_other_users: the client recomputes them from the settings.
    await checkStateAfter(t, app, member, () => as(app, owner).patch('/realm', { can_create_public_channel_group: { new: only(otherMember) } }), {
      expectTypes: ['realm/update_dict'],
    })
    await checkStateAfter(t, app, member, () => as(app, owner).patch('/realm', { can_add_subscribers_group: { new: { direct_members: [], direct_subgroups: [admins, moderators] } }, edit_topic_policy: 2 }), {
      expectTypes: ['realm/update_dict'],
    })
    await checkStateAfter(t, app, member, () => as(app, owner).patch('/realm', { can_add_custom_emoji_group: { new: moderators } }), {
      expectTypes: ['realm/update_dict', 'realm/update'],
    })
    await checkStateAfter(t, app, guest, () => as(app, owner).patch('/realm', { bot_creation_policy: 3, can_create_public_channel_group: { new: members } }), {
      expectTypes: ['realm/update_dict', 'realm/update'],
    })
  })
})
