import t from 'tap'
import { buildTestApp, makeFixture } from '../support/app.js'
import { as } from '../support/client.js'
import { expectError, expectSuccess, type Body } from '../support/expect.js'
import { captureEvents } from '../support/events.js'

t.test('GET /streams/{stream_id}/members', async (t) => {
  const { app, fx, services } = await buildTestApp(t)
  const { owner, admin, member, otherMember, guest } = fx.users
  const { general, design, secret } = fx.streams

  t.test('lists the active subscribers by ID', async (t) => {
    t.same(expectSuccess(t, await as(app, otherMember).get(`/streams/${design.id}/members`)), { result: 'success', msg: '', subscribers: [owner.id, member.id] })
    t.same(expectSuccess(t, await as(app, member).get(`/streams/${secret.id}/members`)).subscribers, [owner.id, member.id])
  })
  t.test('lets administrators read private channels they are not in', async (t) => {
    t.same(expectSuccess(t, await as(app, admin).get(`/streams/${secret.id}/members`)).subscribers, [owner.id, member.id])
  })
  t.test('hides private channels from members who are not subscribed', async (t) => {
    expectError(t, await as(app, otherMember).get(`/streams/${secret.id}/members`), { code: 'BAD_REQUEST', msg: 'Invalid channel ID' })
  })
  t.test('lets guests read only channels they are in', async (t) => {
    t.ok((expectSuccess(t, await as(app, guest).get(`/streams/${general.id}/members`)).subscribers as number[]).includes(guest.id))
    expectError(t, await as(app, guest).get(`/streams/${design.id}/members`), { code: 'BAD_REQUEST', msg: 'Invalid channel ID' })
  })
  t.test('does not cross organizations', async (t) => {
    const other = await makeFixture(services)
    expectError(t, await as(app, other.users.owner, other).get(`/streams/${design.id}/members`), { code: 'BAD_REQUEST', msg: 'Invalid channel ID' })
  })
  t.test('rejects a non-integer ID naming the parameter', async (t) => {
    expectError(t, await as(app, member).get('/streams/abc/members'), { code: 'BAD_REQUEST', msg: /stream_id/ })
  })
})

t.test('GET /users/{user_id}/subscriptions/{stream_id}', async (t) => {
  const { app, fx, services } = await buildTestApp(t)
  const { owner, admin, member, otherMember, guest, bot } = fx.users
  const { design, secret } = fx.streams

  t.test('says whether the user is subscribed', async (t) => {
    t.same(expectSuccess(t, await as(app, otherMember).get(`/users/${member.id}/subscriptions/${design.id}`)), { result: 'success', msg: '', is_subscribed: true })
    t.same(expectSuccess(t, await as(app, member).get(`/users/${otherMember.id}/subscriptions/${design.id}`)).is_subscribed, false)
    t.same(expectSuccess(t, await as(app, admin).get(`/users/${owner.id}/subscriptions/${secret.id}`)).is_subscribed, true)
  })
  t.test('hides private channels the requester cannot see', async (t) => {
    expectError(t, await as(app, otherMember).get(`/users/${member.id}/subscriptions/${secret.id}`), { code: 'BAD_REQUEST', msg: 'Invalid channel ID' })
    expectError(t, await as(app, guest).get(`/users/${member.id}/subscriptions/${design.id}`), { code: 'BAD_REQUEST', msg: 'Invalid channel ID' })
  })
  t.test('refuses unknown, bot and deactivated users', async (t) => {
    expectError(t, await as(app, member).get(`/users/999999/subscriptions/${design.id}`), { code: 'BAD_REQUEST', msg: 'No such user' })
    expectError(t, await as(app, member).get(`/users/${bot.id}/subscriptions/${design.id}`), { code: 'BAD_REQUEST', msg: 'No such user' })
    const gone = await fx.newUser()
    await services.prisma.user.update({ where: { id: gone.id }, data: { isActive: false } })
    expectError(t, await as(app, member).get(`/users/${gone.id}/subscriptions/${design.id}`), { code: 'BAD_REQUEST', msg: 'User is deactivated' })
  })
  t.test('does not cross organizations', async (t) => {
    const other = await makeFixture(services)
    expectError(t, await as(app, other.users.owner, other).get(`/users/${member.id}/subscriptions/${design.id}`), { code: 'BAD_REQUEST', msg: 'No such user' })
  })
})

