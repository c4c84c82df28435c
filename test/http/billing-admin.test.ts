// The spec's is_billing_admin, derived since upstream level 363 from the
// organization's can_manage_billing_group (src/queries/billing-admins.ts): in
// every user object (register, GET /users, /users/{id}, /users/{email},
// /users/me), and kept true in clients by realm_user update events when a
// change flips it — a new value of the setting, a role change, membership and
// subgroup changes, deactivation and reactivation — to those who can access
// the user (a restricted guest hears nothing of others), each under the state
// check (a client applying the events ends where a fresh register does).
import t from 'tap'
import type { User } from '../../src/db/index.js'
import { ROLE } from '../../src/domain/roles.js'
import { buildTestApp } from '../support/app.js'
import { as } from '../support/client.js'
import { captureEvents } from '../support/events.js'
import { eventually } from '../support/eventually.js'
import { expectSuccess, type Body } from '../support/expect.js'
import { checkStateAfter } from '../support/state-check.js'
import { withTimeout } from '../events/queue-store.contract.js'

t.test('is_billing_admin follows can_manage_billing_group', async (t) => {
  const { app, fx, services } = await buildTestApp(t)
  const { prisma } = services
  const { owner, admin, moderator, member, otherMember, guest } = fx.users
  const system = async (name: string) => (await prisma.userGroup.findFirstOrThrow({ where: { realmId: fx.realm.id, name, isSystemGroup: true } })).id
  const setting = (value: unknown) => as(app, owner).patch('/realm', { can_manage_billing_group: { new: value } })
  const billingAdmins = async (viewer: User): Promise<number[]> => {
    const { members } = expectSuccess(t, await as(app, viewer).get('/users')) as Body & { members: { user_id: number; is_billing_admin: boolean }[] }
    return members.filter((u) => u.is_billing_admin).map((u) => u.user_id)
  }
  const me = async (user: User): Promise<boolean> => expectSuccess(t, await as(app, user).get('/users/me')).is_billing_admin as boolean
  const makeGroup = async (name: string, members: number[]): Promise<number> => {
    expectSuccess(t, await as(app, owner).post('/user_groups/create', { name, description: name, members }))
    return (await prisma.userGroup.findFirstOrThrow({ where: { realmId: fx.realm.id, name } })).id
  }

  t.test('by default the administrators, owners included, in every user object', async (t) => {
    t.same(await billingAdmins(member), [owner.id, admin.id].sort((a, b) => a - b))
    t.equal(expectSuccess(t, await as(app, member).get(`/users/${admin.id}`)).user.is_billing_admin, true)
    t.equal(expectSuccess(t, await as(app, member).get(`/users/${moderator.id}`)).user.is_billing_admin, false)
    t.equal(expectSuccess(t, await as(app, member).get(`/users/${encodeURIComponent(owner.email)}`)).user.is_billing_admin, true)
    t.same([await me(owner), await me(admin), await me(moderator), await me(member), await me(guest)], [true, true, false, false, false])
    const reg = expectSuccess(t, await as(app, admin).post('/register', { fetch_event_types: ['realm_user'] }))
    t.equal(reg.is_billing_admin, true)
    t.same((reg.realm_users as { user_id: number; is_billing_admin: boolean }[]).filter((u) => u.is_billing_admin).map((u) => u.user_id), [owner.id, admin.id].sort((a, b) => a - b))
    t.equal(expectSuccess(t, await as(app, member).post('/register', { fetch_event_types: ['realm_user'] })).is_billing_admin, false)
  })

  t.test('a new value of the setting: events to everyone for each user it flips, GET /users/me on the next read', async (t) => {
    // member's cached GET /users/me must learn of it through the database's notification.
    await me(member)
    await withTimeout(services.userDataCache.whenListening(), 10_000, 'the invalidation listener')
    await me(member)
    const owners = await system('role:owners')
    const events = await captureEvents(app, otherMember, async () => expectSuccess(t, await setting({ direct_members: [member.id], direct_subgroups: [owners] })))
    t.same(events.filter((e) => e.type === 'realm_user').map(({ id: _id, ...e }) => e), [
      { type: 'realm_user', op: 'update', person: { user_id: admin.id, is_billing_admin: false } },
      { type: 'realm_user', op: 'update', person: { user_id: member.id, is_billing_admin: true } },
    ])
    t.same(await billingAdmins(otherMember), [owner.id, member.id].sort((a, b) => a - b))
    t.equal(await eventually('member is a billing admin on GET /users/me', () => me(member)), true)
    t.equal(await me(admin), false)
    // Unchanged membership (the same set): no realm_user event.
    const again = await captureEvents(app, otherMember, async () => expectSuccess(t, await setting({ direct_members: [member.id], direct_subgroups: [owners] })), { expectNone: true })
    t.same(again, [])
    // Back to the default, seen by the users whose value flips and by a bystander.
    const administrators = await system('role:administrators')
    await checkStateAfter(t, app, member, () => setting(administrators), { expectTypes: ['realm/update_dict', 'realm_user/update'] })
    await checkStateAfter(t, app, admin, () => setting({ direct_members: [member.id], direct_subgroups: [owners] }), { expectTypes: ['realm/update_dict', 'realm_user/update'] })
    await checkStateAfter(t, app, otherMember, () => setting(owners), { expectTypes: ['realm/update_dict', 'realm_user/update'] })
    expectSuccess(t, await setting(await system('role:administrators')))
  })

  t.test('a role change, when the setting names a role group', async (t) => {
    const moderators = await system('role:moderators')
    expectSuccess(t, await setting(moderators))
    t.same(await billingAdmins(member), [owner.id, admin.id, moderator.id].sort((a, b) => a - b))
    const person = await fx.newUser({ fullName: 'Promoted Person' })
    await checkStateAfter(t, app, otherMember, () => as(app, admin).patch(`/users/${person.id}`, { role: ROLE.MODERATOR }), {
      expectTypes: ['realm_user/update', 'user_group/add_members', 'user_group/remove_members'],
    })
    t.equal(await me(person), true)
    const events = await captureEvents(app, person, () => as(app, admin).patch(`/users/${person.id}`, { role: ROLE.MEMBER }))
    t.same(events.filter((e) => e.type === 'realm_user').map(({ id: _id, ...e }) => e), [
      { type: 'realm_user', op: 'update', person: { user_id: person.id, role: ROLE.MEMBER } },
      { type: 'realm_user', op: 'update', person: { user_id: person.id, is_billing_admin: false } },
    ])
    await checkStateAfter(t, app, person, () => as(app, admin).patch(`/users/${person.id}`, { role: ROLE.MODERATOR }), {
      expectTypes: ['realm_user/update', 'user_group/add_members', 'user_group/remove_members'],
    })
    // A change between two groups that both hold the setting flips nothing.
    const quiet = await captureEvents(app, otherMember, () => as(app, owner).patch(`/users/${person.id}`, { role: ROLE.ADMIN }))
    t.same(quiet.filter((e) => e.type === 'realm_user').map((e) => Object.keys(e.person as object).sort()), [['role', 'user_id']])
    expectSuccess(t, await setting(await system('role:administrators')))
  })

  t.test('members and subgroups of the groups the setting reaches', async (t) => {
    const finance = await makeGroup('finance', [])
    const auditors = await makeGroup('auditors', [])
    expectSuccess(t, await setting({ direct_members: [], direct_subgroups: [finance] }))
    t.same(await billingAdmins(member), [])
    await checkStateAfter(t, app, member, () => as(app, owner).post(`/user_groups/${finance}/members`, { add: [member.id] }), {
      expectTypes: ['user_group/add_members', 'realm_user/update'],
    })
    t.equal(await me(member), true)
    await checkStateAfter(t, app, otherMember, () => as(app, owner).post(`/user_groups/${auditors}/members`, { add: [otherMember.id] }), { expectTypes: ['user_group/add_members'] })
    t.equal(await me(otherMember), false, 'auditors is not reached yet')
    // otherMember joins through a subgroup, on both endpoints that change subgroups.
    await checkStateAfter(t, app, otherMember, () => as(app, owner).post(`/user_groups/${finance}/subgroups`, { add: [auditors] }), {
      expectTypes: ['user_group/add_subgroups', 'realm_user/update'],
    })
    t.same(await billingAdmins(admin), [member.id, otherMember.id].sort((a, b) => a - b))
    await checkStateAfter(t, app, otherMember, () => as(app, owner).post(`/user_groups/${finance}/members`, { delete_subgroups: [auditors] }), {
      expectTypes: ['user_group/remove_subgroups', 'realm_user/update'],
    })
    await checkStateAfter(t, app, admin, () => as(app, owner).post(`/user_groups/${finance}/members`, { delete: [member.id] }), {
      expectTypes: ['user_group/remove_members', 'realm_user/update'],
    })
    t.same(await billingAdmins(admin), [])
    expectSuccess(t, await setting(await system('role:administrators')))
  })

  t.test('deactivation and reactivation', async (t) => {
    const person = await fx.newUser({ role: ROLE.ADMIN, fullName: 'Leaving Admin' })
    t.ok((await billingAdmins(member)).includes(person.id))
    const events = await captureEvents(app, member, () => as(app, owner).delete(`/users/${person.id}`))
    t.same(events.filter((e) => e.type === 'realm_user').map(({ id: _id, ...e }) => e), [
      { type: 'realm_user', op: 'update', person: { user_id: person.id, is_active: false } },
      { type: 'realm_user', op: 'update', person: { user_id: person.id, is_billing_admin: false } },
    ])
    t.equal(expectSuccess(t, await as(app, member).get(`/users/${person.id}`)).user.is_billing_admin, false, 'a deactivated user is in no group')
    await checkStateAfter(t, app, member, () => as(app, owner).post(`/users/${person.id}/reactivate`), { expectTypes: ['realm_user/update', 'user_group/add_members'] })
    t.equal(expectSuccess(t, await as(app, member).get(`/users/${person.id}`)).user.is_billing_admin, true)
    await checkStateAfter(t, app, member, () => as(app, owner).delete(`/users/${person.id}`), { expectTypes: ['realm_user/update'] })
  })

  // Last: it restricts what guests may see for the rest of the file.
  t.test('a guest restricted to the users it can access hears only of those', async (t) => {
    const administrators = await system('role:administrators')
    await prisma.realm.update({ where: { id: fx.realm.id }, data: { canAccessAllUsersGroupId: await system('role:members') } })
    const stranger = await fx.newUser({ fullName: 'Billing Stranger' })
    await prisma.subscription.deleteMany({ where: { userId: stranger.id } })
    const flip = () => setting({ direct_members: [stranger.id], direct_subgroups: [administrators] })
    const heard = await captureEvents(app, member, async () => expectSuccess(t, await flip()))
    t.same(heard.filter((e) => e.type === 'realm_user').map((e) => e.person), [{ user_id: stranger.id, is_billing_admin: true }])
    const events = await checkStateAfter(t, app, guest, () => setting(administrators), { expectTypes: ['realm/update_dict'] })
    t.same(events.filter((e) => e.type === 'realm_user'), [], 'the guest cannot access the stranger')
  })
})
