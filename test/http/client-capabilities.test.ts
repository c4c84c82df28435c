// client_capabilities of POST /register, seen through real queues: each test
// registers queues with and without a capability, causes the event, fetches
// it with GET /events and compares the exact payloads. The transforms live in
// events/queues/filter.ts, shared by the in-process and the Redis store.
import t from 'tap'
import { NOTIFICATION_DEFAULTS_FIELD } from '../../src/events/queues/filter.js'
import { buildTestApp } from '../support/app.js'
import { as } from '../support/client.js'
import { busItemsDuring, MODERN_CAPABILITIES } from '../support/events.js'
import { expectSuccess, type Body } from '../support/expect.js'
import { eventsUntil, hasType, ofType, register, sentinel, sentinelArrived } from '../support/queues.js'

const LEGACY = { ...MODERN_CAPABILITIES, notification_settings_null: false }

t.test('client_capabilities.notification_settings_null', async (t) => {
  const { app, fx, services } = await buildTestApp(t)
  const user = fx.users.otherMember // subscribed to #general only
  const { general, design } = fx.streams
  expectSuccess(
    t,
    await as(app, user).patch('/settings', {
      enable_stream_desktop_notifications: true,
      enable_stream_audible_notifications: false,
      enable_stream_push_notifications: true,
      enable_stream_email_notifications: false,
    }),
  )
  const resolved = { desktop_notifications: true, audible_notifications: false, push_notifications: true, email_notifications: false }

  t.test('subscription add: null settings stay null with it, and are the user\'s global defaults without it', async (t) => {
    const modern = await register(t, app, user, MODERN_CAPABILITIES, { event_types: ['subscription'] })
    const legacy = await register(t, app, user, LEGACY, { event_types: ['subscription'] })
    expectSuccess(t, await as(app, user).post('/users/me/subscriptions', { subscriptions: [{ name: 'design' }] }))
    const [added] = ofType(await eventsUntil(t, app, modern, hasType('subscription')), 'subscription')
    const [addedLegacy] = ofType(await eventsUntil(t, app, legacy, hasType('subscription')), 'subscription')
    t.match(added, { type: 'subscription', op: 'add', subscriptions: [{ stream_id: design.id, name: 'design' }] })
    t.match(added?.subscriptions[0], { desktop_notifications: null, audible_notifications: null, push_notifications: null, email_notifications: null, wildcard_mentions_notify: null })
    t.same(addedLegacy, { ...added, subscriptions: [{ ...added?.subscriptions[0], ...resolved }] }, 'only the four inheriting settings differ')
    t.equal(addedLegacy?.subscriptions[0].wildcard_mentions_notify, null, 'wildcard_mentions_notify stays null, as upstream')
  })

  t.test('a subscription\'s own values are sent unchanged to both', async (t) => {
    const data = [{ stream_id: design.id, property: 'audible_notifications', value: true }]
    expectSuccess(t, await as(app, user).post('/users/me/subscriptions/properties', { subscription_data: data }))
    expectSuccess(t, await as(app, user).delete('/users/me/subscriptions', { subscriptions: ['design'] }))
    const modern = await register(t, app, user, MODERN_CAPABILITIES, { event_types: ['subscription'] })
    const legacy = await register(t, app, user, LEGACY, { event_types: ['subscription'] })
    expectSuccess(t, await as(app, user).post('/users/me/subscriptions', { subscriptions: [{ name: 'design' }] }))
    const [added] = ofType(await eventsUntil(t, app, modern, hasType('subscription')), 'subscription')
    const [addedLegacy] = ofType(await eventsUntil(t, app, legacy, hasType('subscription')), 'subscription')
    t.match(added?.subscriptions[0], { audible_notifications: true, desktop_notifications: null })
    t.same(addedLegacy, { ...added, subscriptions: [{ ...added?.subscriptions[0], ...resolved, audible_notifications: true }] })
  })

  t.test('register data resolves the same four settings', async (t) => {
    const modern = await register(t, app, user, MODERN_CAPABILITIES, { fetch_event_types: ['subscription'] })
    const legacy = await register(t, app, user, LEGACY, { fetch_event_types: ['subscription'] })
    const pick = (state: Body) => (state.subscriptions as Body[]).find((s) => s.stream_id === general.id)
    t.match(pick(modern.state), { desktop_notifications: null, audible_notifications: null, push_notifications: null, email_notifications: null, wildcard_mentions_notify: null })
    t.same(pick(legacy.state), { ...pick(modern.state), ...resolved })
  })

  t.test('changing a global default updates the inheriting subscriptions of queues without it', async (t) => {
    const data = [{ stream_id: design.id, property: 'email_notifications', value: false }]
    expectSuccess(t, await as(app, user).post('/users/me/subscriptions/properties', { subscription_data: data }))
    const types = { event_types: ['subscription', 'user_settings'], fetch_event_types: ['subscription'] }
    const modern = await register(t, app, user, MODERN_CAPABILITIES, types)
    const legacy = await register(t, app, user, LEGACY, types)
    expectSuccess(t, await as(app, user).patch('/settings', { enable_stream_email_notifications: true }))
    await sentinel(t, app, user, true)
    const change = { type: 'user_settings', op: 'update', property: 'enable_stream_email_notifications', value: true }
    const mark = { type: 'user_settings', op: 'update', property: 'left_side_userlist', value: true }
    t.same(await eventsUntil(t, app, modern, sentinelArrived), [change, mark])
    const legacyEvents = await eventsUntil(t, app, legacy, sentinelArrived)
    t.same(
      legacyEvents,
      [change, { type: 'subscription', op: 'update', stream_id: general.id, property: 'email_notifications', value: true }, mark],
      '#design has its own value and is left alone',
    )

    // The legacy client's state, brought forward by its events, is what it would register now.
    const before = structuredClone(legacy.state.subscriptions) as Body[]
    for (const e of ofType(legacyEvents, 'subscription')) {
      const sub = before.find((s) => s.stream_id === e.stream_id)
      if (sub) sub[e.property as string] = e.value
    }
    const after = await register(t, app, user, LEGACY, { fetch_event_types: ['subscription'] })
    t.same(before, after.state.subscriptions)
  })

  t.test('a new user\'s subscription add carries the defaults the queues resolve nulls with', async (t) => {
    const { items } = await busItemsDuring(
      services,
      () => as(app, fx.users.admin).post('/users', { email: `new-defaults@${fx.realm.stringId}.example.com`, password: 'a-long-password', full_name: 'New Defaults' }),
      'subscription',
    )
    const add = items.find((i) => i.event.op === 'add')
    t.same(add?.event[NOTIFICATION_DEFAULTS_FIELD], { desktop_notifications: false, audible_notifications: false, push_notifications: false, email_notifications: false })
  })
})

