// Events keep clients' state exact for the organization's administration and
// the user's own lists: channel administration (PATCH and DELETE
// /streams/{id}), default channels, organization settings (PATCH /realm),
// custom emoji, linkifiers, muted users, legacy muted topics, subgroups,
// uploads, new users, a restricted guest losing sight of a user and that
// user's messages and reactions reaching the guest. Each
// change runs under checkStateAfter (test/support/state-check.ts): a modern
// and a legacy client applying the events they receive end where a fresh
// register does. test/http/state-consistency.test.ts covers messages,
// subscriptions and the user's settings.
import t from 'tap'
import { buildTestApp } from '../support/app.js'
import { as } from '../support/client.js'
import { expectSuccess } from '../support/expect.js'
import { sendMultipart, TINY_PNG } from '../support/multipart.js'
import { checkStateAfter } from '../support/state-check.js'

t.test('register state + events = fresh register, administration', async (t) => {
  const { app, fx, services } = await buildTestApp(t)
  const { owner, admin, member, otherMember: other, guest } = fx.users
  const subscribe = async (by: typeof member, name: string, principals: (typeof member)[] = [], extra: Record<string, unknown> = {}) =>
    expectSuccess(t, await as(app, by).post('/users/me/subscriptions', { subscriptions: [{ name }], principals: principals.map((u) => u.id), ...extra }))
  const streamId = async (name: string): Promise<number> => (await services.prisma.stream.findFirstOrThrow({ where: { realmId: fx.realm.id, name } })).id

  t.test('channel administration: description, name, posting policy', async (t) => {
    await subscribe(admin, 'admin-edits', [member])
    const id = await streamId('admin-edits')
    // A subscriber and a bystander who sees the public channel.
    await checkStateAfter(t, app, member, () => as(app, admin).patch(`/streams/${id}`, { description: 'A **new** description' }), {
      expectTypes: ['stream/update'],
    })
    await checkStateAfter(t, app, other, () => as(app, admin).patch(`/streams/${id}`, { new_name: 'admin-edits-renamed' }), { expectTypes: ['stream/update'] })
    await checkStateAfter(t, app, member, () => as(app, admin).patch(`/streams/${id}`, { stream_post_policy: 2 }), { expectTypes: ['stream/update'] })
  })

  t.test('channel group settings (levels 320–357): values, and metadata access granted and taken away', async (t) => {
    await subscribe(admin, 'admin-groups', [admin, member], { invite_only: true })
    const id = await streamId('admin-groups')
    const anonymous = JSON.stringify({ direct_members: [member.id], direct_subgroups: [] })
    await checkStateAfter(t, app, member, () => as(app, admin).patch(`/streams/${id}`, { can_send_message_group: anonymous, can_remove_subscribers_group: anonymous }), {
      expectTypes: ['stream/update'],
    })
    // A bystander put in can_administer_channel_group (or can_subscribe_group) learns of the private channel, with its subscribers…
    const grant = JSON.stringify({ new: { direct_members: [admin.id, other.id], direct_subgroups: [] } })
    await checkStateAfter(t, app, other, () => as(app, admin).patch(`/streams/${id}`, { can_administer_channel_group: grant }), {
      expectTypes: ['stream/create', 'subscription/peer_add'],
    })
    await checkStateAfter(t, app, other, () => as(app, admin).patch(`/streams/${id}`, { description: 'seen by its channel administrator' }), { expectTypes: ['stream/update'] })
    await checkStateAfter(t, app, other, () => as(app, admin).post('/users/me/subscriptions', { subscriptions: [{ name: 'admin-groups' }], principals: [owner.id] }), {
      expectTypes: ['subscription/peer_add'],
    })
    // … and forgets it when taken out again.
    await checkStateAfter(t, app, other, () => as(app, admin).patch(`/streams/${id}`, { can_administer_channel_group: JSON.stringify({ direct_members: [admin.id], direct_subgroups: [] }) }), {
      expectTypes: ['stream/delete'],
    })
    await checkStateAfter(t, app, other, () => as(app, admin).patch(`/streams/${id}`, { can_subscribe_group: JSON.stringify({ direct_members: [other.id], direct_subgroups: [] }) }), {
      expectTypes: ['stream/create', 'subscription/peer_add'],
    })
  })

  t.test('channel administration: privacy, as seen by a subscriber and by a bystander', async (t) => {
    // Making a private channel public needs content access: the administrator subscribes too.
    await subscribe(admin, 'admin-privacy', [admin, member])
    const id = await streamId('admin-privacy')
    await checkStateAfter(t, app, member, () => as(app, admin).patch(`/streams/${id}`, { is_private: true }), { expectTypes: ['stream/update'] })
    // The bystander loses sight of it, then sees it again with its subscribers.
    await checkStateAfter(t, app, other, () => as(app, admin).patch(`/streams/${id}`, { is_private: false }), {
      expectTypes: ['stream/create', 'subscription/peer_add'],
    })
    await checkStateAfter(t, app, other, () => as(app, admin).patch(`/streams/${id}`, { is_private: true }), { expectTypes: ['stream/delete'] })
  })

  t.test('a private channel created with a bystander in can_subscribe_group: it hears of it, and of its first message and activity', async (t) => {
    const grant = JSON.stringify({ direct_members: [other.id], direct_subgroups: [] })
    await checkStateAfter(t, app, other, () => as(app, admin).post('/users/me/subscriptions', { subscriptions: [{ name: 'granted-first' }], invite_only: true, history_public_to_subscribers: true, can_subscribe_group: grant }), {
      expectTypes: ['stream/create'],
    })
    await checkStateAfter(t, app, other, () => as(app, admin).post('/messages', { type: 'stream', to: 'granted-first', topic: 't', content: 'hello' }), {
      expectTypes: [],
    })
  })

  t.test('a channel setting whose anonymous value names a user who is deactivated, then reactivated', async (t) => {
    const leaving = await fx.newUser({ fullName: 'Leaving Member' })
    await subscribe(admin, 'admin-anon-members', [member], { can_send_message_group: JSON.stringify({ direct_members: [leaving.id, admin.id], direct_subgroups: [] }) })
    await checkStateAfter(t, app, member, () => as(app, admin).delete(`/users/${leaving.id}`), { expectTypes: ['realm_user/update'] })
    await checkStateAfter(t, app, member, () => as(app, admin).post(`/users/${leaving.id}/reactivate`), { expectTypes: ['stream/update'] })
  })

  t.test('default channels', async (t) => {
    await subscribe(admin, 'admin-default')
    const id = await streamId('admin-default')
    await checkStateAfter(t, app, member, () => as(app, admin).post('/default_streams', { stream_id: id }), { expectTypes: ['default_streams'] })
    await checkStateAfter(t, app, member, () => as(app, admin).delete('/default_streams', { stream_id: id }), { expectTypes: ['default_streams'] })
    await checkStateAfter(t, app, member, () => as(app, admin).patch(`/streams/${id}`, { is_default_stream: true }), { expectTypes: ['default_streams'] })
  })

  t.test('archiving a channel', async (t) => {
    await subscribe(admin, 'admin-archive', [member])
    const id = await streamId('admin-archive')
    // The modern client (archived_channels) gets stream update is_archived, the legacy one stream delete.
    await checkStateAfter(t, app, member, () => as(app, admin).delete(`/streams/${id}`), { expectTypes: ['stream/update'], expectLegacyTypes: ['stream/delete'] })
    await subscribe(admin, 'admin-archive-2', [member])
    const second = await streamId('admin-archive-2')
    await checkStateAfter(t, app, other, () => as(app, admin).delete(`/streams/${second}`), { expectTypes: ['stream/update'], expectLegacyTypes: ['stream/delete'] })
  })

  t.test('organization settings', async (t) => {
    await checkStateAfter(t, app, member, () => as(app, admin).patch('/realm', { name: 'Renamed organization', waiting_period_threshold: 3 }), {
      expectTypes: ['realm/update'],
    })
    await checkStateAfter(t, app, member, () => as(app, owner).patch('/realm', { message_content_edit_limit_seconds: 1200, edit_topic_policy: 2 }), {
      expectTypes: ['realm/update_dict'],
    })
    await checkStateAfter(t, app, guest, () => as(app, admin).patch('/realm', { enable_guest_user_dm_warning: false }), { expectTypes: ['realm/update'] })
    // One column, two wire forms (level 358): "none" moves the deprecated boolean too.
    await checkStateAfter(t, app, member, () => as(app, admin).patch('/realm', { message_edit_history_visibility_policy: 'none' }), { expectTypes: ['realm/update'] })
    await checkStateAfter(t, app, member, () => as(app, admin).patch('/realm', { allow_edit_history: true }), { expectTypes: ['realm/update'] })
    await checkStateAfter(t, app, member, () => as(app, owner).patch('/realm', { moderation_request_channel_id: fx.streams.secret.id }), { expectTypes: ['realm/update'] })
  })

  t.test('custom emoji', async (t) => {
    await checkStateAfter(
      t,
      app,
      other,
      async () => expectSuccess(t, await sendMultipart(app, member, 'POST', '/realm/emoji/state_emoji', [{ name: 'file', fileName: 'e.png', contentType: 'image/png', data: TINY_PNG }])),
      { expectTypes: ['realm_emoji/update'] },
    )
    await checkStateAfter(t, app, other, () => as(app, admin).delete('/realm/emoji/state_emoji'), { expectTypes: ['realm_emoji/update'] })
  })

  t.test('linkifiers', async (t) => {
    let id = 0
    await checkStateAfter(
      t,
      app,
      member,
      async () => {
        id = expectSuccess(t, await as(app, admin).post('/realm/filters', { pattern: '#(?P<id>[0-9]+)', url_template: 'https://tracker.example.com/{id}' })).id as number
      },
      { expectTypes: ['realm_linkifiers', 'realm_filters'] },
    )
    await checkStateAfter(t, app, member, () => as(app, admin).patch(`/realm/filters/${id}`, { pattern: 'T(?P<id>[0-9]+)', url_template: 'https://tracker.example.com/t/{id}' }), {
      expectTypes: ['realm_linkifiers'],
    })
    await checkStateAfter(t, app, member, () => as(app, admin).delete(`/realm/filters/${id}`), { expectTypes: ['realm_linkifiers'] })
  })

  t.test('muted users', async (t) => {
    await checkStateAfter(t, app, member, () => as(app, member).post(`/users/me/muted_users/${other.id}`), { expectTypes: ['muted_users'] })
    await checkStateAfter(t, app, member, () => as(app, member).delete(`/users/me/muted_users/${other.id}`), { expectTypes: ['muted_users'] })
  })

  t.test('muted topics, the legacy endpoint', async (t) => {
    const stream_id = fx.streams.general.id
    await checkStateAfter(t, app, member, () => as(app, member).patch('/users/me/subscriptions/muted_topics', { stream_id, topic: 'legacy-muted', op: 'add' }), {
      expectTypes: ['muted_topics', 'user_topic'],
    })
    await checkStateAfter(t, app, member, () => as(app, member).patch('/users/me/subscriptions/muted_topics', { stream_id, topic: 'legacy-muted', op: 'remove' }), {
      expectTypes: ['muted_topics', 'user_topic'],
    })
  })

  t.test('subgroups', async (t) => {
    const create = async (name: string): Promise<number> => {
      expectSuccess(t, await as(app, admin).post('/user_groups/create', { name, description: name, members: [member.id] }))
      return (await services.prisma.userGroup.findFirstOrThrow({ where: { realmId: fx.realm.id, name } })).id
    }
    const [parent, child] = [await create('state-parent'), await create('state-child')]
    await checkStateAfter(t, app, other, () => as(app, admin).post(`/user_groups/${parent}/subgroups`, { add: [child] }), { expectTypes: ['user_group/add_subgroups'] })
    await checkStateAfter(t, app, other, () => as(app, admin).post(`/user_groups/${parent}/subgroups`, { delete: [child] }), {
      expectTypes: ['user_group/remove_subgroups'],
    })
  })

  t.test('uploads', async (t) => {
    await checkStateAfter(
      t,
      app,
      member,
      async () => expectSuccess(t, await sendMultipart(app, member, 'POST', '/user_uploads', [{ name: 'file', fileName: 'notes.txt', contentType: 'text/plain', data: Buffer.from('notes') }])),
      { expectTypes: ['attachment/add'] },
    )
    const row = await services.prisma.attachment.findFirstOrThrow({ where: { ownerId: member.id, fileName: 'notes.txt' } })
    await checkStateAfter(t, app, member, () => as(app, member).post('/messages', { type: 'stream', to: 'general', topic: 'uploads', content: `[notes](/user_uploads/${row.pathId})` }), {
      expectTypes: ['message', 'attachment/update'],
    })
    await checkStateAfter(t, app, member, () => as(app, member).delete(`/attachments/${row.id}`), { expectTypes: ['attachment/remove'] })
  })

  t.test('a new user', async (t) => {
    await checkStateAfter(
      t,
      app,
      member,
      () => as(app, admin).post('/users', { email: `state-new@${fx.realm.stringId}.example.com`, password: 'a-long-password', full_name: 'State Newcomer' }),
      { expectTypes: ['realm_user/add'] },
    )
  })

  // Last: it restricts what guests may see for the rest of the file.
  t.test('a restricted guest gains and loses sight of a user', async (t) => {
    const members = await services.prisma.userGroup.findFirstOrThrow({ where: { realmId: fx.realm.id, name: 'role:members' } })
    await services.prisma.realm.update({ where: { id: fx.realm.id }, data: { canAccessAllUsersGroupId: members.id } })
    const stranger = await fx.newUser({ fullName: 'State Stranger' })
    await services.prisma.subscription.deleteMany({ where: { userId: stranger.id } })
    await subscribe(admin, 'guest-and-stranger', [guest])
    await checkStateAfter(t, app, guest, () => subscribe(admin, 'guest-and-stranger', [stranger]), { expectTypes: ['realm_user/add'] })
    await checkStateAfter(t, app, guest, () => as(app, admin).delete('/users/me/subscriptions', { subscriptions: ['guest-and-stranger'], principals: [stranger.id] }), {
      expectTypes: ['realm_user/remove'],
    })
    // The stranger, no longer subscribed, posts and reacts there: the guest's events show the "Unknown user" stand-in.
    const events = await checkStateAfter(t, app, guest, () => as(app, stranger).post('/messages', { type: 'stream', to: 'guest-and-stranger', topic: 'unseen', content: 'hello' }), {
      expectTypes: ['message'],
    })
    const posted = events.find((e) => e.type === 'message')?.message as Record<string, unknown> | undefined
    t.equal(posted?.sender_full_name, 'Unknown user', "the stranger's message reaches the guest from an unknown user")
    const reacted = await checkStateAfter(t, app, guest, () => as(app, stranger).post(`/messages/${String(posted?.id)}/reactions`, { emoji_name: 'smile' }), {
      expectTypes: ['reaction/add'],
    })
    t.equal(reacted.find((e) => e.type === 'reaction')?.user?.full_name, 'Unknown user', "the stranger's reaction likewise")
    // The stranger's deactivation: the guest, who cannot access it, is told the groups and group-setting values it leaves.
    const group = expectSuccess(t, await as(app, admin).post('/user_groups/create', {
      name: 'stranger-crew', description: '', members: [stranger.id], can_leave_group: { direct_members: [stranger.id, admin.id], direct_subgroups: [] },
    })).group_id as number
    expectSuccess(t, await as(app, owner).patch('/realm', { can_add_custom_emoji_group: { new: { direct_members: [stranger.id], direct_subgroups: [members.id] } } }))
    const left = await checkStateAfter(t, app, guest, () => as(app, admin).delete(`/users/${stranger.id}`), {
      expectTypes: ['user_group/remove_members', 'user_group/update', 'realm/update_dict'],
    })
    t.match(left.filter((e) => e.type === 'user_group' && e.op === 'update'), [{ group_id: group, data: { can_leave_group: { direct_members: [admin.id], direct_subgroups: [] } } }])
  })
})
