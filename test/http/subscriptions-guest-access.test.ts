// realm_user add/remove to restricted guests whose access to other users a
// subscription change alters (POST and DELETE /users/me/subscriptions), seen
// through real event queues. The guest of the fixture is in #general with the
// fixture's people; fresh users ("strangers") start with no channel at all.
import t from 'tap'
import type { Test } from 'tap'
import type { FastifyInstance } from 'fastify'
import type { User } from '../../src/db/index.js'
import { buildTestApp, type TestApp } from '../support/app.js'
import { as } from '../support/client.js'
import { MODERN_CAPABILITIES } from '../support/events.js'
import { expectSuccess, type Body } from '../support/expect.js'
import { eventsUntil, ofType, register, sentinel, sentinelArrived } from '../support/queues.js'

async function restrictGuests(services: TestApp['services'], realmId: number): Promise<void> {
  const members = await services.prisma.userGroup.findFirstOrThrow({ where: { realmId, name: 'role:members' } })
  await services.prisma.realm.update({ where: { id: realmId }, data: { canAccessAllUsersGroupId: members.id } })
}

/** A fresh user in no channel. */
async function stranger(fx: TestApp['fx'], services: TestApp['services'], fullName: string): Promise<User> {
  const user = await fx.newUser({ fullName })
  await services.prisma.subscription.deleteMany({ where: { userId: user.id } })
  return user
}

/**
 * The realm_user events each of `users` receives while `fn` runs; queues with
 * and without user_list_incomplete must receive the same.
 */
const sentinelValue = new Map<number, boolean>() // each sentinel must change the setting

async function realmUserEvents(t: Test, app: FastifyInstance, users: User[], fn: () => Promise<unknown>): Promise<Body[][]> {
  const types = { event_types: ['realm_user', 'user_settings'] }
  const queues = []
  for (const user of users) {
    queues.push([
      await register(t, app, user, MODERN_CAPABILITIES, types),
      await register(t, app, user, { ...MODERN_CAPABILITIES, user_list_incomplete: false }, types),
    ] as const)
  }
  await fn()
  const out: Body[][] = []
  for (const [i, user] of users.entries()) {
    const value = !(sentinelValue.get(user.id) ?? false)
    sentinelValue.set(user.id, value)
    await sentinel(t, app, user, value)
    const [incomplete, complete] = queues[i] as (typeof queues)[number]
    const events = ofType(await eventsUntil(t, app, incomplete, sentinelArrived), 'realm_user')
    t.same(ofType(await eventsUntil(t, app, complete, sentinelArrived), 'realm_user'), events, `the same with a complete user list (${user.fullName})`)
    out.push(events)
  }
  return out
}

const subscribe = async (t: Test, app: FastifyInstance, by: User, name: string, principals: User[]) =>
  expectSuccess(t, await as(app, by).post('/users/me/subscriptions', { subscriptions: [{ name }], principals: principals.map((u) => u.id) }))
const unsubscribe = async (t: Test, app: FastifyInstance, by: User, name: string, principals: User[]) =>
  expectSuccess(t, await as(app, by).delete('/users/me/subscriptions', { subscriptions: [name], principals: principals.map((u) => u.id) }))

const removed = (userId: number) => ({ type: 'realm_user', op: 'remove', person: { user_id: userId, full_name: 'Unknown user' } })

