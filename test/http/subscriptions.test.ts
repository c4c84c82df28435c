import t from 'tap'
import { buildTestApp } from '../support/app.js'
import { realmSetter } from '../support/realm-settings.js'
import { as } from '../support/client.js'
import { expectError, expectSuccess, type Body } from '../support/expect.js'
import type { CapturedBusItem as BusItem } from '../support/events.js'
import type { Services } from '../../src/services.js'
import { ROLE } from '../../src/domain/roles.js'
import { SYSTEM_GROUPS } from '../../src/domain/system-groups.js'
import { busItemsDuring } from '../support/events.js'

/** Records every bus item published while `fn` runs (subscription and stream events only). */
const captured = (services: Services, fn: () => Promise<unknown>) => busItemsDuring(services, fn, ['subscription', 'stream'])

const ofOp = (items: BusItem[], type: string, op: string) => items.filter((i) => i.event.type === type && i.event.op === op)

t.test('POST /users/me/subscriptions', async (t) => {
  const { app, fx, services } = await buildTestApp(t)
  const { owner, admin, member, otherMember, guest, bot } = fx.users
  const groupId = async (name: string) =>
    (await services.prisma.userGroup.findUniqueOrThrow({ where: { realmId_name: { realmId: fx.realm.id, name } } })).id

  t.test('subscribes the requester to an existing public channel and tells the peers', async (t) => {
    const user = await fx.newUser()
    const { result, items } = await captured(services, () => as(app, user).post('/users/me/subscriptions', { subscriptions: [{ name: 'design' }] }))
    const body = expectSuccess(t, result as never)
    t.same(body.subscribed, { [user.id]: ['design'] })
    t.same(body.already_subscribed, {})
    t.notOk('unauthorized' in body)

    const [add] = ofOp(items, 'subscription', 'add')
    t.same(add?.userIds, [user.id])
    const sub = (add?.event.subscriptions as Body[])[0] as Body
    t.match(sub, {
      stream_id: fx.streams.design.id, name: 'design', description: 'Design talk', invite_only: false, is_web_public: false,
      is_muted: false, in_home_view: true, pin_to_top: false, desktop_notifications: null, audible_notifications: null,
      push_notifications: null, email_notifications: null, wildcard_mentions_notify: null, stream_post_policy: 1,
      is_announcement_only: false, history_public_to_subscribers: true, stream_weekly_traffic: null, message_retention_days: null,
      can_remove_subscribers_group: fx.streams.design.canRemoveSubscribersGroupId, creator_id: owner.id, first_message_id: null,
    })
    t.match(sub.color, /^#[0-9a-f]{6}$/)
    t.same(sub.subscribers, [owner.id, member.id, user.id].sort((a, b) => a - b))

    const peers = ofOp(items, 'subscription', 'peer_add')
    t.equal(peers.length, 1)
    t.same(peers[0]?.event, { type: 'subscription', op: 'peer_add', stream_ids: [fx.streams.design.id], user_ids: [user.id] })
    t.ok(peers[0]?.userIds.includes(member.id))
    t.notOk(peers[0]?.userIds.includes(user.id), 'not to the new subscriber')
    t.notOk(peers[0]?.userIds.includes(guest.id), 'not to guests of a public channel they are not in')
    t.same(ofOp(items, 'stream', 'create'), [])
  })

  t.test('reports channels the user is already in', async (t) => {
    const body = expectSuccess(t, await as(app, member).post('/users/me/subscriptions', { subscriptions: [{ name: 'Design' }, { name: ' general ' }] }))
    t.same(body.subscribed, {})
    t.same(body.already_subscribed, { [member.id]: ['design', 'general'] })
  })

  t.test('creates a missing public channel and announces it to non-guests', async (t) => {
    const { result, items } = await captured(services, () =>
      as(app, member).post('/users/me/subscriptions', { subscriptions: [{ name: ' Ideas ', description: 'Line one\nline *two*', color: '#abcdef' }] }),
    )
    const body = expectSuccess(t, result as never)
    t.same(body.subscribed, { [member.id]: ['Ideas'] })
    const stream = await services.prisma.stream.findFirstOrThrow({ where: { realmId: fx.realm.id, name: 'Ideas' } })
    t.equal(stream.creatorId, member.id)
    t.equal(stream.description, 'Line one line *two*')
    t.match(stream.renderedDescription, /<em>two<\/em>/)
    t.equal(stream.historyPublicToSubscribers, true)

    const [create] = ofOp(items, 'stream', 'create')
    t.match(create?.event, { type: 'stream', op: 'create', streams: [{ stream_id: stream.id, name: 'Ideas', invite_only: false, creator_id: member.id }] })
    t.ok(create?.userIds.includes(otherMember.id))
    t.ok(create?.userIds.includes(bot.id))
    t.notOk(create?.userIds.includes(guest.id))
    const [add] = ofOp(items, 'subscription', 'add')
    t.match(add?.event, { subscriptions: [{ name: 'Ideas', color: '#abcdef', subscribers: [member.id] }] })
    const addIndex = items.indexOf(add as BusItem)
    t.ok(items.indexOf(create as BusItem) < addIndex, 'stream create comes before subscription add')
  })

  t.test('creates a private channel visible to administrators and its subscribers only', async (t) => {
    const { result, items } = await captured(services, () =>
      as(app, member).post('/users/me/subscriptions', { subscriptions: [{ name: 'hush' }], invite_only: true, principals: [member.id, otherMember.id] }),
    )
    const body = expectSuccess(t, result as never)
    t.same(body.subscribed, { [member.id]: ['hush'], [otherMember.id]: ['hush'] })
    const stream = await services.prisma.stream.findFirstOrThrow({ where: { realmId: fx.realm.id, name: 'hush' } })
    t.equal(stream.inviteOnly, true)
    t.equal(stream.historyPublicToSubscribers, false)
    const creates = ofOp(items, 'stream', 'create')
    // The creator is the channel's administrator (can_administer_channel_group, level 325), so hears of it with them.
    t.same(creates[0]?.userIds.sort(), [owner.id, admin.id, member.id].sort(), 'administrators hear of the new private channel')
    t.same(creates.slice(1).map((c) => c.userIds).sort(), [[otherMember.id]], 'each other new subscriber hears of it')
    const peers = ofOp(items, 'subscription', 'peer_add')
    t.same(peers.map((p) => p.event), [{ type: 'subscription', op: 'peer_add', stream_ids: [stream.id], user_ids: [member.id, otherMember.id].sort((a, b) => a - b) }])
    t.same(peers[0]?.userIds.sort(), [owner.id, admin.id].sort(), 'private peers: subscribers and administrators minus the new ones')
  })

  t.test('keeps history private only when asked for a private channel', async (t) => {
    expectSuccess(t, await as(app, owner).post('/users/me/subscriptions', { subscriptions: [{ name: 'open-history' }], invite_only: true, history_public_to_subscribers: true }))
    expectSuccess(t, await as(app, owner).post('/users/me/subscriptions', { subscriptions: [{ name: 'public-forced' }], history_public_to_subscribers: false }))
    const [a, b] = await Promise.all(['open-history', 'public-forced'].map((name) => services.prisma.stream.findFirstOrThrow({ where: { realmId: fx.realm.id, name } })))
    t.equal(a?.historyPublicToSubscribers, true)
    t.equal(b?.historyPublicToSubscribers, true)
  })

  t.test('refuses guests', async (t) => {
    expectError(t, await as(app, guest).post('/users/me/subscriptions', { subscriptions: [{ name: 'general' }] }), { code: 'BAD_REQUEST', msg: 'Not allowed for guest users' })
  })

  t.test('validates channel names as upstream does', async (t) => {
    expectError(t, await as(app, member).post('/users/me/subscriptions', { subscriptions: [{ name: '   ' }] }), { code: 'BAD_REQUEST', msg: "Channel name can't be empty." })
    expectError(t, await as(app, member).post('/users/me/subscriptions', { subscriptions: [{ name: 'x'.repeat(61) }] }), {
      code: 'BAD_REQUEST', msg: 'Channel name too long (limit: 60 characters).',
    })
    expectError(t, await as(app, member).post('/users/me/subscriptions', { subscriptions: [{ name: 'bad\u0007name' }] }), {
      code: 'BAD_REQUEST', msg: 'Invalid character in channel name, at position 4.',
    })
    expectSuccess(t, await as(app, member).post('/users/me/subscriptions', { subscriptions: [{ name: '🙂'.repeat(60) }] }))
  })

  t.test('rejects malformed parameters', async (t) => {
    expectError(t, await as(app, member).post('/users/me/subscriptions', {}), { code: 'REQUEST_VARIABLE_MISSING', msg: "Missing 'subscriptions' argument" })
    expectError(t, await as(app, member).post('/users/me/subscriptions', { subscriptions: 'not json' }), { code: 'BAD_REQUEST', msg: 'subscriptions is not valid JSON' })
    expectError(t, await as(app, member).post('/users/me/subscriptions', { subscriptions: [{ name: 'x' }], stream_post_policy: 5 }), { code: 'BAD_REQUEST' })
    expectError(t, await as(app, member).post('/users/me/subscriptions', { subscriptions: [{ name: 'x', color: 'red' }] }), {
      code: 'BAD_REQUEST', msg: 'color is not a valid hex color code',
    })
    expectError(t, await as(app, member).post('/users/me/subscriptions', { subscriptions: [{ name: 'x', description: 'd'.repeat(1025) }] }), { code: 'BAD_REQUEST' })
  })

  t.test('refuses a private channel the user is not in, or lists it as unauthorized', async (t) => {
    expectError(t, await as(app, otherMember).post('/users/me/subscriptions', { subscriptions: [{ name: 'secret' }] }), {
      code: 'BAD_REQUEST', msg: 'Unable to access channel (secret).',
    })
    const body = expectSuccess(t, await as(app, otherMember).post('/users/me/subscriptions', {
      subscriptions: [{ name: 'secret' }, { name: 'design' }], authorization_errors_fatal: false,
    }))
    t.same(body.unauthorized, ['secret'])
    t.same(body.subscribed, { [otherMember.id]: ['design'] })
  })

  t.test('subscribes other users when the realm lets the requester invite', async (t) => {
    const a = await fx.newUser()
    const b = await fx.newUser()
    const body = expectSuccess(t, await as(app, member).post('/users/me/subscriptions', { subscriptions: [{ name: 'design' }], principals: [a.id, b.id] }))
    t.same(body.subscribed, { [a.id]: ['design'], [b.id]: ['design'] })
    const byEmail = expectSuccess(t, await as(app, member).post('/users/me/subscriptions', { subscriptions: [{ name: 'general' }, { name: 'design' }], principals: [a.email.toUpperCase()] }))
    t.same(byEmail.already_subscribed, { [a.id]: ['general', 'design'] })
    expectError(t, await as(app, member).post('/users/me/subscriptions', { subscriptions: [{ name: 'design' }], principals: [a.id, b.email] }), { code: 'BAD_REQUEST' })

    await realmSetter(app, owner, services.prisma, fx.realm.id)({ inviteToStreamPolicy: 2 })
    t.teardown(() => realmSetter(app, owner, services.prisma, fx.realm.id)({ inviteToStreamPolicy: 1 }))
    const c = await fx.newUser()
    expectError(t, await as(app, member).post('/users/me/subscriptions', { subscriptions: [{ name: 'design' }], principals: [c.id] }), {
      code: 'BAD_REQUEST', msg: 'Insufficient permission',
    })
    expectSuccess(t, await as(app, member).post('/users/me/subscriptions', { subscriptions: [{ name: 'design' }], principals: [member.id] }))
    expectSuccess(t, await as(app, admin).post('/users/me/subscriptions', { subscriptions: [{ name: 'design' }], principals: [c.id] }))
  })

  t.test('rejects unknown and deactivated principals', async (t) => {
    expectError(t, await as(app, member).post('/users/me/subscriptions', { subscriptions: [{ name: 'design' }], principals: [999999] }), { code: 'BAD_REQUEST', msg: 'No such user' })
    expectError(t, await as(app, member).post('/users/me/subscriptions', { subscriptions: [{ name: 'design' }], principals: ['nobody@example.org'] }), { code: 'BAD_REQUEST', msg: 'No such user' })
    const gone = await fx.newUser()
    await services.prisma.user.update({ where: { id: gone.id }, data: { isActive: false } })
    expectError(t, await as(app, member).post('/users/me/subscriptions', { subscriptions: [{ name: 'design' }], principals: [gone.id] }), { code: 'BAD_REQUEST', msg: 'User is deactivated' })
  })

  t.test('lets only owners set a retention period', async (t) => {
    expectError(t, await as(app, admin).post('/users/me/subscriptions', { subscriptions: [{ name: 'kept' }], message_retention_days: 30 }), {
      code: 'UNAUTHORIZED_PRINCIPAL', msg: 'Must be an organization owner',
    })
    expectSuccess(t, await as(app, owner).post('/users/me/subscriptions', { subscriptions: [{ name: 'kept' }], message_retention_days: 30 }))
    expectSuccess(t, await as(app, owner).post('/users/me/subscriptions', { subscriptions: [{ name: 'forever' }], message_retention_days: 'unlimited' }))
    expectSuccess(t, await as(app, member).post('/users/me/subscriptions', { subscriptions: [{ name: 'inherits' }], message_retention_days: 'realm_default' }))
    const rows = await services.prisma.stream.findMany({ where: { realmId: fx.realm.id, name: { in: ['kept', 'forever', 'inherits'] } }, orderBy: { name: 'asc' } })
    t.same(rows.map((r) => [r.name, r.messageRetentionDays]), [['forever', -1], ['inherits', null], ['kept', 30]])
    const bad = expectError(t, await as(app, owner).post('/users/me/subscriptions', { subscriptions: [{ name: 'x' }], message_retention_days: 'forever' }), {
      code: 'REQUEST_VARIABLE_INVALID', msg: "Bad value for 'message_retention_days': forever",
    })
    t.equal(bad.var_name, 'message_retention_days')
    expectError(t, await as(app, owner).post('/users/me/subscriptions', { subscriptions: [{ name: 'x' }], message_retention_days: 0 }), { code: 'REQUEST_VARIABLE_INVALID' })
  })

  t.test('enforces who may create which kind of channel', async (t) => {
    await services.prisma.realm.update({ where: { id: fx.realm.id }, data: { canCreatePublicChannelGroupId: await groupId(SYSTEM_GROUPS.administrators) } })
    t.teardown(async () => services.prisma.realm.update({ where: { id: fx.realm.id }, data: { canCreatePublicChannelGroupId: await groupId(SYSTEM_GROUPS.members) } }))
    expectError(t, await as(app, member).post('/users/me/subscriptions', { subscriptions: [{ name: 'not-mine' }] }), { code: 'BAD_REQUEST', msg: 'Insufficient permission' })
    expectSuccess(t, await as(app, member).post('/users/me/subscriptions', { subscriptions: [{ name: 'mine-private' }], invite_only: true }))
    expectSuccess(t, await as(app, owner).post('/users/me/subscriptions', { subscriptions: [{ name: 'owners-public' }] }))
    t.equal(await services.prisma.stream.count({ where: { realmId: fx.realm.id, name: 'not-mine' } }), 0)
  })

  t.test('creates web-public channels only when spectators are allowed and the policy permits', async (t) => {
    expectError(t, await as(app, owner).post('/users/me/subscriptions', { subscriptions: [{ name: 'web' }], is_web_public: true }), {
      code: 'BAD_REQUEST', msg: 'Web-public channels are not enabled.',
    })
    await services.prisma.realm.update({ where: { id: fx.realm.id }, data: { webPublicAccessEnabled: true } })
    t.teardown(() => services.prisma.realm.update({ where: { id: fx.realm.id }, data: { webPublicAccessEnabled: false } }))
    expectError(t, await as(app, admin).post('/users/me/subscriptions', { subscriptions: [{ name: 'web' }], is_web_public: true }), { code: 'BAD_REQUEST', msg: 'Insufficient permission' })
    expectError(t, await as(app, owner).post('/users/me/subscriptions', { subscriptions: [{ name: 'web' }], is_web_public: true, invite_only: true }), { code: 'BAD_REQUEST', msg: 'Invalid parameters' })
    const { result, items } = await captured(services, () => as(app, owner).post('/users/me/subscriptions', { subscriptions: [{ name: 'web' }], is_web_public: true }))
    expectSuccess(t, result as never)
    t.ok(ofOp(items, 'stream', 'create')[0]?.userIds.includes(guest.id), 'guests hear of web-public channels')
  })

  t.test('makes new channels default only for administrators, and never private ones', async (t) => {
    expectError(t, await as(app, member).post('/users/me/subscriptions', { subscriptions: [{ name: 'def' }], is_default_stream: true }), {
      code: 'UNAUTHORIZED_PRINCIPAL', msg: 'Must be an organization administrator',
    })
    expectError(t, await as(app, admin).post('/users/me/subscriptions', { subscriptions: [{ name: 'def' }], is_default_stream: true, invite_only: true }), {
      code: 'BAD_REQUEST', msg: 'A default channel cannot be private.',
    })
    expectSuccess(t, await as(app, admin).post('/users/me/subscriptions', { subscriptions: [{ name: 'def' }], is_default_stream: true }))
    const stream = await services.prisma.stream.findFirstOrThrow({ where: { realmId: fx.realm.id, name: 'def' } })
    t.equal(await services.prisma.defaultStream.count({ where: { streamId: stream.id } }), 1)
  })

  t.test('sets the group settings at creation (levels 320–357), stream_post_policy as can_send_message_group', async (t) => {
    const members = await groupId(SYSTEM_GROUPS.members)
    const admins = await groupId(SYSTEM_GROUPS.administrators)
    const body = expectSuccess(t, await as(app, member).post('/users/me/subscriptions', { subscriptions: [{ name: 'news' }], stream_post_policy: 2, can_remove_subscribers_group: members }))
    t.ok(body.subscribed)
    const subs = expectSuccess(t, await as(app, member).get('/users/me/subscriptions')).subscriptions as Body[]
    t.match(subs.find((s) => s.name === 'news'), {
      stream_post_policy: 2,
      is_announcement_only: true,
      can_send_message_group: admins,
      can_remove_subscribers_group: members,
      // Upstream's defaults: the creator administers the channel; nobody else adds subscribers or subscribes.
      can_administer_channel_group: { direct_members: [member.id], direct_subgroups: [] },
      can_add_subscribers_group: await groupId(SYSTEM_GROUPS.nobody),
      can_subscribe_group: await groupId(SYSTEM_GROUPS.nobody),
    })
    const anonymous = { direct_members: [otherMember.id], direct_subgroups: [members] }
    expectSuccess(t, await as(app, member).post('/users/me/subscriptions', {
      subscriptions: [{ name: 'anon-1' }, { name: 'anon-2' }],
      can_send_message_group: JSON.stringify(anonymous),
      can_add_subscribers_group: JSON.stringify({ direct_members: [], direct_subgroups: [admins] }),
    }))
    const created = (expectSuccess(t, await as(app, member).get('/users/me/subscriptions')).subscriptions as Body[]).filter((s) => String(s.name).startsWith('anon-'))
    t.equal(created.length, 2)
    for (const sub of created) {
      // A single subgroup and no members is that group (upstream's parse_group_setting_value); stream_post_policy approximates an anonymous group by 1.
      t.match(sub, { can_send_message_group: anonymous, can_add_subscribers_group: admins, stream_post_policy: 1 })
    }
    const refused = async (params: Record<string, unknown>, msg: string) =>
      expectError(t, await as(app, member).post('/users/me/subscriptions', { subscriptions: [{ name: 'n2' }], ...params }), { code: 'BAD_REQUEST', msg })
    await refused({ can_remove_subscribers_group: await groupId(SYSTEM_GROUPS.internet) }, "'can_remove_subscribers_group' setting cannot be set to 'role:internet' group.")
    await refused({ can_subscribe_group: await groupId(SYSTEM_GROUPS.everyone) }, "'can_subscribe_group' setting cannot be set to 'role:everyone' group.")
    await refused({ can_administer_channel_group: await groupId(SYSTEM_GROUPS.everyone) }, "'can_administer_channel_group' setting cannot be set to 'role:everyone' group.")
    await refused({ can_remove_subscribers_group: 987654 }, 'Invalid user group')
    await refused({ can_send_message_group: JSON.stringify({ direct_members: [987654], direct_subgroups: [] }) }, 'Invalid user ID: 987654')
    await refused({ can_send_message_group: JSON.stringify({ direct_members: [], direct_subgroups: [987654, members] }) }, 'Invalid user group ID: 987654')
    t.equal(await services.prisma.stream.count({ where: { realmId: fx.realm.id, name: 'n2' } }), 0, 'no channel is left behind')
  })

  t.test('private channels through their groups: can_subscribe_group (357) and can_add_subscribers_group (342, 349)', async (t) => {
    const moderator = fx.users.moderator
    expectSuccess(t, await as(app, admin).post('/users/me/subscriptions', { subscriptions: [{ name: 'vault' }], invite_only: true, history_public_to_subscribers: true }))
    const vault = (await services.prisma.stream.findFirstOrThrow({ where: { realmId: fx.realm.id, name: 'vault' } })).id
    const join = (who: typeof member, principals?: number[]) =>
      as(app, who).post('/users/me/subscriptions', { subscriptions: [{ name: 'vault' }], ...(principals ? { principals } : {}) })
    expectError(t, await join(member), { code: 'BAD_REQUEST', msg: 'Unable to access channel (vault).' })
    expectSuccess(t, await as(app, admin).patch(`/streams/${vault}`, { can_subscribe_group: JSON.stringify({ direct_members: [member.id], direct_subgroups: [] }) }))
    t.same(expectSuccess(t, await join(member)).subscribed, { [member.id]: ['vault'] }, 'a member of can_subscribe_group joins the private channel')
    // With the realm setting narrowed to administrators, subscribing others needs the channel's own setting.
    await realmSetter(app, owner, services.prisma, fx.realm.id)({ inviteToStreamPolicy: 2 })
    t.teardown(() => realmSetter(app, owner, services.prisma, fx.realm.id)({ inviteToStreamPolicy: 1 }))
    expectError(t, await join(member, [otherMember.id]), { code: 'BAD_REQUEST', msg: 'Insufficient permission' })
    expectSuccess(t, await as(app, admin).patch(`/streams/${vault}`, { can_add_subscribers_group: JSON.stringify({ direct_members: [moderator.id], direct_subgroups: [] }) }))
    // Level 349: without being subscribed, and the channel is theirs to look up.
    t.same(expectSuccess(t, await join(moderator, [otherMember.id])).subscribed, { [otherMember.id]: ['vault'] })
    t.match(expectSuccess(t, await as(app, moderator).get(`/streams/${vault}`)).stream, { stream_id: vault, name: 'vault' })
    t.ok((expectSuccess(t, await as(app, moderator).get('/streams', { include_can_access_content: true })).streams as Body[]).some((s) => s.stream_id === vault))
    t.equal(await services.prisma.subscription.count({ where: { userId: moderator.id, streamId: vault, active: true } }), 0)
    expectError(t, await join(member, [owner.id]), { code: 'BAD_REQUEST', msg: 'Insufficient permission' })
    // Guests never hold these settings.
    expectSuccess(t, await as(app, admin).patch(`/streams/${vault}`, { can_subscribe_group: JSON.stringify({ direct_members: [member.id, guest.id], direct_subgroups: [] }) }))
    expectError(t, await as(app, guest).post('/users/me/subscriptions', { subscriptions: [{ name: 'vault' }] }), { code: 'BAD_REQUEST', msg: 'Not allowed for guest users' })

    // Level 354: content access through can_add_subscribers_group: read, react and send without subscribing.
    const sent = expectSuccess(t, await as(app, admin).post('/messages', { type: 'stream', to: 'vault', topic: 'secrets', content: 'in the vault' })).id as number
    const narrow = JSON.stringify([{ operator: 'channel', operand: vault }])
    const read = expectSuccess(t, await as(app, moderator).get('/messages', { anchor: 'newest', num_before: 10, num_after: 0, narrow })).messages as Body[]
    t.ok(read.some((m) => m.id === sent), 'the channel narrow reads its history')
    t.match(expectSuccess(t, await as(app, moderator).get(`/messages/${sent}`)).message, { id: sent, content: '<p>in the vault</p>' })
    expectSuccess(t, await as(app, moderator).post(`/messages/${sent}/reactions`, { emoji_name: 'smile' }))
    expectSuccess(t, await as(app, moderator).post('/messages', { type: 'stream', to: 'vault', topic: 'secrets', content: 'from outside' }))
    // Not for a guest listed in the same setting, nor for users outside it.
    expectSuccess(t, await as(app, admin).patch(`/streams/${vault}`, { can_add_subscribers_group: JSON.stringify({ direct_members: [moderator.id, guest.id], direct_subgroups: [] }) }))
    expectError(t, await as(app, guest).get(`/messages/${sent}`), { code: 'BAD_REQUEST', msg: 'Invalid message(s)' })
    expectError(t, await as(app, owner).get(`/messages/${sent}`), { code: 'BAD_REQUEST', msg: 'Invalid message(s)' })
    expectError(t, await as(app, owner).post('/messages', { type: 'stream', to: 'vault', topic: 'secrets', content: 'x' }), { code: 'BAD_REQUEST', msg: "Not authorized to send to channel 'vault'" })
  })

  t.test('lists parameters it does not support', async (t) => {
    const body = expectSuccess(t, await as(app, member).post('/users/me/subscriptions', { subscriptions: [{ name: 'general' }], colour: 'x' }))
    t.same(body.ignored_parameters_unsupported, ['colour'])
  })

  t.test('a failed request leaves nothing behind', async (t) => {
    const c = await fx.newUser()
    await services.prisma.user.update({ where: { id: c.id }, data: { isActive: false } })
    expectError(t, await as(app, owner).post('/users/me/subscriptions', { subscriptions: [{ name: 'ghost-town' }], principals: [owner.id, c.id] }), { code: 'BAD_REQUEST' })
    t.equal(await services.prisma.stream.count({ where: { realmId: fx.realm.id, name: 'ghost-town' } }), 0)
  })
  void ROLE
})

t.test('GET /users/me/subscriptions', async (t) => {
  const { app, fx } = await buildTestApp(t)
  const { owner, member } = fx.users

  t.test('lists the subscriptions sorted by name', async (t) => {
    const subs = expectSuccess(t, await as(app, member).get('/users/me/subscriptions')).subscriptions as Body[]
    t.same(subs.map((s) => s.name), ['design', 'general', 'secret'])
    t.notOk('subscribers' in (subs[0] as Body))
    t.match(subs[2], { name: 'secret', invite_only: true, history_public_to_subscribers: false, in_home_view: true, is_muted: false })
  })

  t.test('includes subscribers when asked', async (t) => {
    const subs = expectSuccess(t, await as(app, member).get('/users/me/subscriptions', { include_subscribers: true })).subscriptions as Body[]
    t.same(subs.find((s) => s.name === 'secret')?.subscribers, [owner.id, member.id].sort((a, b) => a - b))
  })

  t.test('rejects a non-boolean include_subscribers', async (t) => {
    expectError(t, await as(app, member).get('/users/me/subscriptions', { include_subscribers: 'maybe' }), { code: 'BAD_REQUEST', msg: 'include_subscribers is not a boolean' })
  })
})

t.test('DELETE /users/me/subscriptions', async (t) => {
  const { app, fx, services } = await buildTestApp(t)
  const { owner, admin, member, otherMember, guest, bot } = fx.users

  const join = async (user: typeof member, name: string) =>
    expectSuccess(t, await as(app, owner).post('/users/me/subscriptions', { subscriptions: [{ name }], principals: [user.id] }))

  t.test('unsubscribes the requester and tells the peers', async (t) => {
    const user = await fx.newUser()
    await join(user, 'design')
    const { result, items } = await captured(services, () => as(app, user).delete('/users/me/subscriptions', { subscriptions: ['design'] }))
    const body = expectSuccess(t, result as never)
    t.same(body.removed, ['design'])
    t.same(body.not_removed, [])
    t.same(ofOp(items, 'subscription', 'remove').map((i) => [i.event, i.userIds]), [
      [{ type: 'subscription', op: 'remove', subscriptions: [{ name: 'design', stream_id: fx.streams.design.id }] }, [user.id]],
    ])
    const [peer] = ofOp(items, 'subscription', 'peer_remove')
    t.same(peer?.event, { type: 'subscription', op: 'peer_remove', stream_ids: [fx.streams.design.id], user_ids: [user.id] })
    t.ok(peer?.userIds.includes(member.id))
    t.notOk(peer?.userIds.includes(user.id))
    t.same(ofOp(items, 'stream', 'delete'), [])
  })

  t.test('reports channels the user was not in', async (t) => {
    const body = expectSuccess(t, await as(app, otherMember).delete('/users/me/subscriptions', { subscriptions: ['design'] }))
    t.same(body, { result: 'success', msg: '', removed: [], not_removed: ['design'] })
  })

  t.test('a member leaving a private channel loses sight of it', async (t) => {
    const user = await fx.newUser()
    await join(user, 'secret')
    const { result, items } = await captured(services, () => as(app, user).delete('/users/me/subscriptions', { subscriptions: ['secret'] }))
    expectSuccess(t, result as never)
    t.match(ofOp(items, 'stream', 'delete'), [{ userIds: [user.id], event: { streams: [{ stream_id: fx.streams.secret.id }] } }])
    const [peer] = ofOp(items, 'subscription', 'peer_remove')
    t.same(peer?.userIds.sort(), [owner.id, admin.id, member.id].sort(), 'private: subscribers and administrators')
  })

  t.test('answers STREAM_DOES_NOT_EXIST for an unknown or invisible channel', async (t) => {
    const body = expectError(t, await as(app, member).delete('/users/me/subscriptions', { subscriptions: ['nowhere'] }), {
      code: 'STREAM_DOES_NOT_EXIST', msg: "Channel 'nowhere' does not exist",
    })
    t.equal(body.stream, 'nowhere')
    expectError(t, await as(app, otherMember).delete('/users/me/subscriptions', { subscriptions: ['secret'] }), { code: 'STREAM_DOES_NOT_EXIST' })
  })

  t.test('lets administrators remove anyone', async (t) => {
    const user = await fx.newUser()
    await join(user, 'secret')
    const body = expectSuccess(t, await as(app, admin).delete('/users/me/subscriptions', { subscriptions: ['secret'], principals: [user.id] }))
    t.same(body.removed, ['secret'])
  })

  t.test('refuses members removing others without the group permission', async (t) => {
    const user = await fx.newUser()
    await join(user, 'design')
    expectError(t, await as(app, member).delete('/users/me/subscriptions', { subscriptions: ['design'], principals: [user.id] }), {
      code: 'BAD_REQUEST', msg: 'Insufficient permission',
    })
  })

  t.test('lets channel administrators remove others (level 349)', async (t) => {
    await join(otherMember, 'design')
    const design = fx.streams.design.id
    const remove = () => as(app, member).delete('/users/me/subscriptions', { subscriptions: JSON.stringify(['design']), principals: JSON.stringify([otherMember.id]) })
    expectError(t, await remove(), { code: 'BAD_REQUEST', msg: 'Insufficient permission' })
    expectSuccess(t, await as(app, admin).patch(`/streams/${design}`, { can_administer_channel_group: JSON.stringify({ direct_members: [member.id], direct_subgroups: [] }) }))
    t.same(expectSuccess(t, await remove()).removed, ['design'])
  })

  t.test('lets a user remove a bot it owns', async (t) => {
    await join(bot, 'design')
    const body = expectSuccess(t, await as(app, member).delete('/users/me/subscriptions', { subscriptions: ['design'], principals: [bot.email] }))
    t.same(body.removed, ['design'])
    expectError(t, await as(app, otherMember).delete('/users/me/subscriptions', { subscriptions: ['design'], principals: [bot.id] }), {
      code: 'BAD_REQUEST', msg: 'Insufficient permission',
    })
  })

  t.test('lets members of can_remove_subscribers_group (through subgroups) remove others from channels they can access', async (t) => {
    const members = await services.prisma.userGroup.findUniqueOrThrow({ where: { realmId_name: { realmId: fx.realm.id, name: SYSTEM_GROUPS.members } } })
    const custom = await services.prisma.userGroup.create({ data: { realmId: fx.realm.id, name: 'removers' } })
    const inner = await services.prisma.userGroup.create({ data: { realmId: fx.realm.id, name: 'inner-removers' } })
    await services.prisma.userGroupSubgroup.create({ data: { supergroupId: custom.id, subgroupId: inner.id } })
    await services.prisma.userGroupMember.create({ data: { groupId: inner.id, userId: otherMember.id } })
    const room = await services.prisma.stream.create({
      data: { realmId: fx.realm.id, name: 'removable', canRemoveSubscribersGroupId: custom.id, inviteOnly: true },
    })
    const user = await fx.newUser()
    await services.prisma.subscription.createMany({ data: [{ userId: user.id, streamId: room.id, color: '#ffffff' }, { userId: member.id, streamId: room.id, color: '#ffffff' }] })
    // otherMember is in the group but cannot access the private channel.
    expectError(t, await as(app, otherMember).delete('/users/me/subscriptions', { subscriptions: ['removable'], principals: [user.id] }), { code: 'STREAM_DOES_NOT_EXIST' })
    await services.prisma.subscription.create({ data: { userId: otherMember.id, streamId: room.id, color: '#ffffff' } })
    const body = expectSuccess(t, await as(app, otherMember).delete('/users/me/subscriptions', { subscriptions: ['removable'], principals: [user.id] }))
    t.same(body.removed, ['removable'])
    // member can access but is not in the group.
    expectError(t, await as(app, member).delete('/users/me/subscriptions', { subscriptions: ['removable'], principals: [otherMember.id] }), {
      code: 'BAD_REQUEST', msg: 'Insufficient permission',
    })
    await services.prisma.stream.update({ where: { id: room.id }, data: { canRemoveSubscribersGroupId: members.id } })
    expectSuccess(t, await as(app, member).delete('/users/me/subscriptions', { subscriptions: ['removable'], principals: [otherMember.id] }))
  })

  t.test('answers BAD_REQUEST for deactivated or unknown principals (level 208)', async (t) => {
    const gone = await fx.newUser()
    await services.prisma.user.update({ where: { id: gone.id }, data: { isActive: false } })
    expectError(t, await as(app, admin).delete('/users/me/subscriptions', { subscriptions: ['general'], principals: [gone.id] }), { code: 'BAD_REQUEST', status: 400, msg: 'User is deactivated' })
    expectError(t, await as(app, admin).delete('/users/me/subscriptions', { subscriptions: ['general'], principals: [424242] }), { code: 'BAD_REQUEST', status: 400, msg: 'No such user' })
  })

  t.test('a guest can leave its own channels', async (t) => {
    const body = expectSuccess(t, await as(app, guest).delete('/users/me/subscriptions', { subscriptions: ['general'] }))
    t.same(body.removed, ['general'])
  })
})

t.test('POST /users/me/subscriptions/properties', async (t) => {
  const { app, fx, services } = await buildTestApp(t)
  const { member, otherMember } = fx.users
  const design = fx.streams.design.id
  const sub = () => services.prisma.subscription.findFirstOrThrow({ where: { userId: member.id, streamId: design } })

  t.test('changes the color and sends one update event', async (t) => {
    const { result, items } = await captured(services, () =>
      as(app, member).post('/users/me/subscriptions/properties', { subscription_data: [{ stream_id: design, property: 'color', value: '#123abc' }] }),
    )
    const body = expectSuccess(t, result as never)
    t.same(Object.keys(body).sort(), ['msg', 'result'])
    t.equal((await sub()).color, '#123abc')
    t.same(items.map((i) => [i.event, i.userIds]), [[{ type: 'subscription', op: 'update', stream_id: design, property: 'color', value: '#123abc' }, [member.id]]])
  })

  t.test('treats in_home_view as the inverse of is_muted and sends both events', async (t) => {
    const { items } = await captured(services, async () =>
      expectSuccess(t, await as(app, member).post('/users/me/subscriptions/properties', { subscription_data: [{ stream_id: design, property: 'in_home_view', value: false }] })),
    )
    t.equal((await sub()).isMuted, true)
    t.same(items.map((i) => i.event), [
      { type: 'subscription', op: 'update', stream_id: design, property: 'in_home_view', value: false },
      { type: 'subscription', op: 'update', stream_id: design, property: 'is_muted', value: true },
    ])
    const again = await captured(services, async () =>
      expectSuccess(t, await as(app, member).post('/users/me/subscriptions/properties', { subscription_data: [{ stream_id: design, property: 'is_muted', value: false }] })),
    )
    t.equal((await sub()).isMuted, false)
    t.same(again.items.map((i) => [i.event.property, i.event.value]), [['in_home_view', true], ['is_muted', false]])
  })

  t.test('sets every boolean property', async (t) => {
    const props = ['pin_to_top', 'desktop_notifications', 'audible_notifications', 'push_notifications', 'email_notifications', 'wildcard_mentions_notify']
    expectSuccess(t, await as(app, member).post('/users/me/subscriptions/properties', {
      subscription_data: props.map((property) => ({ stream_id: design, property, value: true })),
    }))
    const row = await sub()
    t.same([row.pinToTop, row.desktopNotifications, row.audibleNotifications, row.pushNotifications, row.emailNotifications, row.wildcardMentionsNotify], [true, true, true, true, true, true])
    const listed = (expectSuccess(t, await as(app, member).get('/users/me/subscriptions')).subscriptions as Body[]).find((s) => s.stream_id === design)
    t.match(listed, { pin_to_top: true, desktop_notifications: true, wildcard_mentions_notify: true })
  })

  t.test('rejects bad requests without changing anything', async (t) => {
    const before = await sub()
    const post = (data: unknown[]) => as(app, member).post('/users/me/subscriptions/properties', { subscription_data: data })
    expectError(t, await post([{ stream_id: design, property: 'color', value: '#000000' }, { stream_id: design, property: 'volume', value: true }]), {
      code: 'BAD_REQUEST', msg: 'Unknown subscription property: volume',
    })
    expectError(t, await post([{ stream_id: design, property: 'color', value: 'blue' }]), { code: 'BAD_REQUEST', msg: 'color is not a valid hex color code' })
    expectError(t, await post([{ stream_id: design, property: 'pin_to_top', value: 'yes' }]), { code: 'BAD_REQUEST', msg: 'pin_to_top is not a boolean' })
    expectError(t, await post([{ stream_id: 987654, property: 'pin_to_top', value: true }]), { code: 'BAD_REQUEST', msg: 'Invalid channel ID' })
    expectError(t, await post([{ stream_id: design, property: 'pin_to_top' }]), { code: 'BAD_REQUEST' })
    const after = await sub()
    t.equal(after.color, before.color, 'the valid first change was rolled back')
    expectError(t, await as(app, otherMember).post('/users/me/subscriptions/properties', { subscription_data: [{ stream_id: design, property: 'pin_to_top', value: true }] }), {
      code: 'BAD_REQUEST', msg: `Not subscribed to channel ID ${design}`,
    })
    expectError(t, await as(app, otherMember).post('/users/me/subscriptions/properties', { subscription_data: [{ stream_id: fx.streams.secret.id, property: 'pin_to_top', value: true }] }), {
      code: 'BAD_REQUEST', msg: 'Invalid channel ID',
    })
  })
})
