import t from 'tap'
import { buildTestApp } from '../support/app.js'
import { realmSetter } from '../support/realm-settings.js'
import { as } from '../support/client.js'
import { expectError, expectSuccess } from '../support/expect.js'
import type { Services } from '../../src/services.js'
import type { BusItem } from '../../src/events/bus.js'
import type { User } from '../../src/db/index.js'
import { SYSTEM_GROUPS } from '../../src/domain/system-groups.js'
import { POLICY } from '../../src/domain/roles.js'
import { busItemsDuring, captureEvents } from '../support/events.js'

const groupEvents = <T>(services: Services, fn: () => Promise<T>) => busItemsDuring(services, fn, 'user_group')

let n = 0
const uniqueName = (base = 'team') => `${base}-${n++}`

t.test('user groups', async (t) => {
  const { app, fx, services } = await buildTestApp(t)
  const { owner, admin, moderator, member, otherMember, guest, bot } = fx.users
  const systemGroupId = async (name: string) =>
    (await services.prisma.userGroup.findUniqueOrThrow({ where: { realmId_name: { realmId: fx.realm.id, name } } })).id
  const create = async (by: User, params: Record<string, unknown> = {}) => {
    const body = expectSuccess(t, await as(app, by).post('/user_groups/create', { name: uniqueName(), description: 'A team', members: [by.id], ...params }))
    return body.group_id as number
  }
  const groupsOf = async (user: User) => expectSuccess(t, await as(app, user).get('/user_groups')).user_groups as Record<string, unknown>[]

  t.test('GET /user_groups lists system groups with their subgroup chain', async (t) => {
    const groups = await groupsOf(member)
    const admins = groups.find((g) => g.name === SYSTEM_GROUPS.administrators)
    const owners = groups.find((g) => g.name === SYSTEM_GROUPS.owners)
    t.match(admins, { is_system_group: true, members: [admin.id], direct_subgroup_ids: [owners?.id], description: String })
    const nobody = await systemGroupId(SYSTEM_GROUPS.nobody)
    for (const setting of ['can_add_members_group', 'can_join_group', 'can_leave_group', 'can_manage_group', 'can_mention_group', 'can_remove_members_group']) {
      t.equal(admins?.[setting], nobody, `${setting} of a system group is role:nobody`)
    }
    t.ok(groups.some((g) => g.name === SYSTEM_GROUPS.everyone))
  })

  t.test('GET /user_groups is not for guests or bots', async (t) => {
    expectError(t, await as(app, guest).get('/user_groups'), { code: 'BAD_REQUEST', msg: 'Not allowed for guest users' })
    expectError(t, await as(app, bot).get('/user_groups'), { code: 'BAD_REQUEST', msg: 'This endpoint does not accept bot requests.' })
  })

  t.test('POST /user_groups/create makes a group and tells everyone', async (t) => {
    const name = uniqueName('backend')
    const admins = await systemGroupId(SYSTEM_GROUPS.administrators)
    const { result, items } = await groupEvents(services, () =>
      as(app, member).post('/user_groups/create', { name, description: 'Backend team', members: [member.id, otherMember.id], subgroups: [admins] }),
    )
    const id = expectSuccess(t, result).group_id
    const group = (await groupsOf(member)).find((g) => g.id === id)
    const everyone = await systemGroupId(SYSTEM_GROUPS.everyone)
    const nobody = await systemGroupId(SYSTEM_GROUPS.nobody)
    const creator = { direct_members: [member.id], direct_subgroups: [] }
    t.type(group?.date_created, 'number')
    t.same(group, {
      id,
      name,
      description: 'Backend team',
      members: [member.id, otherMember.id].sort((a, b) => a - b),
      direct_subgroup_ids: [admins],
      creator_id: member.id,
      date_created: group?.date_created,
      is_system_group: false,
      can_add_members_group: creator,
      can_join_group: nobody,
      can_leave_group: everyone,
      can_manage_group: creator,
      can_mention_group: everyone,
      can_remove_members_group: nobody,
      deactivated: false,
    })
    t.same(Object.keys(group ?? {}), [
      'id', 'name', 'description', 'members', 'direct_subgroup_ids', 'creator_id', 'date_created', 'is_system_group',
      'can_add_members_group', 'can_join_group', 'can_leave_group', 'can_manage_group', 'can_mention_group', 'can_remove_members_group', 'deactivated',
    ])
    t.equal(items.length, 1)
    t.same(items[0]?.event, { type: 'user_group', op: 'add', group })
    for (const user of [owner, member, guest]) t.ok(items[0]?.userIds.includes(user.id))
  })

  t.test('create rejects bad names, unknown users and unknown groups', async (t) => {
    const post = (params: Record<string, unknown>) => as(app, member).post('/user_groups/create', { name: uniqueName(), description: '', members: [], ...params })
    expectError(t, await post({ name: '  ' }), { code: 'BAD_REQUEST', msg: "User group name can't be empty!" })
    expectError(t, await post({ name: 'x'.repeat(101) }), { code: 'BAD_REQUEST', msg: 'User group name cannot exceed 100 characters.' })
    expectError(t, await post({ name: 'role:fake' }), { code: 'BAD_REQUEST', msg: "User group name cannot start with 'role:'." })
    expectError(t, await post({ name: '@all' }), { code: 'BAD_REQUEST', msg: "User group name cannot start with '@'." })
    expectError(t, await post({ members: [member.id, 999_999] }), { code: 'BAD_REQUEST', msg: 'Invalid user ID: 999999' })
    expectError(t, await post({ subgroups: [999_999] }), { code: 'BAD_REQUEST', msg: 'Invalid user group ID: 999999' })
    expectError(t, await post({ can_mention_group: await systemGroupId(SYSTEM_GROUPS.internet) }), {
      code: 'BAD_REQUEST', msg: "'can_mention_group' setting cannot be set to 'role:internet' group.",
    })
    expectError(t, await post({ members: 'x' }), { code: 'BAD_REQUEST' })
    const name = uniqueName()
    expectSuccess(t, await post({ name }))
    expectError(t, await post({ name }), { code: 'BAD_REQUEST', msg: `User group '${name}' already exists.` })
  })

  t.test('creating needs can_create_groups (user_group_edit_policy sets it), and is not for guests or bots', async (t) => {
    expectError(t, await as(app, guest).post('/user_groups/create', { name: uniqueName(), description: '', members: [] }), { code: 'BAD_REQUEST', msg: 'Not allowed for guest users' })
    expectError(t, await as(app, bot).post('/user_groups/create', { name: uniqueName(), description: '', members: [] }), { code: 'BAD_REQUEST', msg: 'This endpoint does not accept bot requests.' })
    const { app: app2, fx: fx2, services: s2 } = await buildTestApp(t)
    await realmSetter(app2, fx2.users.owner, s2.prisma, fx2.realm.id)({ userGroupEditPolicy: POLICY.ADMINS })
    expectError(t, await as(app2, fx2.users.member).post('/user_groups/create', { name: 'x', description: '', members: [] }), { code: 'BAD_REQUEST', msg: 'Insufficient permission' })
    expectSuccess(t, await as(app2, fx2.users.admin).post('/user_groups/create', { name: 'x', description: '', members: [] }))
  })

  t.test('PATCH /user_groups/{id} renames, describes and changes can_mention_group', async (t) => {
    const id = await create(member)
    const name = uniqueName('renamed')
    const { result, items } = await groupEvents(services, () => as(app, member).patch(`/user_groups/${id}`, { name, description: 'New words' }))
    expectSuccess(t, result)
    t.match(items.map((i) => i.event), [
      { type: 'user_group', op: 'update', group_id: id, data: { name } },
      { type: 'user_group', op: 'update', group_id: id, data: { description: 'New words' } },
    ])
    const moderators = await systemGroupId(SYSTEM_GROUPS.moderators)
    const everyone = await systemGroupId(SYSTEM_GROUPS.everyone)
    expectError(t, await as(app, member).patch(`/user_groups/${id}`, { can_mention_group: { new: moderators, old: moderators } }), {
      code: 'EXPECTATION_MISMATCH', msg: "'old' value does not match the expected value.",
    })
    const changed = await groupEvents(services, () => as(app, member).patch(`/user_groups/${id}`, { can_mention_group: { new: moderators, old: everyone } }))
    expectSuccess(t, changed.result)
    t.match(changed.items.map((i) => i.event), [{ op: 'update', group_id: id, data: { can_mention_group: moderators } }])
    t.match((await groupsOf(member)).find((g) => g.id === id), { name, description: 'New words', can_mention_group: moderators })
  })

  t.test('PATCH needs new data and a known, writable group', async (t) => {
    const id = await create(member)
    expectError(t, await as(app, member).patch(`/user_groups/${id}`, {}), { code: 'BAD_REQUEST', msg: 'No new data supplied' })
    expectError(t, await as(app, member).patch('/user_groups/999999', { name: 'x' }), { code: 'BAD_REQUEST', msg: 'Invalid user group' })
    expectError(t, await as(app, otherMember).patch(`/user_groups/${id}`, { name: uniqueName() }), { code: 'BAD_REQUEST', msg: 'Insufficient permission' })
    expectError(t, await as(app, moderator).patch(`/user_groups/${id}`, { description: 'moderated' }), { code: 'BAD_REQUEST', msg: 'Insufficient permission' })
    expectSuccess(t, await as(app, owner).patch(`/user_groups/${id}`, { description: 'owned' }))
    const admins = await systemGroupId(SYSTEM_GROUPS.administrators)
    expectError(t, await as(app, owner).patch(`/user_groups/${admins}`, { description: 'x' }), { code: 'BAD_REQUEST', msg: 'Insufficient permission' })
    const other = await fx.newUser()
    const taken = uniqueName()
    await create(other, { name: taken })
    expectError(t, await as(app, member).patch(`/user_groups/${id}`, { name: taken }), { code: 'BAD_REQUEST', msg: `User group '${taken}' already exists.` })
  })

  t.test('a group of another realm is invalid', async (t) => {
    const { app: app2, fx: fx2 } = await buildTestApp(t)
    const body = expectSuccess(t, await as(app2, fx2.users.member).post('/user_groups/create', { name: 'elsewhere', description: '', members: [] }))
    expectError(t, await as(app, member).get(`/user_groups/${body.group_id}/members`), { code: 'BAD_REQUEST', msg: 'Invalid user group' })
    expectError(t, await as(app, admin).post(`/user_groups/${body.group_id}/deactivate`), { code: 'BAD_REQUEST', msg: 'Invalid user group' })
  })

  t.test('groups are not deleted (level 294): DELETE answers 405', async (t) => {
    const id = await create(member)
    const res = await as(app, member).delete(`/user_groups/${id}`)
    t.equal(res.statusCode, 405)
    t.same(res.json(), { result: 'error', msg: 'Method Not Allowed', code: 'METHOD_NOT_ALLOWED', allowed_methods: ['PATCH'] })
    t.ok((await groupsOf(member)).some((g) => g.id === id))
  })

  t.test('POST /user_groups/{id}/deactivate deactivates the group and tells everyone', async (t) => {
    const id = await create(member)
    const { result, items } = await groupEvents(services, () => as(app, member).post(`/user_groups/${id}/deactivate`))
    t.same(expectSuccess(t, result), { result: 'success', msg: '' })
    t.same(items.map((i) => i.event), [
      { type: 'user_group', op: 'update', group_id: id, data: { deactivated: true } },
      { type: 'user_group', op: 'remove', group_id: id },
    ])
    for (const item of items) for (const user of [owner, member, guest]) t.ok(item.userIds.includes(user.id))
    t.notOk((await groupsOf(member)).some((g) => g.id === id))
    const all = expectSuccess(t, await as(app, member).get('/user_groups', { include_deactivated_groups: true })).user_groups as Record<string, unknown>[]
    t.match(all.find((g) => g.id === id), { id, deactivated: true, members: [member.id] })
    expectError(t, await as(app, member).post(`/user_groups/${id}/deactivate`), { code: 'BAD_REQUEST', msg: 'User group is deactivated.' })
  })

  t.test('a queue with include_deactivated_groups gets the update, one without it the remove', async (t) => {
    const id = await create(member)
    const modern = await captureEvents(app, otherMember, () => as(app, member).post(`/user_groups/${id}/deactivate`), { register: { event_types: ['user_group'] } })
    t.same(modern.map(({ id: _id, ...e }) => e), [{ type: 'user_group', op: 'update', group_id: id, data: { deactivated: true } }])
    const other = await create(member)
    const legacy = await captureEvents(app, otherMember, () => as(app, member).post(`/user_groups/${other}/deactivate`), {
      register: { event_types: ['user_group'], client_capabilities: {} },
    })
    t.same(legacy.map(({ id: _id, ...e }) => e), [{ type: 'user_group', op: 'remove', group_id: other }])
    const withGroups = expectSuccess(t, await as(app, otherMember).post('/register', { fetch_event_types: ['realm_user_groups'], client_capabilities: { include_deactivated_groups: true } }))
    t.ok((withGroups.realm_user_groups as { id: number }[]).some((g) => g.id === other))
    const without = expectSuccess(t, await as(app, otherMember).post('/register', { fetch_event_types: ['realm_user_groups'] }))
    t.notOk((without.realm_user_groups as { id: number }[]).some((g) => g.id === other))
  })

  t.test('a deactivated group keeps its name, description and members editable, not its subgroups', async (t) => {
    const id = await create(member)
    expectSuccess(t, await as(app, member).post(`/user_groups/${id}/deactivate`))
    const name = uniqueName('old')
    const modern = await captureEvents(app, otherMember, () => as(app, member).patch(`/user_groups/${id}`, { name, description: 'retired' }), { register: { event_types: ['user_group'] } })
    t.same(modern.map(({ id: _id, ...e }) => e), [
      { type: 'user_group', op: 'update', group_id: id, data: { name } },
      { type: 'user_group', op: 'update', group_id: id, data: { description: 'retired' } },
    ])
    const legacy = await captureEvents(app, otherMember, () => as(app, member).patch(`/user_groups/${id}`, { name: `${name}-2`, description: 'gone' }), {
      register: { event_types: ['user_group'], client_capabilities: {} },
    })
    t.same(legacy.map(({ id: _id, ...e }) => e), [{ type: 'user_group', op: 'update', group_id: id, data: { description: 'gone' } }])
    expectSuccess(t, await as(app, member).post(`/user_groups/${id}/members`, { add: [otherMember.id] }))
    const other = await create(member)
    expectError(t, await as(app, member).post(`/user_groups/${id}/members`, { add_subgroups: [other] }), { code: 'BAD_REQUEST', msg: 'User group is deactivated.' })
    expectError(t, await as(app, member).post(`/user_groups/${id}/subgroups`, { add: [other] }), { code: 'BAD_REQUEST', msg: 'User group is deactivated.' })
    expectError(t, await as(app, member).post(`/user_groups/${other}/subgroups`, { add: [id] }), { code: 'BAD_REQUEST', msg: 'User group is deactivated.' })
    expectError(t, await as(app, member).post('/user_groups/create', { name: uniqueName(), description: '', members: [], subgroups: [id] }), {
      code: 'BAD_REQUEST', msg: 'User group is deactivated.',
    })
    expectError(t, await as(app, member).get(`/user_groups/${id}/members`), { code: 'BAD_REQUEST', msg: 'User group is deactivated.' })
    expectError(t, await as(app, member).get(`/user_groups/${id}/subgroups`), { code: 'BAD_REQUEST', msg: 'User group is deactivated.' })
    expectError(t, await as(app, member).get(`/user_groups/${id}/members/${member.id}`), { code: 'BAD_REQUEST', msg: 'User group is deactivated.' })
    const all = expectSuccess(t, await as(app, member).get('/user_groups', { include_deactivated_groups: true })).user_groups as Record<string, unknown>[]
    t.match(all.find((g) => g.id === id), { name: `${name}-2`, description: 'gone', members: [member.id, otherMember.id].sort((a, b) => a - b), deactivated: true })
  })

  t.test('deactivation needs the group to be writable', async (t) => {
    const id = await create(member)
    expectError(t, await as(app, otherMember).post(`/user_groups/${id}/deactivate`), { code: 'BAD_REQUEST', msg: 'Insufficient permission' })
    expectError(t, await as(app, guest).post(`/user_groups/${id}/deactivate`), { code: 'BAD_REQUEST', msg: 'Not allowed for guest users' })
    expectError(t, await as(app, member).post('/user_groups/999999/deactivate'), { code: 'BAD_REQUEST', msg: 'Invalid user group' })
    const everyone = await systemGroupId(SYSTEM_GROUPS.everyone)
    expectError(t, await as(app, owner).post(`/user_groups/${everyone}/deactivate`), { code: 'BAD_REQUEST', msg: 'Insufficient permission' })
    expectError(t, await as(app, moderator).post(`/user_groups/${id}/deactivate`), { code: 'BAD_REQUEST', msg: 'Insufficient permission' })
    expectSuccess(t, await as(app, owner).post(`/user_groups/${id}/deactivate`))
  })

  t.test('a group in use cannot be deactivated (CANNOT_DEACTIVATE_GROUP_IN_USE, level 298)', async (t) => {
    const inUse = (objections: unknown[]) => ({ code: 'CANNOT_DEACTIVATE_GROUP_IN_USE', status: 400, msg: 'Cannot deactivate user group in use.', objections })
    const check = async (id: number, objections: unknown[]) => {
      const res = await as(app, member).post(`/user_groups/${id}/deactivate`)
      expectError(t, res, inUse(objections))
      t.same(res.json(), { result: 'error', msg: 'Cannot deactivate user group in use.', code: 'CANNOT_DEACTIVATE_GROUP_IN_USE', objections })
    }
    const sub = await create(member)
    const top = await create(member, { subgroups: [sub] })
    await check(sub, [{ type: 'subgroup', supergroup_ids: [top] }])
    // A deactivated supergroup does not hold its subgroups.
    expectSuccess(t, await as(app, member).post(`/user_groups/${top}/deactivate`))
    expectSuccess(t, await as(app, member).post(`/user_groups/${sub}/deactivate`))

    const mentioned = await create(member)
    const user = await create(member, { can_mention_group: mentioned })
    await check(mentioned, [{ type: 'user_group', group_id: user, settings: ['can_mention_group'] }])

    const forChannel = await create(member)
    const before = fx.streams.design.canRemoveSubscribersGroupId
    await services.prisma.stream.update({ where: { id: fx.streams.design.id }, data: { canRemoveSubscribersGroupId: forChannel } })
    await check(forChannel, [{ type: 'channel', channel_id: fx.streams.design.id, settings: ['can_remove_subscribers_group'] }])
    await services.prisma.stream.update({ where: { id: fx.streams.design.id }, data: { canRemoveSubscribersGroupId: before } })

    const forRealm = await create(member)
    const realm = await services.prisma.realm.findUniqueOrThrow({ where: { id: fx.realm.id } })
    await services.prisma.realm.update({ where: { id: fx.realm.id }, data: { createMultiuseInviteGroupId: forRealm } })
    await check(forRealm, [{ type: 'realm', settings: ['create_multiuse_invite_group'] }])
    await services.prisma.realm.update({ where: { id: fx.realm.id }, data: { createMultiuseInviteGroupId: realm.createMultiuseInviteGroupId } })
  })

  t.test('POST /user_groups/{id}/members adds and removes members with events', async (t) => {
    const id = await create(member)
    const a = await fx.newUser()
    const b = await fx.newUser()
    const { result, items } = await groupEvents(services, () => as(app, member).post(`/user_groups/${id}/members`, { add: [a.id, b.id], delete: [member.id] }))
    expectSuccess(t, result)
    t.match(items.map((i) => i.event), [
      { type: 'user_group', op: 'add_members', group_id: id, user_ids: [a.id, b.id] },
      { type: 'user_group', op: 'remove_members', group_id: id, user_ids: [member.id] },
    ])
    t.same(expectSuccess(t, await as(app, member).get(`/user_groups/${id}/members`)).members, [a.id, b.id])
  })

  t.test('members: upstream errors', async (t) => {
    const id = await create(member)
    const post = (params: Record<string, unknown>) => as(app, member).post(`/user_groups/${id}/members`, params)
    const nothing = 'Nothing to do. Specify at least one of "add", "delete", "add_subgroups" or "delete_subgroups".'
    expectError(t, await post({}), { code: 'BAD_REQUEST', msg: nothing })
    expectError(t, await post({ add: [], delete: [], add_subgroups: [], delete_subgroups: [] }), { code: 'BAD_REQUEST', msg: nothing })
    expectError(t, await post({ add: [member.id] }), { code: 'BAD_REQUEST', msg: `User ${member.id} is already a member of this group` })
    expectError(t, await post({ delete: [otherMember.id] }), { code: 'BAD_REQUEST', msg: `There is no member '${otherMember.id}' in this user group` })
    expectError(t, await post({ add: [999_999] }), { code: 'BAD_REQUEST', msg: 'Invalid user ID: 999999' })
    expectError(t, await as(app, member).post('/user_groups/999999/members', { add: [owner.id] }), { code: 'BAD_REQUEST', msg: 'Invalid user group' })
    expectError(t, await as(app, otherMember).post(`/user_groups/${id}/members`, { add: [otherMember.id] }), { code: 'BAD_REQUEST', msg: 'Insufficient permission' })
    expectError(t, await as(app, guest).post(`/user_groups/${id}/members`, { add: [guest.id] }), { code: 'BAD_REQUEST', msg: 'Not allowed for guest users' })
    const admins = await systemGroupId(SYSTEM_GROUPS.administrators)
    expectError(t, await as(app, owner).post(`/user_groups/${admins}/members`, { add: [member.id] }), { code: 'BAD_REQUEST', msg: 'Insufficient permission' })
  })

  t.test('POST /user_groups/{id}/members also changes subgroups (level 311)', async (t) => {
    const id = await create(member)
    const sub = await create(member)
    const a = await fx.newUser()
    const added = await groupEvents(services, () => as(app, member).post(`/user_groups/${id}/members`, { add: [a.id], add_subgroups: [sub] }))
    t.same(expectSuccess(t, added.result), { result: 'success', msg: '' })
    t.same(added.items.map((i) => i.event), [
      { type: 'user_group', op: 'add_members', group_id: id, user_ids: [a.id] },
      { type: 'user_group', op: 'add_subgroups', group_id: id, direct_subgroup_ids: [sub] },
    ])
    t.same(expectSuccess(t, await as(app, member).get(`/user_groups/${id}/subgroups`)).subgroups, [sub])
    expectError(t, await as(app, member).post(`/user_groups/${id}/members`, { add_subgroups: [sub] }), { code: 'BAD_REQUEST', msg: `User group ${sub} is already a subgroup of this group.` })
    expectError(t, await as(app, member).post(`/user_groups/${sub}/members`, { add_subgroups: [id] }), {
      code: 'BAD_REQUEST', msg: `User group ${sub} is already a subgroup of one of the passed subgroups.`,
    })
    expectError(t, await as(app, member).post(`/user_groups/${id}/members`, { add_subgroups: [999_999] }), { code: 'BAD_REQUEST', msg: 'Invalid user group ID: 999999' })
    const removed = await groupEvents(services, () => as(app, member).post(`/user_groups/${id}/members`, { delete_subgroups: [sub] }))
    expectSuccess(t, removed.result)
    t.same(removed.items.map((i) => i.event), [{ type: 'user_group', op: 'remove_subgroups', group_id: id, direct_subgroup_ids: [sub] }])
    expectError(t, await as(app, member).post(`/user_groups/${id}/members`, { delete_subgroups: [sub] }), { code: 'BAD_REQUEST', msg: `User group ${sub} is not a subgroup of this group.` })
  })

  t.test('deactivated users are members of no group (level 303)', async (t) => {
    const leaving = await fx.newUser()
    const id = await create(member, { members: [member.id, leaving.id] })
    expectSuccess(t, await as(app, admin).delete(`/users/${leaving.id}`))
    t.same(expectSuccess(t, await as(app, member).get(`/user_groups/${id}/members`)).members, [member.id])
    t.equal(expectSuccess(t, await as(app, member).get(`/user_groups/${id}/members/${leaving.id}`)).is_user_group_member, false)
    t.match((await groupsOf(member)).find((g) => g.id === id), { members: [member.id] })
    const everyoneId = await systemGroupId(SYSTEM_GROUPS.everyone)
    t.notOk((expectSuccess(t, await as(app, member).get(`/user_groups/${everyoneId}/members`)).members as number[]).includes(leaving.id))
    expectError(t, await as(app, member).post(`/user_groups/${id}/members`, { add: [leaving.id] }), { code: 'BAD_REQUEST', msg: `Invalid user ID: ${leaving.id}` })
    expectError(t, await as(app, member).post(`/user_groups/${id}/members`, { delete: [leaving.id] }), { code: 'BAD_REQUEST', msg: `Invalid user ID: ${leaving.id}` })
    const back = await groupEvents(services, () => as(app, admin).post(`/users/${leaving.id}/reactivate`))
    expectSuccess(t, back.result)
    const direct = (await services.prisma.userGroupMember.findMany({ where: { userId: leaving.id }, orderBy: { groupId: 'asc' } })).map((m) => m.groupId)
    t.ok(direct.includes(id))
    t.same(
      back.items.map((i) => i.event),
      direct.map((g) => ({ type: 'user_group', op: 'add_members', group_id: g, user_ids: [leaving.id] })),
    )
    t.same(expectSuccess(t, await as(app, member).get(`/user_groups/${id}/members`)).members, [member.id, leaving.id].sort((x, y) => x - y))
  })

  t.test('members: a failing removal undoes the additions of the same request', async (t) => {
    const id = await create(member)
    const a = await fx.newUser()
    const { result, items } = await groupEvents(services, () => as(app, member).post(`/user_groups/${id}/members`, { add: [a.id], delete: [otherMember.id] }))
    expectError(t, result, { code: 'BAD_REQUEST' })
    t.equal(items.length, 0)
    t.same(expectSuccess(t, await as(app, member).get(`/user_groups/${id}/members`)).members, [member.id])
  })

  t.test('POST /user_groups/{id}/subgroups adds and removes subgroups with events', async (t) => {
    const top = await create(member)
    const mid = await create(member)
    const low = await create(otherMember, { members: [otherMember.id] })
    const added = await groupEvents(services, () => as(app, member).post(`/user_groups/${top}/subgroups`, { add: [mid] }))
    expectSuccess(t, added.result)
    t.match(added.items.map((i) => i.event), [{ type: 'user_group', op: 'add_subgroups', group_id: top, direct_subgroup_ids: [mid] }])
    expectSuccess(t, await as(app, member).post(`/user_groups/${mid}/subgroups`, { add: [low] }))
    t.same(expectSuccess(t, await as(app, member).get(`/user_groups/${top}/subgroups`)).subgroups, [mid, low].sort((a, b) => a - b))
    t.same(expectSuccess(t, await as(app, member).get(`/user_groups/${top}/subgroups`, { direct_subgroup_only: true })).subgroups, [mid])
    t.same(expectSuccess(t, await as(app, member).get(`/user_groups/${top}/members`)).members, [member.id, otherMember.id].sort((a, b) => a - b))
    t.same(expectSuccess(t, await as(app, member).get(`/user_groups/${top}/members`, { direct_member_only: true })).members, [member.id])
    t.equal(expectSuccess(t, await as(app, member).get(`/user_groups/${top}/members/${otherMember.id}`)).is_user_group_member, true)
    t.equal(expectSuccess(t, await as(app, member).get(`/user_groups/${top}/members/${otherMember.id}`, { direct_member_only: true })).is_user_group_member, false)
    expectError(t, await as(app, member).get(`/user_groups/${top}/members/999999`), { code: 'BAD_REQUEST', msg: 'No such user' })
    const removed = await groupEvents(services, () => as(app, member).post(`/user_groups/${mid}/subgroups`, { delete: [low] }))
    expectSuccess(t, removed.result)
    t.match(removed.items.map((i) => i.event), [{ type: 'user_group', op: 'remove_subgroups', group_id: mid, direct_subgroup_ids: [low] }])
    t.same(expectSuccess(t, await as(app, member).get(`/user_groups/${top}/subgroups`)).subgroups, [mid])
  })

  t.test('subgroups: cycles, duplicates and unknown IDs are rejected', async (t) => {
    const a = await create(member)
    const b = await create(member)
    const c = await create(member)
    expectSuccess(t, await as(app, member).post(`/user_groups/${a}/subgroups`, { add: [b] }))
    expectSuccess(t, await as(app, member).post(`/user_groups/${b}/subgroups`, { add: [c] }))
    const { result, items } = await groupEvents(services, () => as(app, member).post(`/user_groups/${c}/subgroups`, { add: [a] }))
    expectError(t, result, { code: 'BAD_REQUEST', msg: `User group ${c} is already a subgroup of one of the passed subgroups.` })
    t.equal(items.length, 0)
    expectError(t, await as(app, member).post(`/user_groups/${a}/subgroups`, { add: [a] }), { code: 'BAD_REQUEST', msg: `User group ${a} is already a subgroup of one of the passed subgroups.` })
    expectError(t, await as(app, member).post(`/user_groups/${a}/subgroups`, { add: [b] }), { code: 'BAD_REQUEST', msg: `User group ${b} is already a subgroup of this group.` })
    expectError(t, await as(app, member).post(`/user_groups/${a}/subgroups`, { delete: [c] }), { code: 'BAD_REQUEST', msg: `User group ${c} is not a subgroup of this group.` })
    expectError(t, await as(app, member).post(`/user_groups/${a}/subgroups`, { add: [999_999] }), { code: 'BAD_REQUEST', msg: 'Invalid user group ID: 999999' })
    expectError(t, await as(app, member).post(`/user_groups/${a}/subgroups`, {}), { code: 'BAD_REQUEST', msg: 'Nothing to do. Specify at least one of "add" or "delete".' })
    const everyone = await systemGroupId(SYSTEM_GROUPS.everyone)
    expectError(t, await as(app, owner).post(`/user_groups/${everyone}/subgroups`, { add: [a] }), { code: 'BAD_REQUEST', msg: 'Insufficient permission' })
    expectError(t, await as(app, member).get('/user_groups/999999/subgroups'), { code: 'BAD_REQUEST', msg: 'Invalid user group' })
  })

  t.test('concurrent subgroup additions cannot form a cycle', async (t) => {
    const a = await create(member)
    const b = await create(member)
    const [one, two] = await Promise.all([
      as(app, member).post(`/user_groups/${a}/subgroups`, { add: [b] }),
      as(app, member).post(`/user_groups/${b}/subgroups`, { add: [a] }),
    ])
    t.same([one.statusCode, two.statusCode].sort(), [200, 400])
  })
})