t.test('restricted guests and subscription changes', async (t) => {
  const { app, fx, services } = await buildTestApp(t)
  await restrictGuests(services, fx.realm.id)
  const { admin, guest, member, bot } = fx.users

  /** The person exactly as the guest's own user list shows it now. */
  const asGuestSees = async (user: User): Promise<Body> =>
    expectSuccess(t, await as(app, guest).get(`/users/${user.id}`, { client_extavatar: false, include_custom_profile_fields: true })).user as Body

  t.test('a guest subscribed to a channel gets each person there it could not access before', async (t) => {
    const phone = expectSuccess(t, await as(app, admin).post('/realm/profile_fields', { name: 'Phone', hint: '', field_type: 1 })).id as number
    const sam = await stranger(fx, services, 'Sam Stranger')
    const sue = await stranger(fx, services, 'Sue Stranger')
    expectSuccess(t, await as(app, sam).patch('/users/me/profile_data', { data: [{ id: phone, value: '555' }] }))
    await subscribe(t, app, admin, 'lounge', [sam, sue, admin, bot])

    const [events] = await realmUserEvents(t, app, [guest], () => subscribe(t, app, admin, 'lounge', [guest]))
    t.same(events, [
      {
        type: 'realm_user',
        op: 'add',
        person: {
          email: sam.email,
          user_id: sam.id,
          avatar_version: 1,
          is_admin: false,
          is_owner: false,
          is_guest: false,
          is_billing_admin: false,
          role: 400,
          is_bot: false,
          full_name: 'Sam Stranger',
          timezone: sam.timezone,
          is_active: true,
          date_joined: sam.dateJoined.toISOString().replace(/Z$/, '+00:00'),
          delivery_email: sam.deliveryEmail,
          avatar_url: (await asGuestSees(sam)).avatar_url,
          bot_type: null,
          profile_data: { [String(phone)]: { value: '555', rendered_value: '<p>555</p>' } },
        },
      },
      { type: 'realm_user', op: 'add', person: await asGuestSees(sue) },
    ], 'the two strangers, not the administrator (#general) nor the bot')
    t.same(events[0]?.person, await asGuestSees(sam), 'the person as GET /users/{id} now shows it')
  })

  t.test('a guest gets the person who joins one of its channels', async (t) => {
    const tom = await stranger(fx, services, 'Tom Stranger')
    const [events] = await realmUserEvents(t, app, [guest], () => subscribe(t, app, admin, 'lounge', [tom]))
    t.same(events, [{ type: 'realm_user', op: 'add', person: await asGuestSees(tom) }])
  })

  t.test('a guest taken out of the last channel it shares with people gets them removed', async (t) => {
    const ann = await stranger(fx, services, 'Ann Stranger')
    await subscribe(t, app, admin, 'porch', [ann, member, guest])
    const [events] = await realmUserEvents(t, app, [guest], () => unsubscribe(t, app, admin, 'porch', [guest]))
    t.same(events, [removed(ann.id)], 'not the member, who is in #general too')
    const ids = (expectSuccess(t, await as(app, guest).get('/users')).members as Body[]).map((m) => m.user_id)
    t.notOk(ids.includes(ann.id))
  })

  t.test('a guest gets the person who leaves the last channel they share removed', async (t) => {
    const bea = await stranger(fx, services, 'Bea Stranger')
    await subscribe(t, app, admin, 'deck', [bea, guest])
    const [events] = await realmUserEvents(t, app, [guest], () => unsubscribe(t, app, bea, 'deck', []))
    t.same(events, [removed(bea.id)])
  })

  t.test('no remove while the guest still shares another channel or a direct message with the person', async (t) => {
    const cal = await stranger(fx, services, 'Cal Stranger')
    const dee = await stranger(fx, services, 'Dee Stranger')
    await subscribe(t, app, admin, 'attic', [cal, dee, guest])
    await subscribe(t, app, admin, 'cellar', [cal, guest])
    expectSuccess(t, await as(app, dee).post('/messages', { type: 'private', to: [guest.id], content: 'hello' }))
    const [events] = await realmUserEvents(t, app, [guest], () => unsubscribe(t, app, admin, 'attic', [guest]))
    t.same(events, [])
  })

  t.test('no add for people the guest already accesses through a direct message', async (t) => {
    const eve = await stranger(fx, services, 'Eve Stranger')
    expectSuccess(t, await as(app, eve).post('/messages', { type: 'private', to: [guest.id], content: 'hi' }))
    const [events] = await realmUserEvents(t, app, [guest], () => subscribe(t, app, admin, 'garden', [eve, guest]))
    t.same(events, [])
  })

  t.test('other guests in the channel gain and lose a guest like anyone else', async (t) => {
    const other = await fx.newUser({ fullName: 'Gwen Guest', role: 600 })
    await services.prisma.subscription.deleteMany({ where: { userId: other.id } })
    const [added] = await realmUserEvents(t, app, [guest], () => subscribe(t, app, admin, 'lounge', [other]))
    t.same(added, [{ type: 'realm_user', op: 'add', person: await asGuestSees(other) }])
    const [gone] = await realmUserEvents(t, app, [guest], () => unsubscribe(t, app, admin, 'lounge', [other]))
    t.same(gone, [removed(other.id)])
  })

  t.test('people other than guests get no such events', async (t) => {
    const fay = await stranger(fx, services, 'Fay Stranger')
    const newcomer = await stranger(fx, services, 'Ned Newcomer')
    await subscribe(t, app, admin, 'studio', [fay])
    const [ofNewcomer, ofMember] = await realmUserEvents(t, app, [newcomer, member], async () => {
      await subscribe(t, app, admin, 'studio', [newcomer, member])
      await unsubscribe(t, app, admin, 'studio', [newcomer, member])
    })
    t.same(ofNewcomer, [])
    t.same(ofMember, [])
  })
})

t.test('guests of a realm that does not restrict them get no such events', async (t) => {
  const { app, fx, services } = await buildTestApp(t)
  const { admin, guest } = fx.users
  const gil = await stranger(fx, services, 'Gil Stranger')
  await subscribe(t, app, admin, 'lounge', [gil])
  const [events] = await realmUserEvents(t, app, [guest], async () => {
    await subscribe(t, app, admin, 'lounge', [guest])
    await unsubscribe(t, app, admin, 'lounge', [guest])
  })
  t.same(events, [])
})
