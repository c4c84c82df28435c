// PATCH /users/{user_id} and PATCH /users/{email} with `new_email` (upstream
// level 313): an administrator holding can_change_user_emails gives another
// user a new real address; the API email follows while it is public.
import t from 'tap'
import { buildTestApp } from '../support/app.js'
import { anon, as } from '../support/client.js'
import { expectError, expectSuccess } from '../support/expect.js'
import { captureEvents } from '../support/events.js'
import { checkStateAfter } from '../support/state-check.js'
import { fakeEmailDomain } from '../../src/present/realm.js'
import { avatarUrl, avatarUrlMedium } from '../../src/present/user.js'
import type { User } from '../../src/db/index.js'

t.test('PATCH /users/{user_id} new_email', async (t) => {
  const { app, fx, config, services } = await buildTestApp(t)
  const { owner, admin, member, otherMember } = fx.users
  await services.prisma.user.update({ where: { id: admin.id }, data: { canChangeUserEmails: true } })
  await services.prisma.user.update({ where: { id: member.id }, data: { canChangeUserEmails: true } })
  const domain = fakeEmailDomain(fx.realm, config.externalUrl)
  const fresh = (user: User) => fx.refresh(user)
  const address = (local: string) => `${local}@${fx.realm.stringId}.example.org`
  const NOT_AUTHORIZED = { code: 'BAD_REQUEST', status: 400, msg: 'User not authorized to change user emails' }

  t.test('needs an administrator with can_change_user_emails', async (t) => {
    const target = await fx.newUser({ fullName: 'Target One' })
    expectError(t, await as(app, owner).patch(`/users/${target.id}`, { new_email: address('by-owner') }), NOT_AUTHORIZED)
    expectError(t, await as(app, member).patch(`/users/${target.id}`, { new_email: address('by-member') }), NOT_AUTHORIZED)
    expectError(t, await as(app, owner).patch(`/users/${target.id}`, { full_name: 'Renamed Anyway', new_email: address('by-owner') }), NOT_AUTHORIZED)
    const row = await fresh(target)
    t.equal(row.deliveryEmail, target.deliveryEmail)
    t.equal(row.fullName, 'Target One', 'nothing else of the request was applied')
  })

  t.test('refuses a bad or taken address, and an unknown user', async (t) => {
    const target = await fx.newUser()
    expectError(t, await as(app, admin).patch(`/users/${target.id}`, { new_email: 'not an address' }), { code: 'BAD_REQUEST', status: 400, msg: 'Enter a valid email address.' })
    expectError(t, await as(app, admin).patch(`/users/${target.id}`, { new_email: otherMember.deliveryEmail.toUpperCase() }), {
      code: 'BAD_REQUEST',
      status: 400,
      msg: `Email '${otherMember.deliveryEmail.toUpperCase()}' already in use`,
    })
    expectError(t, await as(app, admin).patch('/users/nobody@nowhere.example', { new_email: address('x') }), { code: 'BAD_REQUEST', status: 400, msg: 'No such user' })
    t.equal((await fresh(target)).deliveryEmail, target.deliveryEmail)
  })

  t.test('a public address: the state check from the user, a bystander and the administrator', async (t) => {
    const target = await fx.newUser({ password: 'target-pass-1' })
    // The user's own client: HTTP Basic takes the real address, so it authenticates with the new one from the change on.
    const self = { ...target }
    await checkStateAfter(t, app, self, async () => {
      expectSuccess(t, await as(app, admin).patch(`/users/${target.id}`, { new_email: address('moved-1') }))
      self.deliveryEmail = address('moved-1')
    }, { expectTypes: ['realm_user/update'] })
    await checkStateAfter(t, app, otherMember, () => as(app, admin).patch(`/users/${target.id}`, { new_email: address('moved-2') }), { expectTypes: ['realm_user/update'] })
    await checkStateAfter(t, app, admin, () => as(app, admin).patch(`/users/${target.id}`, { new_email: address('moved-3') }), { expectTypes: ['realm_user/update'] })
    const row = await fresh(target)
    t.same([row.email, row.deliveryEmail], [address('moved-3'), address('moved-3')])
    // Logging in takes the new address; the old one no longer names anyone.
    t.match(expectSuccess(t, await anon(app, fx).post('/fetch_api_key', { username: address('moved-3'), password: 'target-pass-1' })), { user_id: target.id })
    expectError(t, await anon(app, fx).post('/fetch_api_key', { username: target.deliveryEmail, password: 'target-pass-1' }), { code: 'AUTHENTICATION_FAILED', status: 401 })
    t.match(expectSuccess(t, await as(app, row).get('/users/me')), { email: address('moved-3'), delivery_email: address('moved-3') })
  })

  t.test('the events: delivery_email to those who may see it, the avatar and new_email to everyone', async (t) => {
    const target = await fx.newUser()
    const events = await captureEvents(app, otherMember, () => as(app, admin).patch(`/users/${target.id}`, { new_email: address('evented') }), { register: { event_types: ['realm_user'] } })
    const row = await fresh(target)
    t.same(events.map(({ id: _id, ...e }) => e), [
      { type: 'realm_user', op: 'update', person: { user_id: target.id, delivery_email: address('evented') } },
      { type: 'realm_user', op: 'update', person: { user_id: target.id, avatar_source: 'G', avatar_url: avatarUrl(row), avatar_url_medium: avatarUrlMedium(row), avatar_version: row.avatarVersion } },
      { type: 'realm_user', op: 'update', person: { user_id: target.id, new_email: address('evented') } },
    ])
  })

  t.test('a hidden address: the API email stays the stand-in; only those who may see the address hear of it', async (t) => {
    const target = await fx.newUser()
    expectSuccess(t, await as(app, target).patch('/settings', { email_address_visibility: 3 }))
    await checkStateAfter(t, app, otherMember, () => as(app, admin).patch(`/users/${target.id}`, { new_email: address('hidden-1') }), { expectTypes: ['realm_user/update'] })
    await checkStateAfter(t, app, owner, () => as(app, admin).patch(`/users/${target.id}`, { new_email: address('hidden-2') }), { expectTypes: ['realm_user/update'] })
    const row = await fresh(target)
    t.same([row.email, row.deliveryEmail], [`user${target.id}@${domain}`, address('hidden-2')])
  })

  t.test('PATCH /users/{email}: by the API email, or by the real address where the requester may see it', async (t) => {
    const target = await fx.newUser({ fullName: 'By Email' })
    expectSuccess(t, await as(app, admin).patch(`/users/${target.deliveryEmail}`, { new_email: address('by-email-1'), full_name: 'By Email Renamed' }))
    t.match(await fresh(target), { deliveryEmail: address('by-email-1'), fullName: 'By Email Renamed' })
    expectSuccess(t, await as(app, await fresh(target)).patch('/settings', { email_address_visibility: 3 }))
    expectSuccess(t, await as(app, admin).patch(`/users/user${target.id}@${domain}`, { new_email: address('by-email-2') }))
    t.equal((await fresh(target)).deliveryEmail, address('by-email-2'))
    expectError(t, await as(app, member).patch(`/users/${address('by-email-2')}`, { full_name: 'Nope' }), { code: 'BAD_REQUEST', status: 400, msg: 'No such user' })
  })
})
