// Events keep clients' state exact: for every action, a client that applies
// the events it receives to its register state ends where a fresh register
// does (checkStateAfter, test/support/state-check.ts), for a modern and a
// legacy client, from the point of view of the actor and of a bystander.
import t from 'tap'
import { buildTestApp } from '../support/app.js'
import { as } from '../support/client.js'
import { expectSuccess } from '../support/expect.js'
import { checkStateAfter } from '../support/state-check.js'
import { ROLE } from '../../src/domain/roles.js'

t.test('register state + events = fresh register', async (t) => {
  const { app, fx } = await buildTestApp(t)
  const owner = await fx.user('owner')
  const admin = await fx.user('admin')
  const member = await fx.user('member')
  const other = await fx.user('otherMember')
  const send = async (from: typeof member, params: Record<string, unknown>): Promise<number> =>
    expectSuccess(t, await as(app, from).post('/messages', params)).id as number
  const toGeneral = (content: string, topic = 'state') => ({ type: 'stream', to: fx.streams.general.name, topic, content })

  t.test('creating a channel by subscribing to it', async (t) => {
    await checkStateAfter(t, app, member, () => as(app, member).post('/users/me/subscriptions', { subscriptions: [{ name: 'fresh-one', description: 'new' }] }), {
      expectTypes: ['stream/create', 'subscription/add'],
    })
    // A bystander learns of the new public channel and its subscriber.
    await checkStateAfter(t, app, other, () => as(app, member).post('/users/me/subscriptions', { subscriptions: [{ name: 'fresh-two' }] }), {
      expectTypes: ['stream/create'],
    })
  })

  t.test('creating a private channel', async (t) => {
    // Administrators see every private channel, as never_subscribed.
    await checkStateAfter(
      t,
      app,
      admin,
      () => as(app, member).post('/users/me/subscriptions', { subscriptions: [{ name: 'fresh-private' }], invite_only: true }),
      { expectTypes: ['stream/create'] },
    )
  })

  t.test('subscribing an existing channel, and another user by principals', async (t) => {
    // The fixture subscribes member to design: leave it first, to join it again.
    expectSuccess(t, await as(app, member).delete('/users/me/subscriptions', { subscriptions: [fx.streams.design.name] }))
    await checkStateAfter(t, app, member, () => as(app, member).post('/users/me/subscriptions', { subscriptions: [{ name: fx.streams.design.name }] }), {
      expectTypes: ['subscription/add'],
    })
    await checkStateAfter(t, app, other, () =>
      as(app, admin).post('/users/me/subscriptions', { subscriptions: [{ name: fx.streams.design.name }], principals: [other.id] }),
    )
    await checkStateAfter(t, app, member, () =>
      as(app, admin).post('/users/me/subscriptions', { subscriptions: [{ name: fx.streams.design.name }], principals: [owner.id] }),
    )
  })

  t.test('unsubscribing, self and another user', async (t) => {
    await checkStateAfter(t, app, member, () => as(app, member).delete('/users/me/subscriptions', { subscriptions: [fx.streams.design.name] }), {
      expectTypes: ['subscription/remove'],
    })
    await checkStateAfter(t, app, other, () => as(app, admin).delete('/users/me/subscriptions', { subscriptions: [fx.streams.design.name], principals: [other.id] }))
    // Leaving a private channel hides it.
    await checkStateAfter(t, app, member, () => as(app, member).delete('/users/me/subscriptions', { subscriptions: ['fresh-private'] }))
  })

  t.test('subscription properties', async (t) => {
    const stream_id = fx.streams.general.id
    await checkStateAfter(
      t,
      app,
      member,
      () =>
        as(app, member).post('/users/me/subscriptions/properties', {
          subscription_data: [
            { stream_id, property: 'color', value: '#76ce90' },
            { stream_id, property: 'pin_to_top', value: true },
            { stream_id, property: 'is_muted', value: true },
            { stream_id, property: 'desktop_notifications', value: false },
          ],
        }),
      { expectTypes: ['subscription/update'] },
    )
    await checkStateAfter(t, app, member, () =>
      as(app, member).post('/users/me/subscriptions/properties', { subscription_data: [{ stream_id, property: 'in_home_view', value: true }] }),
    )
  })

  t.test('sending channel messages, to a channel without messages too', async (t) => {
    expectSuccess(t, await as(app, member).post('/users/me/subscriptions', { subscriptions: [{ name: 'empty-yet' }] }))
    await checkStateAfter(t, app, member, () => send(other, { type: 'stream', to: 'empty-yet', topic: 'first', content: 'hello' }), { expectTypes: ['message'] })
    // general's first message (realm_default_streams holds IDs since level 330, so nothing there goes stale).
    await checkStateAfter(t, app, other, () => send(member, toGeneral('hi @**Other member** and @**all**')))
    await checkStateAfter(t, app, member, () => send(member, toGeneral('my own')))
  })

  t.test('sending direct messages, one-to-one and group', async (t) => {
    await checkStateAfter(t, app, member, () => send(other, { type: 'direct', to: [member.id], content: 'psst' }), { expectTypes: ['message'] })
    await checkStateAfter(t, app, member, () => send(other, { type: 'direct', to: [member.id, admin.id], content: 'group' }))
    await checkStateAfter(t, app, member, () => send(member, { type: 'direct', to: [member.id], content: 'note to self' }))
  })

  t.test('editing, moving topics and channels', async (t) => {
    const id = await send(member, toGeneral('to edit', 'movable'))
    await send(member, toGeneral('second', 'movable'))
    await checkStateAfter(t, app, other, () => as(app, member).patch(`/messages/${id}`, { content: 'edited' }), { expectTypes: ['update_message'] })
    await checkStateAfter(t, app, other, () => as(app, member).patch(`/messages/${id}`, { topic: 'moved', propagate_mode: 'change_all' }))
    // member left design earlier: moving the topic there takes member's copies
    // of its messages away. Upstream (and Roost) tell member with update_message
    // alone, which its apply_event applies to the unread state as a move; the
    // register no longer lists them, nor counts them in max_message_id. The
    // channels' first_message_id changes are events (stream update).
    const moved = expectSuccess(
      t,
      await as(app, owner).get('/messages', {
        anchor: 'newest',
        num_before: 100,
        num_after: 0,
        narrow: [
          { operator: 'channel', operand: fx.streams.general.id },
          { operator: 'topic', operand: 'moved' },
        ],
      }),
    ).messages as { id: number }[]
    await checkStateAfter(t, app, member, () => as(app, owner).patch(`/messages/${id}`, { stream_id: fx.streams.design.id, propagate_mode: 'change_all' }), {
      expectTypes: ['update_message', 'stream/update'],
      upstreamGaps: [{ lostMessageIds: moved.map((m) => m.id), why: 'unread state and max_message_id of the messages moved out of reach of its copies' }],
    })
  })

  t.test('deleting messages', async (t) => {
    const first = await send(other, toGeneral('unread, then deleted', 'deletions'))
    await send(other, toGeneral('stays', 'deletions'))
    await checkStateAfter(t, app, member, () => as(app, admin).delete(`/messages/${first}`), { expectTypes: ['delete_message'] })
    const dm = await send(other, { type: 'direct', to: [member.id], content: 'older' })
    await send(other, { type: 'direct', to: [member.id], content: 'newer' })
    await checkStateAfter(t, app, member, () => as(app, admin).delete(`/messages/${dm}`))
  })

  t.test('deleting the channel’s first message', async (t) => {
    expectSuccess(t, await as(app, member).post('/users/me/subscriptions', { subscriptions: [{ name: 'first-gone' }] }))
    const mine = await send(member, { type: 'stream', to: 'first-gone', topic: 'x', content: 'first' })
    await send(member, { type: 'stream', to: 'first-gone', topic: 'x', content: 'second' })
    // The channel's first message is the Notification Bot's "channel created"; then member's.
    const subs = expectSuccess(t, await as(app, member).get('/users/me/subscriptions')).subscriptions as { name: string; first_message_id: number }[]
    const bots = subs.find((s) => s.name === 'first-gone')?.first_message_id ?? 0
    t.ok(bots < mine, "the Notification Bot's message comes first")
    await checkStateAfter(t, app, member, () => as(app, admin).delete(`/messages/${bots}`), { expectTypes: ['stream/update'] })
    // A bystander who sees the public channel without being subscribed is told too.
    await checkStateAfter(t, app, other, () => as(app, admin).delete(`/messages/${mine}`), { expectTypes: ['stream/update'] })
  })

  t.test('message flags: read, unread, starred', async (t) => {
    const ids = [await send(other, toGeneral('flag me', 'flags')), await send(other, { type: 'direct', to: [member.id], content: 'flag dm' })]
    await checkStateAfter(t, app, member, () => as(app, member).post('/messages/flags', { messages: ids, op: 'add', flag: 'read' }), {
      expectTypes: ['update_message_flags/add'],
    })
    await checkStateAfter(t, app, member, () => as(app, member).post('/messages/flags', { messages: ids, op: 'remove', flag: 'read' }), {
      expectTypes: ['update_message_flags/remove'],
    })
    await checkStateAfter(t, app, member, () => as(app, member).post('/messages/flags', { messages: ids, op: 'add', flag: 'starred' }))
    await checkStateAfter(t, app, member, () => as(app, member).post('/messages/flags', { messages: [ids[0]], op: 'remove', flag: 'starred' }))
  })

  t.test('reactions', async (t) => {
    const id = await send(other, toGeneral('react to me', 'reactions'))
    await checkStateAfter(t, app, member, () => as(app, member).post(`/messages/${id}/reactions`, { emoji_name: 'smile' }), { expectTypes: ['reaction/add'] })
    await checkStateAfter(t, app, member, () => as(app, member).delete(`/messages/${id}/reactions`, { emoji_name: 'smile' }), { expectTypes: ['reaction/remove'] })
  })

  t.test('settings, modern and legacy', async (t) => {
    await checkStateAfter(t, app, member, () => as(app, member).patch('/settings', { dense_mode: false, enable_desktop_notifications: false, default_language: 'de' }), {
      expectTypes: ['user_settings/update'],
      expectLegacyTypes: ['update_display_settings', 'update_global_notifications'],
    })
    // Legacy clients see inherited channel notification settings resolved. Roost
    // sends them an update per subscribed channel that inherits the setting;
    // upstream's apply_event changes only `subscriptions`, so channels left
    // keep the old resolved value (upstream's own check resolves them again
    // from the database after applying events, which a client cannot).
    await checkStateAfter(t, app, member, () => as(app, member).patch('/settings', { enable_stream_desktop_notifications: true }), {
      upstreamGaps: [{ variant: 'legacy client', list: 'unsubscribed', field: 'desktop_notifications', why: 'inherited desktop_notifications of channels left' }],
    })
    await checkStateAfter(t, app, other, () => as(app, member).patch('/settings', { timezone: 'Europe/Paris', full_name: 'Renamed Member' }))
  })

  t.test('user status', async (t) => {
    await checkStateAfter(t, app, other, () => as(app, member).post('/users/me/status', { status_text: 'lunch', emoji_name: 'car' }), { expectTypes: ['user_status'] })
    await checkStateAfter(t, app, member, () => as(app, member).post('/users/me/status', { away: true }))
    await checkStateAfter(t, app, other, () => as(app, member).post('/users/me/status', { status_text: '', emoji_name: '', away: false }))
  })

  t.test('topic visibility', async (t) => {
    const stream_id = fx.streams.general.id
    await send(other, toGeneral('in a muted topic', 'muted-topic'))
    await checkStateAfter(t, app, member, () => as(app, member).post('/user_topics', { stream_id, topic: 'muted-topic', visibility_policy: 1 }), {
      expectTypes: ['user_topic'],
    })
    await checkStateAfter(t, app, member, () => as(app, member).post('/user_topics', { stream_id, topic: 'muted-topic', visibility_policy: 0 }))
  })

  t.test('alert words', async (t) => {
    await checkStateAfter(t, app, member, () => as(app, member).post('/users/me/alert_words', { alert_words: ['lunch', 'build'] }), { expectTypes: ['alert_words'] })
    await checkStateAfter(t, app, member, () => as(app, member).delete('/users/me/alert_words', { alert_words: ['lunch'] }))
  })

  t.test('drafts', async (t) => {
    let draftId = 0
    await checkStateAfter(
      t,
      app,
      member,
      async () => {
        const body = expectSuccess(t, await as(app, member).post('/drafts', { drafts: [{ type: 'stream', to: [fx.streams.general.id], topic: 'd', content: 'draft' }] }))
        draftId = (body.ids as number[])[0] as number
      },
      { expectTypes: ['drafts/add'] },
    )
    await checkStateAfter(t, app, member, () => as(app, member).patch(`/drafts/${draftId}`, { draft: { type: 'private', to: [other.id], topic: '', content: 'changed' } }), {
      expectTypes: ['drafts/update'],
    })
    await checkStateAfter(t, app, member, () => as(app, member).delete(`/drafts/${draftId}`), { expectTypes: ['drafts/remove'] })
  })

  t.test('scheduled messages', async (t) => {
    const at = Math.floor(Date.now() / 1000) + 3600
    let id = 0
    await checkStateAfter(
      t,
      app,
      member,
      async () => {
        const body = expectSuccess(
          t,
          await as(app, member).post('/scheduled_messages', { type: 'stream', to: fx.streams.general.id, topic: 'later', content: 'scheduled', scheduled_delivery_timestamp: at }),
        )
        id = body.scheduled_message_id as number
      },
      { expectTypes: ['scheduled_messages/add'] },
    )
    await checkStateAfter(t, app, member, () => as(app, member).patch(`/scheduled_messages/${id}`, { content: 'rescheduled', scheduled_delivery_timestamp: at + 60 }), {
      expectTypes: ['scheduled_messages/update'],
    })
    await checkStateAfter(t, app, member, () => as(app, member).delete(`/scheduled_messages/${id}`), { expectTypes: ['scheduled_messages/remove'] })
  })

  t.test('user groups', async (t) => {
    let groupId = 0
    await checkStateAfter(
      t,
      app,
      other,
      async () => {
        expectSuccess(t, await as(app, admin).post('/user_groups/create', { name: 'state-crew', description: 'crew', members: [member.id] }))
        const groups = expectSuccess(t, await as(app, admin).get('/user_groups')).user_groups as { id: number; name: string }[]
        groupId = groups.find((g) => g.name === 'state-crew')?.id ?? 0
      },
      { expectTypes: ['user_group/add'] },
    )
    await checkStateAfter(t, app, other, () => as(app, admin).patch(`/user_groups/${groupId}`, { name: 'state-crew-2', description: 'renamed' }), {
      expectTypes: ['user_group/update'],
    })
    await checkStateAfter(t, app, other, () => as(app, admin).post(`/user_groups/${groupId}/members`, { add: [other.id], delete: [member.id] }), {
      expectTypes: ['user_group/add_members', 'user_group/remove_members'],
    })
    const sub = expectSuccess(t, await as(app, admin).post('/user_groups/create', { name: 'state-sub', description: 'sub', members: [] })).group_id as number
    await checkStateAfter(t, app, other, () => as(app, admin).post(`/user_groups/${groupId}/members`, { add: [member.id], add_subgroups: [sub] }), {
      expectTypes: ['user_group/add_members', 'user_group/add_subgroups'],
    })
    await checkStateAfter(t, app, other, () => as(app, admin).post(`/user_groups/${groupId}/members`, { delete_subgroups: [sub] }), {
      expectTypes: ['user_group/remove_subgroups'],
    })
    // Group permission settings (levels 283–324): a named group, then anonymous values (one updated in place, one replaced).
    await checkStateAfter(t, app, other, () => as(app, admin).patch(`/user_groups/${groupId}`, { can_join_group: { new: sub }, can_leave_group: { new: { direct_members: [other.id], direct_subgroups: [sub] } } }), {
      expectTypes: ['user_group/update'],
    })
    await checkStateAfter(t, app, other, () => as(app, admin).patch(`/user_groups/${groupId}`, { can_manage_group: { new: { direct_members: [member.id, admin.id], direct_subgroups: [] } }, can_leave_group: { new: sub } }), {
      expectTypes: ['user_group/update'],
    })
    // Joining oneself through can_join_group and leaving through can_leave_group.
    expectSuccess(t, await as(app, admin).post(`/user_groups/${sub}/members`, { add: [other.id] }))
    await checkStateAfter(t, app, other, () => as(app, other).post(`/user_groups/${groupId}/members`, { delete: [other.id] }), { expectTypes: ['user_group/remove_members'] })
    await checkStateAfter(t, app, other, () => as(app, other).post(`/user_groups/${groupId}/members`, { add: [other.id] }), { expectTypes: ['user_group/add_members'] })
    // Deactivation (levels 290, 294): the modern client keeps the group as deactivated, the legacy one drops it.
    await checkStateAfter(t, app, other, () => as(app, admin).post(`/user_groups/${groupId}/deactivate`), {
      expectTypes: ['user_group/update'],
      expectLegacyTypes: ['user_group/remove'],
    })
    // A deactivated group's rename reaches only the modern client; its description both.
    await checkStateAfter(t, app, other, () => as(app, admin).patch(`/user_groups/${groupId}`, { name: 'state-crew-old', description: 'retired' }), {
      expectTypes: ['user_group/update'],
    })
  })

  t.test('custom profile fields', async (t) => {
    let fieldId = 0
    await checkStateAfter(
      t,
      app,
      other,
      async () => {
        fieldId = expectSuccess(t, await as(app, admin).post('/realm/profile_fields', { name: 'Team', hint: 'yours', field_type: 1 })).id as number
      },
      { expectTypes: ['custom_profile_fields'] },
    )
    await checkStateAfter(t, app, other, () => as(app, member).patch('/users/me/profile_data', { data: [{ id: fieldId, value: 'Platform' }] }), { expectTypes: ['realm_user/update'] })
    await checkStateAfter(t, app, other, () => as(app, admin).delete(`/realm/profile_fields/${fieldId}`))
  })

  t.test('user administration', async (t) => {
    const target = await fx.newUser({ fullName: 'Admin Target' })
    await checkStateAfter(t, app, other, () => as(app, admin).patch(`/users/${target.id}`, { role: ROLE.MODERATOR, full_name: 'Renamed Target' }), {
      expectTypes: ['realm_user/update'],
    })
    await checkStateAfter(t, app, target, () => as(app, admin).patch(`/users/${target.id}`, { role: ROLE.MEMBER }))
    // In a group's setting value and the organization's too (anonymous values list active users only).
    expectSuccess(t, await as(app, admin).post('/user_groups/create', { name: 'target-crew', description: '', members: [], can_join_group: { direct_members: [target.id, admin.id], direct_subgroups: [] } }))
    expectSuccess(t, await as(app, owner).patch('/realm', { can_add_custom_emoji_group: { new: { direct_members: [target.id, admin.id], direct_subgroups: [] } } }))
    await checkStateAfter(t, app, other, () => as(app, admin).delete(`/users/${target.id}`))
    // Level 303: the deactivated user leaves every group and setting value (the is_active update says so) and comes back with
    // add_members and the setting values again.
    await checkStateAfter(t, app, other, () => as(app, admin).post(`/users/${target.id}/reactivate`), {
      expectTypes: ['realm_user/update', 'user_group/add_members', 'user_group/update', 'realm/update_dict'],
    })
  })

  t.test('invitations', async (t) => {
    await checkStateAfter(t, app, admin, () => as(app, admin).post('/invites', { invitee_emails: 'new.person@example.com', stream_ids: [fx.streams.general.id] }), {
      expectTypes: ['invites_changed'],
    })
  })

  t.test('typing and presence', async (t) => {
    await checkStateAfter(t, app, other, () => as(app, member).post('/typing', { op: 'start', to: [other.id] }), { expectTypes: ['typing/start'] })
    // A report within the offline threshold of the user's last one moves its timestamps without an event
    // (as upstream): when the two fall in different seconds, only a fresh register shows the newer ones.
    await checkStateAfter(t, app, other, () => as(app, member).post('/users/me/presence', { status: 'active' }), {
      ignore: { presences: 'timestamps moved within the offline threshold, which upstream sends no event for' },
    })
    await checkStateAfter(t, app, other, () => as(app, member).post('/typing', { op: 'stop', to: [other.id] }), { expectTypes: ['typing/stop'] })
    // A user's first report brings it online: everyone is told.
    const newcomer = await fx.newUser({ fullName: 'Presence Newcomer' })
    await checkStateAfter(t, app, other, () => as(app, newcomer).post('/users/me/presence', { status: 'active' }), { expectTypes: ['presence'] })
    // Editing a message's content: its conversation is told.
    const editing = await send(member, { type: 'direct', to: [other.id], content: 'being edited' })
    await checkStateAfter(t, app, other, () => as(app, member).post(`/messages/${editing}/typing`, { op: 'start' }), { expectTypes: ['typing_edit_message/start'] })
    await checkStateAfter(t, app, other, () => as(app, member).post(`/messages/${editing}/typing`, { op: 'stop' }), { expectTypes: ['typing_edit_message/stop'] })
  })
})