t.test('PATCH /streams/{stream_id}', async (t) => {
  const { app, fx, services } = await buildTestApp(t)
  const { owner, admin, moderator, member, otherMember, guest } = fx.users
  const botId = fx.notificationBot.id
  const lastNotice = async (streamId: number) =>
    services.prisma.message.findFirstOrThrow({ where: { streamId, senderId: botId }, orderBy: { id: 'desc' } })
  const systemGroup = async (name: string) => (await services.prisma.userGroup.findFirstOrThrow({ where: { realmId: fx.realm.id, name } })).id

  t.test('renames a channel: event to everyone who sees it, notice in the channel', async (t) => {
    const design = fx.streams.design
    const events = await captureEvents(app, otherMember, () => as(app, admin).patch(`/streams/${design.id}`, { new_name: '  Design Team ' }))
    const notice = await lastNotice(design.id)
    const streamEvents = events.filter((e) => e.type === 'stream')
    // The notice is the channel's first message: clients also learn its first_message_id.
    t.same(streamEvents, [
      { id: streamEvents[0]?.id, type: 'stream', op: 'update', property: 'name', value: 'Design Team', stream_id: design.id, name: 'design' },
      { id: streamEvents[1]?.id, type: 'stream', op: 'update', property: 'first_message_id', value: notice.id, stream_id: design.id, name: 'Design Team' },
    ])
    t.equal(notice.topic, 'channel events')
    t.equal(notice.content, `@_**Adam Admin|${admin.id}** renamed channel **design** to **Design Team**.`)
    t.equal((await services.prisma.stream.findUniqueOrThrow({ where: { id: design.id } })).name, 'Design Team')
  })
  t.test('refuses a taken name whatever its case, and the same name', async (t) => {
    expectError(t, await as(app, admin).patch(`/streams/${fx.streams.design.id}`, { new_name: 'GENERAL' }), { code: 'BAD_REQUEST', msg: 'Channel name already in use.' })
    expectError(t, await as(app, admin).patch(`/streams/${fx.streams.design.id}`, { new_name: 'Design Team' }), { code: 'BAD_REQUEST', msg: 'Channel already has that name.' })
    expectError(t, await as(app, admin).patch(`/streams/${fx.streams.design.id}`, { new_name: ' ' }), { code: 'BAD_REQUEST', msg: "Channel name can't be empty." })
    // LIKE wildcards are plain characters: 'gener_l' is not 'general'.
    expectSuccess(t, await as(app, admin).patch(`/streams/${fx.streams.design.id}`, { new_name: 'gener_l' }))
    expectSuccess(t, await as(app, admin).patch(`/streams/${fx.streams.design.id}`, { new_name: 'Design Team' }))
  })
  t.test('lets a channel change only the case of its name', async (t) => {
    expectSuccess(t, await as(app, admin).patch(`/streams/${fx.streams.design.id}`, { new_name: 'design team' }))
  })
  t.test('changes the description with its rendering and a notice', async (t) => {
    const id = fx.streams.design.id
    const events = await captureEvents(app, member, () => as(app, admin).patch(`/streams/${id}`, { description: 'All **things**\ndesign' }))
    t.match(events.filter((e) => e.type === 'stream'), [
      { type: 'stream', op: 'update', property: 'description', value: 'All **things** design', rendered_description: '<p>All <strong>things</strong> design</p>', stream_id: id },
    ])
    t.equal((await lastNotice(id)).content, `@_**Adam Admin|${admin.id}** changed the description for this channel.\n\n* **Old description:**\n\`\`\`\` quote\nDesign talk\n\`\`\`\`\n* **New description:**\n\`\`\`\` quote\nAll **things** design\n\`\`\`\``)
    expectError(t, await as(app, admin).patch(`/streams/${id}`, { description: 'x'.repeat(1025) }), { code: 'BAD_REQUEST', msg: /description/ })
  })
  t.test('stream_post_policy sets can_send_message_group (level 333), with the derived legacy events', async (t) => {
    const id = fx.streams.design.id
    const admins = await systemGroup('role:administrators')
    const { name } = await services.prisma.stream.findUniqueOrThrow({ where: { id } })
    const events = await captureEvents(app, member, () => as(app, admin).patch(`/streams/${id}`, { stream_post_policy: 2 }))
    t.same(events.filter((e) => e.type === 'stream').map(({ id: _, ...e }) => e), [
      { type: 'stream', op: 'update', property: 'can_send_message_group', value: admins, stream_id: id, name },
      { type: 'stream', op: 'update', property: 'stream_post_policy', value: 2, stream_id: id, name },
      { type: 'stream', op: 'update', property: 'is_announcement_only', value: true, stream_id: id, name },
    ])
    t.equal(
      (await lastNotice(id)).content,
      `@_**Adam Admin|${admin.id}** changed the [posting permissions](/help/channel-posting-policy) for this channel:\n\n* **Old**: @_*role:everyone*\n* **New**: @_*role:administrators*`,
    )
    // System groups are mentioned silently, by their display names (level 333).
    t.match((await lastNotice(id)).renderedContent, new RegExp(`<span class="user-group-mention silent" data-user-group-id="${admins}">Administrators</span>`))
    expectError(t, await as(app, admin).patch(`/streams/${id}`, { stream_post_policy: 9 }), { code: 'BAD_REQUEST', msg: 'Invalid stream_post_policy' })
    // An anonymous value: stream_post_policy falls back to 1 (everyone), the superset upstream reports.
    const anonymous = { direct_members: [member.id], direct_subgroups: [admins] }
    const more = await captureEvents(app, member, () => as(app, admin).patch(`/streams/${id}`, { can_send_message_group: JSON.stringify({ new: anonymous, old: admins }) }))
    t.match(more.filter((e) => e.type === 'stream'), [
      { property: 'can_send_message_group', value: anonymous },
      { property: 'stream_post_policy', value: 1 },
      { property: 'is_announcement_only', value: false },
    ])
    t.equal(
      (await lastNotice(id)).content,
      `@_**Adam Admin|${admin.id}** changed the [posting permissions](/help/channel-posting-policy) for this channel:\n\n* **Old**: @_*role:administrators*\n* **New**: @_*role:administrators*, @_**${member.fullName}|${member.id}**`,
    )
    t.match(expectSuccess(t, await as(app, member).get(`/streams/${id}`)).stream, { can_send_message_group: anonymous, stream_post_policy: 1 })
    expectSuccess(t, await as(app, admin).patch(`/streams/${id}`, { can_send_message_group: JSON.stringify({ new: await systemGroup('role:everyone') }) }))
    t.equal(await services.prisma.userGroup.count({ where: { realmId: fx.realm.id, isAnonymous: true, members: { some: { userId: member.id } }, subgroups: { some: { subgroupId: admins } } } }), 0, 'the replaced anonymous group is gone')
  })
  t.test('group settings: {new, old} conflicts and bad values', async (t) => {
    const id = fx.streams.design.id
    const members = await systemGroup('role:members')
    const nobody = await systemGroup('role:nobody')
    const events = await captureEvents(app, member, () => as(app, admin).patch(`/streams/${id}`, { can_remove_subscribers_group: members }))
    t.match(events, [{ type: 'stream', op: 'update', property: 'can_remove_subscribers_group', value: members, stream_id: id }])
    // Level 320 allows role:nobody.
    expectSuccess(t, await as(app, admin).patch(`/streams/${id}`, { can_remove_subscribers_group: JSON.stringify({ new: nobody, old: members }) }))
    const stale = { can_remove_subscribers_group: JSON.stringify({ new: members, old: members }) }
    expectError(t, await as(app, admin).patch(`/streams/${id}`, stale), { code: 'EXPECTATION_MISMATCH', msg: "'old' value does not match the expected value." })
    expectError(t, await as(app, admin).patch(`/streams/${id}`, { can_remove_subscribers_group: await systemGroup('role:internet') }), {
      code: 'BAD_REQUEST',
      msg: "'can_remove_subscribers_group' setting cannot be set to 'role:internet' group.",
    })
    expectError(t, await as(app, admin).patch(`/streams/${id}`, { can_add_subscribers_group: await systemGroup('role:everyone') }), {
      code: 'BAD_REQUEST',
      msg: "'can_add_subscribers_group' setting cannot be set to 'role:everyone' group.",
    })
    expectError(t, await as(app, admin).patch(`/streams/${id}`, { can_remove_subscribers_group: 999999 }), { code: 'BAD_REQUEST', msg: 'Invalid user group' })
    const retired = await services.prisma.userGroup.create({ data: { realmId: fx.realm.id, name: 'retired', deactivated: true } })
    expectError(t, await as(app, admin).patch(`/streams/${id}`, { can_subscribe_group: retired.id }), { code: 'BAD_REQUEST', msg: 'User group is deactivated.' })
    expectError(t, await as(app, admin).patch(`/streams/${id}`, { can_subscribe_group: JSON.stringify({ direct_members: [999999], direct_subgroups: [] }) }), {
      code: 'BAD_REQUEST',
      msg: 'Invalid user ID: 999999',
    })
    expectError(t, await as(app, admin).patch(`/streams/${id}`, { can_subscribe_group: '"x"' }), { code: 'BAD_REQUEST', msg: /can_subscribe_group/ })
    // Nothing of a refused request is applied.
    const before = await services.prisma.stream.findUniqueOrThrow({ where: { id } })
    expectError(t, await as(app, admin).patch(`/streams/${id}`, { description: 'half', can_subscribe_group: 999999 }), { code: 'BAD_REQUEST', msg: 'Invalid user group' })
    t.same(await services.prisma.stream.findUniqueOrThrow({ where: { id } }), before)
    expectSuccess(t, await as(app, admin).patch(`/streams/${id}`, { can_remove_subscribers_group: await systemGroup('role:administrators') }))
  })
  t.test('message_retention_days needs an owner', async (t) => {
    const id = fx.streams.design.id
    expectError(t, await as(app, admin).patch(`/streams/${id}`, { message_retention_days: 30 }), { code: 'UNAUTHORIZED_PRINCIPAL', msg: 'Must be an organization owner' })
    const events = await captureEvents(app, member, () => as(app, owner).patch(`/streams/${id}`, { message_retention_days: 30 }))
    t.match(events.filter((e) => e.type === 'stream'), [{ op: 'update', property: 'message_retention_days', value: 30, stream_id: id }])
    t.match((await lastNotice(id)).content, /Old retention period\*\*: Forever\n\* \*\*New retention period\*\*: 30 days/)
    expectSuccess(t, await as(app, owner).patch(`/streams/${id}`, { message_retention_days: 'unlimited' }))
    expectError(t, await as(app, owner).patch(`/streams/${id}`, { message_retention_days: -5 }), { code: 'REQUEST_VARIABLE_INVALID' })
  })
  t.test('only organization and channel administrators may change a channel (level 325)', async (t) => {
    for (const who of [moderator, member]) {
      expectError(t, await as(app, who).patch(`/streams/${fx.streams.design.id}`, { description: 'x' }), { code: 'BAD_REQUEST', msg: 'You do not have permission to administer this channel.' })
    }
    expectError(t, await as(app, guest).patch(`/streams/${fx.streams.general.id}`, { description: 'x' }), { code: 'BAD_REQUEST', msg: 'You do not have permission to administer this channel.' })
    expectError(t, await as(app, otherMember).patch(`/streams/${fx.streams.secret.id}`, { description: 'x' }), { code: 'BAD_REQUEST', msg: 'Invalid channel ID' })
    expectError(t, await as(app, admin).patch('/streams/999999', { description: 'x' }), { code: 'BAD_REQUEST', msg: 'Invalid channel ID' })
    const other = await makeFixture(services)
    expectError(t, await as(app, other.users.owner, other).patch(`/streams/${fx.streams.design.id}`, { description: 'x' }), { code: 'BAD_REQUEST', msg: 'Invalid channel ID' })
    // A member of can_administer_channel_group changes the channel's settings, but not what needs an organization administrator.
    const id = fx.streams.design.id
    expectSuccess(t, await as(app, admin).patch(`/streams/${id}`, { can_administer_channel_group: JSON.stringify({ direct_members: [member.id], direct_subgroups: [] }) }))
    expectSuccess(t, await as(app, member).patch(`/streams/${id}`, { description: 'Design, by its channel administrator' }))
    expectError(t, await as(app, member).patch(`/streams/${id}`, { is_default_stream: true }), { code: 'UNAUTHORIZED_PRINCIPAL', msg: 'Must be an organization administrator' })
    expectError(t, await as(app, otherMember).patch(`/streams/${id}`, { description: 'x' }), { code: 'BAD_REQUEST', msg: 'You do not have permission to administer this channel.' })
    // Guests never hold it (the setting does not allow role:everyone).
    expectSuccess(t, await as(app, admin).patch(`/streams/${id}`, { can_administer_channel_group: JSON.stringify({ direct_members: [member.id, guest.id], direct_subgroups: [] }) }))
    expectError(t, await as(app, guest).patch(`/streams/${id}`, { description: 'x' }), { code: 'BAD_REQUEST', msg: 'Invalid channel ID' })
    expectSuccess(t, await as(app, member).patch(`/streams/${id}`, { description: 'Design talk', can_administer_channel_group: await systemGroup('role:nobody') }))
    expectError(t, await as(app, member).patch(`/streams/${id}`, { description: 'x' }), { code: 'BAD_REQUEST', msg: 'You do not have permission to administer this channel.' })
  })
  t.test('a failing change leaves everything as it was', async (t) => {
    const id = fx.streams.design.id
    const before = await services.prisma.stream.findUniqueOrThrow({ where: { id } })
    expectError(t, await as(app, admin).patch(`/streams/${id}`, { description: 'changed', new_name: 'general' }), { code: 'BAD_REQUEST', msg: 'Channel name already in use.' })
    t.same(await services.prisma.stream.findUniqueOrThrow({ where: { id } }), before)
  })

  t.test('making a public channel private', async (t) => {
    const s = await services.prisma.stream.create({
      data: { realmId: fx.realm.id, name: 'townhall', canRemoveSubscribersGroupId: fx.streams.general.canRemoveSubscribersGroupId, creatorId: owner.id },
    })
    await services.prisma.subscription.create({ data: { userId: member.id, streamId: s.id, color: '#c2c2c2' } })
    const outsider = await captureEvents(app, otherMember, () => as(app, admin).patch(`/streams/${s.id}`, { is_private: true }))
    t.match(outsider.filter((e) => e.type === 'stream'), [{ type: 'stream', op: 'delete', streams: [{ stream_id: s.id, name: 'townhall', invite_only: false }], stream_ids: [s.id] }])
    t.equal(outsider.filter((e) => e.type === 'stream' && e.op === 'update').length, 0)
    const after = await services.prisma.stream.findUniqueOrThrow({ where: { id: s.id } })
    t.match(after, { inviteOnly: true, historyPublicToSubscribers: false })
    t.equal((await lastNotice(s.id)).content, `@_**Adam Admin|${admin.id}** changed the [access permissions](/help/channel-permissions) for this channel from **Public** to **Private, protected history**.`)

    const subscriber = await captureEvents(app, member, () => as(app, owner).patch(`/streams/${s.id}`, { history_public_to_subscribers: true }))
    t.match(subscriber.filter((e) => e.type === 'stream'), [
      { type: 'stream', op: 'update', property: 'invite_only', value: true, history_public_to_subscribers: true, is_web_public: false, stream_id: s.id, name: 'townhall' },
    ])

    t.test('and back: administrators must be subscribed; newcomers get create and peers', async (t) => {
      expectError(t, await as(app, admin).patch(`/streams/${s.id}`, { is_private: false }), { code: 'BAD_REQUEST', msg: 'Invalid channel ID' })
      await services.prisma.subscription.create({ data: { userId: owner.id, streamId: s.id, color: '#c2c2c2' } })
      const events = await captureEvents(app, otherMember, () => as(app, owner).patch(`/streams/${s.id}`, { is_private: false }))
      t.match(events, [
        { type: 'stream', op: 'create', streams: [{ stream_id: s.id, invite_only: false, history_public_to_subscribers: true }] },
        { type: 'subscription', op: 'peer_add', stream_ids: [s.id], user_ids: [owner.id, member.id] },
      ])
    })
  })
  t.test('refuses impossible privacy combinations and private default channels', async (t) => {
    const id = fx.streams.design.id
    expectError(t, await as(app, admin).patch(`/streams/${id}`, { is_private: false, history_public_to_subscribers: false }), { code: 'BAD_REQUEST', msg: 'Invalid parameters' })
    expectError(t, await as(app, admin).patch(`/streams/${fx.streams.general.id}`, { is_private: true }), { code: 'BAD_REQUEST', msg: 'A default channel cannot be private.' })
    expectError(t, await as(app, admin).patch(`/streams/${id}`, { is_web_public: true }), { code: 'BAD_REQUEST', msg: 'Web-public channels are not enabled.' })
  })
  t.test('web-public channels become visible to guests', async (t) => {
    await services.prisma.realm.update({ where: { id: fx.realm.id }, data: { webPublicAccessEnabled: true } })
    const id = fx.streams.design.id
    const events = await captureEvents(app, guest, () => as(app, owner).patch(`/streams/${id}`, { is_web_public: true }))
    t.match(events.filter((e) => e.type === 'stream'), [{ type: 'stream', op: 'create', streams: [{ stream_id: id, is_web_public: true }] }])
    expectError(t, await as(app, admin).patch(`/streams/${id}`, { is_web_public: true, is_private: true }), { code: 'BAD_REQUEST', msg: 'Invalid parameters' })
  })
  t.test('is_default_stream adds and removes default channels', async (t) => {
    const id = fx.streams.design.id
    const events = await captureEvents(app, member, () => as(app, admin).patch(`/streams/${id}`, { is_default_stream: true }))
    t.match(events, [{ type: 'default_streams', default_streams: [fx.streams.general.id, id].sort((a, b) => a - b) }])
    expectSuccess(t, await as(app, admin).patch(`/streams/${id}`, { is_default_stream: false }))
  })
  t.test('lists parameters it does not know', async (t) => {
    t.same(expectSuccess(t, await as(app, admin).patch(`/streams/${fx.streams.design.id}`, { colour: 'red' })).ignored_parameters_unsupported, ['colour'])
  })
})