t.test('client_capabilities.user_list_incomplete', async (t) => {
  const { app, fx, services } = await buildTestApp(t)
  const { guest, admin, member } = fx.users
  const members = await services.prisma.userGroup.findFirstOrThrow({ where: { realmId: fx.realm.id, name: 'role:members' } })
  await services.prisma.realm.update({ where: { id: fx.realm.id }, data: { canAccessAllUsersGroupId: members.id } })
  const emailDomain = `${fx.realm.stringId}.localhost.invalid` // EXTERNAL_URL is http://localhost:9991 in tests
  const unknownUser = (id: number) => ({
    email: `user${id}@${emailDomain}`,
    user_id: id,
    avatar_version: 1,
    is_admin: false,
    is_owner: false,
    is_guest: false,
    is_billing_admin: false,
    role: 400,
    is_bot: false,
    full_name: 'Unknown user',
    timezone: '',
    is_active: true,
    date_joined: '1970-01-01T00:00:00+00:00',
    delivery_email: null,
    avatar_url: '/static/images/unknown-user-avatar.png',
    bot_type: null,
    profile_data: {},
  })
  const createUser = async (local: string, fullName: string): Promise<number> =>
    expectSuccess(t, await as(app, admin).post('/users', { email: `${local}@${fx.realm.stringId}.example.com`, password: 'a-long-password', full_name: fullName })).user_id as number
  const queues = async () => ({
    incomplete: await register(t, app, guest, MODERN_CAPABILITIES, { event_types: ['realm_user', 'user_settings'] }),
    complete: await register(t, app, guest, { ...MODERN_CAPABILITIES, user_list_incomplete: false }, { event_types: ['realm_user', 'user_settings'] }),
  })

  t.test('a guest sharing a channel with a new user gets the real user either way', async (t) => {
    const { incomplete, complete } = await queues()
    const id = await createUser('joins-general', 'Joins General') // #general is a default channel, and the guest is in it
    await sentinel(t, app, guest, true)
    for (const q of [incomplete, complete]) {
      const adds = ofType(await eventsUntil(t, app, q, sentinelArrived), 'realm_user')
      t.match(adds, [{ op: 'add', person: { user_id: id, full_name: 'Joins General', role: 400 } }])
      t.equal(adds.length, 1)
    }
  })

  t.test('a new user the guest cannot access: "Unknown user" without it, nothing with it', async (t) => {
    await services.prisma.subscription.updateMany({ where: { userId: guest.id }, data: { active: false } })
    t.teardown(() => services.prisma.subscription.updateMany({ where: { userId: guest.id }, data: { active: true } }))
    const { incomplete, complete } = await queues()
    const memberQueue = await register(t, app, member, MODERN_CAPABILITIES, { event_types: ['realm_user'] })
    const id = await createUser('stranger', 'Sam Stranger')
    await sentinel(t, app, guest, false)
    t.same(ofType(await eventsUntil(t, app, incomplete, sentinelArrived), 'realm_user'), [])
    t.same(ofType(await eventsUntil(t, app, complete, sentinelArrived), 'realm_user'), [{ type: 'realm_user', op: 'add', person: unknownUser(id) }])
    const [memberAdd] = await eventsUntil(t, app, memberQueue, hasType('realm_user'))
    t.match(memberAdd, { type: 'realm_user', op: 'add', person: { user_id: id, full_name: 'Sam Stranger' } }, 'members still get the real user')
  })

  t.test('register: realm_users has an "Unknown user" for each inaccessible user only without it', async (t) => {
    await services.prisma.subscription.updateMany({ where: { userId: guest.id }, data: { active: false } })
    t.teardown(() => services.prisma.subscription.updateMany({ where: { userId: guest.id }, data: { active: true } }))
    const incomplete = (await register(t, app, guest, MODERN_CAPABILITIES, { fetch_event_types: ['realm_user'] })).state
    const complete = (await register(t, app, guest, { ...MODERN_CAPABILITIES, user_list_incomplete: false }, { fetch_event_types: ['realm_user'] })).state
    const ids = (state: Body) => (state.realm_users as Body[]).map((u) => u.user_id as number)
    t.same(ids(incomplete), [guest.id, fx.users.bot.id, fx.notificationBot.id].sort((a, b) => a - b), 'itself and the bots')
    const everyone = (await services.prisma.user.findMany({ where: { realmId: fx.realm.id }, select: { id: true }, orderBy: { id: 'asc' } })).map((u) => u.id)
    t.same(ids(complete), everyone, 'everyone, sorted by ID')
    for (const u of complete.realm_users as Body[]) {
      const own = (incomplete.realm_users as Body[]).find((v) => v.user_id === u.user_id)
      if (own) t.same(u, own)
      else {
        const { is_active: _active, ...placeholder } = unknownUser(u.user_id as number) // realm_users entries leave is_active out
        t.same(u, placeholder)
      }
    }
  })
})

