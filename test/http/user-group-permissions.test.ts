// The permission settings of user groups (upstream levels 283, 301, 305, 308,
// 324, and can_mention_group as a group-setting value): accepted at creation
// and by PATCH /user_groups/{id} with {new, old}, reported on group objects
// and in user_group events, and enforced on every change of a group.
import t from 'tap'
import { buildTestApp } from '../support/app.js'
import { as } from '../support/client.js'
import { expectError, expectSuccess } from '../support/expect.js'
import type { User } from '../../src/db/index.js'
import { SYSTEM_GROUPS } from '../../src/domain/system-groups.js'
import { busItemsDuring } from '../support/events.js'

let n = 0
const uniqueName = (base = 'perm') => `${base}-${n++}`
const SETTINGS = ['can_add_members_group', 'can_join_group', 'can_leave_group', 'can_manage_group', 'can_mention_group', 'can_remove_members_group']

t.test('user group permission settings', async (t) => {
  const { app, fx, services } = await buildTestApp(t)
  const { owner, admin, moderator, member, otherMember, guest } = fx.users
  const system = async (name: string) => (await services.prisma.userGroup.findUniqueOrThrow({ where: { realmId_name: { realmId: fx.realm.id, name } } })).id
  const [nobody, everyone, members, moderators, admins, owners, internet] = await Promise.all(
    [SYSTEM_GROUPS.nobody, SYSTEM_GROUPS.everyone, SYSTEM_GROUPS.members, SYSTEM_GROUPS.moderators, SYSTEM_GROUPS.administrators, SYSTEM_GROUPS.owners, SYSTEM_GROUPS.internet].map(system),
  )
  const only = (...users: User[]) => ({ direct_members: users.map((u) => u.id).sort((a, b) => a - b), direct_subgroups: [] })
  const create = async (by: User, params: Record<string, unknown> = {}) =>
    expectSuccess(t, await as(app, by).post('/user_groups/create', { name: uniqueName(), description: '', members: [by.id], ...params })).group_id as number
  const groupOf = async (id: number) =>
    (expectSuccess(t, await as(app, member).get('/user_groups', { include_deactivated_groups: true })).user_groups as Record<string, unknown>[]).find((g) => g.id === id)
  const membersOf = async (id: number) => expectSuccess(t, await as(app, member).get(`/user_groups/${id}/members`, { direct_member_only: true })).members as number[]

  t.test('register and server_supported_permission_settings report the group settings', async (t) => {
    const id = await create(member)
    const reg = expectSuccess(t, await as(app, otherMember).post('/register', { fetch_event_types: ['realm_user_groups', 'realm'] }))
    t.match((reg.realm_user_groups as Record<string, unknown>[]).find((g) => g.id === id), {
      can_add_members_group: only(member), can_join_group: nobody, can_leave_group: everyone, can_manage_group: only(member), can_mention_group: everyone, can_remove_members_group: nobody,
    })
    const group = (reg.server_supported_permission_settings as { group: Record<string, unknown> }).group
    t.same(Object.keys(group).sort(), SETTINGS)
    const entry = (defaultGroupName: string, allowEveryone: boolean) => ({
      require_system_group: false, allow_internet_group: false, allow_nobody_group: true, allow_everyone_group: allowEveryone,
      default_group_name: defaultGroupName, default_for_system_groups: 'role:nobody', allowed_system_groups: [],
    })
    t.same(group.can_manage_group, entry('group_creator', false))
    t.same(group.can_add_members_group, entry('group_creator', false))
    t.same(group.can_join_group, entry('role:nobody', false))
    t.same(group.can_leave_group, entry('role:everyone', true))
    t.same(group.can_mention_group, entry('role:everyone', true))
    t.same(group.can_remove_members_group, entry('role:nobody', false))
  })

  t.test('creation takes every setting as a group ID or an anonymous group; the add event carries them', async (t) => {
    const params = {
      can_add_members_group: moderators,
      can_join_group: { direct_members: [otherMember.id, member.id], direct_subgroups: [admins] },
      can_leave_group: nobody,
      can_manage_group: { direct_members: [], direct_subgroups: [admins] },
      can_mention_group: { direct_members: [otherMember.id], direct_subgroups: [] },
      can_remove_members_group: members,
    }
    const { result, items } = await busItemsDuring(services, () => as(app, member).post('/user_groups/create', { name: uniqueName(), description: '', members: [], ...params }), 'user_group')
    const id = expectSuccess(t, result).group_id as number
    const expected = {
      can_add_members_group: moderators,
      can_join_group: { direct_members: [member.id, otherMember.id].sort((a, b) => a - b), direct_subgroups: [admins] },
      can_leave_group: nobody,
      can_manage_group: admins,
      can_mention_group: only(otherMember),
      can_remove_members_group: members,
    }
    t.match(await groupOf(id), expected)
    t.match(items.map((i) => i.event), [{ type: 'user_group', op: 'add', group: { id, ...expected } }])
  })

  t.test('bad setting values are refused with upstream errors, and nothing is created', async (t) => {
    const post = (params: Record<string, unknown>) => as(app, member).post('/user_groups/create', { name: uniqueName('refused'), description: '', members: [], ...params })
    const dead = await create(member)
    expectSuccess(t, await as(app, member).post(`/user_groups/${dead}/deactivate`))
    const refusals: [Record<string, unknown>, string][] = [
      [{ can_manage_group: everyone }, "'can_manage_group' setting cannot be set to 'role:everyone' group."],
      [{ can_join_group: everyone }, "'can_join_group' setting cannot be set to 'role:everyone' group."],
      [{ can_add_members_group: internet }, "'can_add_members_group' setting cannot be set to 'role:internet' group."],
      [{ can_remove_members_group: everyone }, "'can_remove_members_group' setting cannot be set to 'role:everyone' group."],
      [{ can_leave_group: internet }, "'can_leave_group' setting cannot be set to 'role:internet' group."],
      [{ can_leave_group: 999_999 }, 'Invalid user group'],
      [{ can_mention_group: dead }, 'User group is deactivated.'],
      [{ can_join_group: { direct_members: [999_999], direct_subgroups: [] } }, 'Invalid user ID: 999999'],
      [{ can_join_group: { direct_members: [], direct_subgroups: [999_998, owners] } }, 'Invalid user group ID: 999998'],
      [{ can_manage_group: { direct_members: [member.id], direct_subgroups: [dead] } }, 'User group is deactivated.'],
    ]
    for (const [params, msg] of refusals) expectError(t, await post(params), { code: 'BAD_REQUEST', msg })
    expectError(t, await post({ can_join_group: { direct_members: [] } }), { code: 'BAD_REQUEST', msg: /can_join_group/ })
    expectError(t, await post({ can_join_group: 'everyone' }), { code: 'BAD_REQUEST', msg: /can_join_group/ })
    const groups = expectSuccess(t, await as(app, member).get('/user_groups')).user_groups as { name: string }[]
    t.notOk(groups.some((g) => g.name.startsWith('refused')))
  })

  t.test('PATCH changes settings with {new, old}: one update event each, stale old refused, unchanged values silent', async (t) => {
    const id = await create(member)
    const changed = await busItemsDuring(services, () =>
      as(app, member).patch(`/user_groups/${id}`, { can_join_group: { new: members, old: nobody }, can_leave_group: { new: { direct_members: [otherMember.id], direct_subgroups: [moderators] } } }),
    'user_group')
    expectSuccess(t, changed.result)
    t.same(changed.items.map((i) => i.event), [
      { type: 'user_group', op: 'update', group_id: id, data: { can_join_group: members } },
      { type: 'user_group', op: 'update', group_id: id, data: { can_leave_group: { direct_members: [otherMember.id], direct_subgroups: [moderators] } } },
    ])
    const stale = await busItemsDuring(services, () => as(app, member).patch(`/user_groups/${id}`, { description: 'x', can_join_group: { new: moderators, old: nobody } }), 'user_group')
    expectError(t, stale.result, { code: 'EXPECTATION_MISMATCH', msg: "'old' value does not match the expected value." })
    t.equal(stale.items.length, 0)
    t.match(await groupOf(id), { description: '', can_join_group: members })
    // An anonymous old value compares as a set; the same value again changes nothing.
    const same = await busItemsDuring(services, () =>
      as(app, member).patch(`/user_groups/${id}`, { can_leave_group: { new: { direct_members: [otherMember.id], direct_subgroups: [moderators] }, old: { direct_subgroups: [moderators], direct_members: [otherMember.id, otherMember.id] } } }),
    'user_group')
    expectSuccess(t, same.result)
    t.equal(same.items.length, 0)
    // Replacing the creator's anonymous group by a named one drops it.
    const anonymous = await services.prisma.userGroup.count({ where: { realmId: fx.realm.id, isAnonymous: true } })
    expectSuccess(t, await as(app, member).patch(`/user_groups/${id}`, { can_add_members_group: { new: members, old: only(member) } }))
    t.equal(await services.prisma.userGroup.count({ where: { realmId: fx.realm.id, isAnonymous: true } }), anonymous - 1)
    expectError(t, await as(app, member).patch(`/user_groups/${id}`, { can_manage_group: { new: everyone } }), {
      code: 'BAD_REQUEST', msg: "'can_manage_group' setting cannot be set to 'role:everyone' group.",
    })
    expectError(t, await as(app, member).patch(`/user_groups/${id}`, { can_manage_group: { old: nobody } }), { code: 'BAD_REQUEST', msg: /can_manage_group/ })
  })

  t.test('who may manage a group: can_manage_group or the realm can_manage_all_groups; never a system group', async (t) => {
    const id = await create(member, { can_manage_group: { direct_members: [otherMember.id], direct_subgroups: [] } })
    expectError(t, await as(app, member).patch(`/user_groups/${id}`, { description: 'creator' }), { code: 'BAD_REQUEST', msg: 'Insufficient permission' })
    expectSuccess(t, await as(app, otherMember).patch(`/user_groups/${id}`, { description: 'manager' }))
    expectError(t, await as(app, admin).patch(`/user_groups/${id}`, { description: 'admin' }), { code: 'BAD_REQUEST', msg: 'Insufficient permission' })
    expectSuccess(t, await as(app, owner).patch('/realm', { can_manage_all_groups: { new: admins } }))
    expectSuccess(t, await as(app, admin).patch(`/user_groups/${id}`, { description: 'admin' }))
    expectSuccess(t, await as(app, owner).patch('/realm', { can_manage_all_groups: { new: owners } }))
    expectError(t, await as(app, guest).patch(`/user_groups/${id}`, { description: 'guest' }), { code: 'BAD_REQUEST', msg: 'Not allowed for guest users' })
    expectError(t, await as(app, owner).patch(`/user_groups/${moderators}`, { can_join_group: { new: members } }), { code: 'BAD_REQUEST', msg: 'Insufficient permission' })
    expectError(t, await as(app, otherMember).patch('/user_groups/999999', { description: 'x' }), { code: 'BAD_REQUEST', msg: 'Invalid user group' })
    // A manager may deactivate the group and still edit it.
    expectError(t, await as(app, member).post(`/user_groups/${id}/deactivate`), { code: 'BAD_REQUEST', msg: 'Insufficient permission' })
    expectSuccess(t, await as(app, otherMember).post(`/user_groups/${id}/deactivate`))
    expectSuccess(t, await as(app, otherMember).patch(`/user_groups/${id}`, { can_leave_group: { new: nobody } }))
    t.match(await groupOf(id), { deactivated: true, can_leave_group: nobody, description: 'admin' })
  })

  t.test('adding members: can_add_members_group, or can_join_group for oneself', async (t) => {
    const id = await create(owner, { members: [], can_add_members_group: moderators, can_manage_group: owners })
    const add = (by: User, ids: number[]) => as(app, by).post(`/user_groups/${id}/members`, { add: ids })
    expectError(t, await add(member, [member.id]), { code: 'BAD_REQUEST', msg: 'Insufficient permission' })
    expectSuccess(t, await add(moderator, [otherMember.id]))
    expectSuccess(t, await as(app, owner).patch(`/user_groups/${id}`, { can_join_group: { new: members } }))
    expectSuccess(t, await add(member, [member.id]))
    const extra = await fx.newUser()
    expectError(t, await add(extra, [extra.id, moderator.id]), { code: 'BAD_REQUEST', msg: 'Insufficient permission' })
    expectError(t, await add(member, [extra.id]), { code: 'BAD_REQUEST', msg: 'Insufficient permission' })
    expectError(t, await add(guest, [guest.id]), { code: 'BAD_REQUEST', msg: 'Not allowed for guest users' })
    t.same(await membersOf(id), [member.id, otherMember.id].sort((a, b) => a - b))
    // Subgroups need can_add_members_group too; joining does not grant them.
    const sub = await create(member)
    expectError(t, await as(app, member).post(`/user_groups/${id}/subgroups`, { add: [sub] }), { code: 'BAD_REQUEST', msg: 'Insufficient permission' })
    expectError(t, await as(app, member).post(`/user_groups/${id}/members`, { add_subgroups: [sub] }), { code: 'BAD_REQUEST', msg: 'Insufficient permission' })
    expectSuccess(t, await as(app, moderator).post(`/user_groups/${id}/subgroups`, { add: [sub] }))
    // Removing subgroups is managing the group.
    expectError(t, await as(app, moderator).post(`/user_groups/${id}/subgroups`, { delete: [sub] }), { code: 'BAD_REQUEST', msg: 'Insufficient permission' })
    expectSuccess(t, await as(app, owner).post(`/user_groups/${id}/members`, { delete_subgroups: [sub] }))
  })

  t.test('removing members: can_remove_members_group, or can_leave_group for oneself', async (t) => {
    const a = await fx.newUser()
    const b = await fx.newUser()
    const id = await create(owner, { members: [a.id, b.id, member.id], can_manage_group: owners, can_leave_group: { direct_members: [a.id], direct_subgroups: [] } })
    const remove = (by: User, ids: number[]) => as(app, by).post(`/user_groups/${id}/members`, { delete: ids })
    expectError(t, await remove(b, [b.id]), { code: 'BAD_REQUEST', msg: 'Insufficient permission' })
    expectError(t, await remove(a, [b.id]), { code: 'BAD_REQUEST', msg: 'Insufficient permission' })
    const left = await busItemsDuring(services, () => remove(a, [a.id]), 'user_group')
    expectSuccess(t, left.result)
    t.same(left.items.map((i) => i.event), [{ type: 'user_group', op: 'remove_members', group_id: id, user_ids: [a.id] }])
    expectSuccess(t, await as(app, owner).patch(`/user_groups/${id}`, { can_remove_members_group: { new: { direct_members: [member.id], direct_subgroups: [] } } }))
    expectSuccess(t, await remove(member, [b.id]))
    expectSuccess(t, await remove(member, [member.id])) // can_remove_members_group covers oneself
    t.same(await membersOf(id), [])
    // A failing part undoes the others: a permitted addition with a refused removal.
    expectSuccess(t, await as(app, owner).post(`/user_groups/${id}/members`, { add: [b.id] }))
    expectSuccess(t, await as(app, owner).patch(`/user_groups/${id}`, { can_add_members_group: { new: only(otherMember) } }))
    const undone = await busItemsDuring(services, () => as(app, otherMember).post(`/user_groups/${id}/members`, { add: [a.id], delete: [b.id] }), 'user_group')
    expectError(t, undone.result, { code: 'BAD_REQUEST', msg: 'Insufficient permission' })
    t.equal(undone.items.length, 0)
    t.same(await membersOf(id), [b.id])
  })

  t.test('invitations may name only groups the inviter may add members to (level 322 with 305)', async (t) => {
    const id = await create(owner, { members: [], can_manage_group: owners, can_add_members_group: only(member) })
    const invite = (by: User) => as(app, by).post('/invites', { invitee_emails: `${uniqueName('invitee')}@example.com`, stream_ids: [], group_ids: [id] })
    expectError(t, await invite(otherMember), { code: 'BAD_REQUEST', msg: 'Insufficient permission' })
    expectSuccess(t, await invite(member))
  })

  t.test('mentioning a group needs its can_mention_group, when sending and editing; silent mentions do not', async (t) => {
    const name = uniqueName('mentioned')
    const id = await create(owner, { name, can_mention_group: { direct_members: [otherMember.id], direct_subgroups: [admins] } })
    const send = (by: User, content: string) => as(app, by).post('/messages', { type: 'stream', to: fx.streams.general.name, topic: 'mentions', content })
    const refused = { code: 'BAD_REQUEST', msg: `You are not allowed to mention user group '${name}'.` }
    expectError(t, await send(member, `hello @*${name}*`), refused)
    expectError(t, await as(app, member).post('/messages', { type: 'direct', to: [otherMember.id], content: `hello @*${name}*` }), refused)
    expectSuccess(t, await send(member, `hello @_*${name}*`))
    expectSuccess(t, await send(otherMember, `hello @*${name}*`))
    expectSuccess(t, await send(admin, `hello @*${name}*`))
    const sent = expectSuccess(t, await send(member, 'plain')).id as number
    expectError(t, await as(app, member).patch(`/messages/${sent}`, { content: `now @*${name}*` }), refused)
    expectSuccess(t, await as(app, owner).patch(`/user_groups/${id}`, { can_mention_group: { new: everyone } }))
    expectSuccess(t, await as(app, member).patch(`/messages/${sent}`, { content: `now @*${name}*` }))
  })

  t.test('a group whose setting names another group keeps that group from deactivation (level 298)', async (t) => {
    const used = await create(member)
    const user = await create(member, { can_join_group: { direct_members: [], direct_subgroups: [used, moderators] }, can_remove_members_group: used })
    const res = await as(app, member).post(`/user_groups/${used}/deactivate`)
    expectError(t, res, { code: 'CANNOT_DEACTIVATE_GROUP_IN_USE' })
    t.same(res.json().objections, [{ type: 'user_group', group_id: user, settings: ['can_join_group', 'can_remove_members_group'] }])
  })
})