t.test('DELETE /streams/{stream_id}', async (t) => {
  const { app, fx } = await buildTestApp(t)
  const { member, otherMember, guest } = fx.users

  t.test('only organization and channel administrators archive channels', async (t) => {
    const cannot = { code: 'BAD_REQUEST', msg: 'You do not have permission to administer this channel.' }
    expectError(t, await as(app, member).delete(`/streams/${fx.streams.design.id}`), cannot)
    expectError(t, await as(app, otherMember).delete(`/streams/${fx.streams.secret.id}`), { code: 'BAD_REQUEST', msg: 'Invalid channel ID' })
    expectError(t, await as(app, guest).delete(`/streams/${fx.streams.general.id}`), cannot)
  })
  // What archiving does: test/http/archived-channels.test.ts.
})

t.test('/default_streams', async (t) => {
  const { app, fx, services } = await buildTestApp(t)
  const { owner, admin, member, guest } = fx.users
  const { design, secret, general } = fx.streams

  t.test('GET lists the default channels', async (t) => {
    t.same((expectSuccess(t, await as(app, member).get('/default_streams')).default_streams as Body[]).map((s) => s.name), ['general'])
  })
  t.test('POST adds one and tells non-guests', async (t) => {
    const events = await captureEvents(app, member, () => as(app, admin).post('/default_streams', { stream_id: design.id }))
    t.same(events.map(({ id: _id, ...e }) => e), [{ type: 'default_streams', default_streams: [general.id, design.id].sort((a, b) => a - b) }])
    t.same(await captureEvents(app, guest, () => as(app, admin).post('/default_streams', { stream_id: design.id }), { expectNone: true }), [])
    const reg = expectSuccess(t, await as(app, member).post('/register', { fetch_event_types: ['default_streams'] }))
    t.same(reg.realm_default_streams, [general.id, design.id].sort((a, b) => a - b))
  })
  t.test('refuses private channels', async (t) => {
    expectError(t, await as(app, owner).post('/default_streams', { stream_id: secret.id }), { code: 'BAD_REQUEST', msg: 'Private channels cannot be made default.' })
    expectError(t, await as(app, admin).post('/default_streams', { stream_id: secret.id }), { code: 'BAD_REQUEST', msg: 'Invalid channel ID' })
  })
  t.test('needs an administrator', async (t) => {
    expectError(t, await as(app, member).post('/default_streams', { stream_id: design.id }), { code: 'UNAUTHORIZED_PRINCIPAL', msg: 'Must be an organization administrator' })
    expectError(t, await as(app, member).delete('/default_streams', { stream_id: design.id }), { code: 'UNAUTHORIZED_PRINCIPAL' })
  })
  t.test('DELETE removes one', async (t) => {
    const events = await captureEvents(app, owner, () => as(app, admin).delete('/default_streams', { stream_id: design.id }))
    t.match(events, [{ type: 'default_streams', default_streams: [general.id] }])
    t.equal(events[0]?.default_streams.length, 1)
  })
  t.test('errors name the parameter and unknown channels', async (t) => {
    expectError(t, await as(app, admin).post('/default_streams', {}), { code: 'REQUEST_VARIABLE_MISSING', msg: "Missing 'stream_id' argument" })
    expectError(t, await as(app, admin).post('/default_streams', { stream_id: 999999 }), { code: 'BAD_REQUEST', msg: 'Invalid channel ID' })
    const other = await makeFixture(services)
    expectError(t, await as(app, other.users.owner, other).post('/default_streams', { stream_id: design.id }), { code: 'BAD_REQUEST', msg: 'Invalid channel ID' })
  })
})