t.test('client_capabilities: the other transforms', async (t) => {
  const { app, fx, services } = await buildTestApp(t)
  const { member } = fx.users

  t.test('user_settings_object: without it, the legacy settings events follow each user_settings', async (t) => {
    const types = { event_types: ['user_settings', 'update_display_settings', 'update_global_notifications'] }
    const modern = await register(t, app, member, MODERN_CAPABILITIES, types)
    const legacy = await register(t, app, member, { ...MODERN_CAPABILITIES, user_settings_object: false }, types)
    expectSuccess(t, await as(app, member).patch('/settings', { enable_sounds: false, dense_mode: true }))
    const done = (events: Body[]) => ofType(events, 'user_settings').length === 2
    const settings = [
      { type: 'user_settings', op: 'update', property: 'dense_mode', value: true },
      { type: 'user_settings', op: 'update', property: 'enable_sounds', value: false },
    ]
    const byProperty = (a: Body, b: Body) => String(a.property ?? a.setting_name ?? a.notification_name).localeCompare(String(b.property ?? b.setting_name ?? b.notification_name))
    t.same((await eventsUntil(t, app, modern, done)).sort(byProperty), settings)
    const legacyEvents = await eventsUntil(t, app, legacy, (events) => events.length === 4)
    t.same(ofType(legacyEvents, 'user_settings').sort(byProperty), settings)
    t.same(ofType(legacyEvents, 'update_display_settings'), [{ type: 'update_display_settings', user: member.email, setting_name: 'dense_mode', setting: true }])
    t.same(ofType(legacyEvents, 'update_global_notifications'), [{ type: 'update_global_notifications', user: member.email, notification_name: 'enable_sounds', setting: false }])
  })

  t.test('linkifier_url_template: realm_linkifiers is empty without it', async (t) => {
    const row = await services.prisma.realmLinkifier.create({ data: { realmId: fx.realm.id, pattern: '#(?P<id>[0-9]+)', urlTemplate: 'https://tracker.example.com/{id}' } })
    const modern = await register(t, app, member, MODERN_CAPABILITIES, { fetch_event_types: ['realm_linkifiers'] })
    const legacy = await register(t, app, member, { ...MODERN_CAPABILITIES, linkifier_url_template: false }, { fetch_event_types: ['realm_linkifiers'] })
    t.same(modern.state.realm_linkifiers, [{ id: row.id, pattern: '#(?P<id>[0-9]+)', url_template: 'https://tracker.example.com/{id}' }])
    t.same(legacy.state.realm_linkifiers, [])
  })

  t.test('user_avatar_url_field_optional: avatar_url is still sent (Roost serves no GET /avatar/{user_id})', async (t) => {
    const { state } = await register(t, app, member, { ...MODERN_CAPABILITIES, user_avatar_url_field_optional: true }, { fetch_event_types: ['realm_user'], client_extavatar: true })
    const users = state.realm_users as Body[]
    t.ok(users.length > 0)
    t.ok(users.every((u) => 'avatar_url' in u))
    t.equal(users.find((u) => u.user_id === fx.users.otherMember.id)?.avatar_url, null, 'gravatar avatars are still left to the client')
  })
})
