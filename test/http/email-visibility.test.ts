// email_address_visibility decides the address the API knows a person by:
// the real one while everyone may see it, otherwise user{id}@{realm domain}
// for every viewer (upstream get_display_email_address), with `delivery_email`
// carrying the real one to those who may see it. Changing the setting rewrites
// the API email and tells everyone (`new_email`), and those whose view of the
// real address flipped (`delivery_email`).
import t from 'tap'
import { buildTestApp } from '../support/app.js'
import { anon, as } from '../support/client.js'
import { expectError, expectSuccess, type Body } from '../support/expect.js'
import { captureEvents } from '../support/events.js'
import { checkStateAfter } from '../support/state-check.js'
import { fakeEmailDomain } from '../../src/present/realm.js'
import { avatarUrl, avatarUrlMedium } from '../../src/present/user.js'
import type { User } from '../../src/db/index.js'

t.test('email_address_visibility and the API email', async (t) => {
  const { app, fx, config, services } = await buildTestApp(t)
  const { owner, admin, member, otherMember, guest } = fx.users
  const domain = fakeEmailDomain(fx.realm, config.externalUrl)
  const standIn = (user: { id: number }) => `user${user.id}@${domain}`
  const REALM_USER = { register: { event_types: ['realm_user'] } }
  const avatarOf = (user: User) => ({ avatar_source: 'G', avatar_url: avatarUrl(user), avatar_url_medium: avatarUrlMedium(user), avatar_version: user.avatarVersion })
  const AUTH_FAILED = { code: 'AUTHENTICATION_FAILED', status: 401, msg: 'Your username or password is incorrect' }

  t.test('hiding the address: the state check from the user, a member who loses it and an administrator who keeps it', async (t) => {
    const self = await fx.newUser({ fullName: 'Self Hider' })
    await checkStateAfter(t, app, self, () => as(app, self).patch('/settings', { email_address_visibility: 3 }), {
      expectTypes: ['user_settings/update', 'realm_user/update'],
    })
    const shy = await fx.newUser({ fullName: 'Shy Person' })
    await checkStateAfter(t, app, otherMember, () => as(app, shy).patch('/settings', { email_address_visibility: 3 }), {
      expectTypes: ['realm_user/update'],
    })
    const quiet = await fx.newUser({ fullName: 'Quiet Person' })
    await checkStateAfter(t, app, admin, () => as(app, quiet).patch('/settings', { email_address_visibility: 3 }), {
      expectTypes: ['realm_user/update'],
    })
  })

  t.test('hiding the address sends new_email to everyone and delivery_email: null to those who lose it', async (t) => {
    const shy = await fx.newUser({ fullName: 'Shy Events' })
    const seenByMember = await captureEvents(app, member, () => as(app, shy).patch('/settings', { email_address_visibility: 3 }), REALM_USER)
    t.same(
      seenByMember.map(({ id: _id, ...e }) => e),
      [
        { type: 'realm_user', op: 'update', person: { user_id: shy.id, delivery_email: null } },
        { type: 'realm_user', op: 'update', person: { user_id: shy.id, new_email: standIn(shy) } },
        { type: 'realm_user', op: 'update', person: { user_id: shy.id, ...avatarOf(shy) } },
      ],
      'the avatar URL again: clients computing gravatar URLs hash the API email',
    )
    const seenByAdmin = await captureEvents(app, admin, () => as(app, shy).patch('/settings', { email_address_visibility: 5 }), { ...REALM_USER, expectNone: true })
    t.same(seenByAdmin, [], 'moderators and up: the admin could see it before and still can, the API email stays the stand-in')
    const back = await captureEvents(app, admin, () => as(app, shy).patch('/settings', { email_address_visibility: 1 }), REALM_USER)
    t.same(back.map(({ id: _id, ...e }) => e), [
      { type: 'realm_user', op: 'update', person: { user_id: shy.id, new_email: shy.deliveryEmail } },
      { type: 'realm_user', op: 'update', person: { user_id: shy.id, ...avatarOf(shy) } },
    ])
    t.equal((await fx.refresh(shy)).email, shy.deliveryEmail)
  })

  t.test('showing the address again: the state check from a member who regains it', async (t) => {
    const shy = await fx.newUser({ fullName: 'Shy Again' })
    expectSuccess(t, await as(app, shy).patch('/settings', { email_address_visibility: 4 }))
    await checkStateAfter(t, app, otherMember, () => as(app, shy).patch('/settings', { email_address_visibility: 1 }), {
      expectTypes: ['realm_user/update'],
    })
    await checkStateAfter(t, app, shy, () => as(app, shy).patch('/settings', { email_address_visibility: 2, timezone: 'Europe/Paris' }), {
      expectTypes: ['user_settings/update', 'realm_user/update'],
    })
  })

  t.test('a hidden address: user objects, messages, authentication and look-ups', async (t) => {
    const shy = await fx.newUser({ fullName: 'Shy Sender', password: 'shy-password-1' })
    expectSuccess(t, await as(app, shy).patch('/settings', { email_address_visibility: 3 }))

    const seen = (await Promise.all([member, guest, admin].map(async (viewer) => {
      const users = expectSuccess(t, await as(app, viewer).get('/users')).members as Body[]
      return users.find((u) => u.user_id === shy.id)
    })))
    t.match(seen, [
      { email: standIn(shy), delivery_email: null },
      { email: standIn(shy), delivery_email: null },
      { email: standIn(shy), delivery_email: shy.deliveryEmail },
    ])
    t.match(expectSuccess(t, await as(app, shy).get('/users/me')), { email: standIn(shy), delivery_email: shy.deliveryEmail }, 'Basic auth with the real address still works')
    t.match(expectSuccess(t, await anon(app, fx).post('/fetch_api_key', { username: shy.deliveryEmail, password: 'shy-password-1' })), {
      api_key: shy.apiKey,
      email: shy.deliveryEmail,
      user_id: shy.id,
    })
    // Logging in takes the real address only, as upstream's password backend.
    expectError(t, await anon(app, fx).post('/fetch_api_key', { username: standIn(shy), password: 'shy-password-1' }), AUTH_FAILED)

    // GET /users/{email}: the API email for everyone, the real address for those who may see it.
    t.match(expectSuccess(t, await as(app, member).get(`/users/${standIn(shy)}`)).user, { user_id: shy.id, email: standIn(shy), delivery_email: null })
    expectError(t, await as(app, member).get(`/users/${shy.deliveryEmail}`), { code: 'BAD_REQUEST', status: 400, msg: 'No such user' })
    t.match(expectSuccess(t, await as(app, admin).get(`/users/${shy.deliveryEmail}`)).user, { user_id: shy.id, delivery_email: shy.deliveryEmail })

    // Messages carry the API email.
    const streamMessage = expectSuccess(t, await as(app, shy).post('/messages', { type: 'stream', to: fx.streams.general.name, topic: 'privacy', content: 'hello' })).id
    const fetched = expectSuccess(t, await as(app, member).get(`/messages/${streamMessage}`)).message as Body
    t.equal(fetched.sender_email, standIn(shy))
    const dm = expectSuccess(t, await as(app, member).post('/messages', { type: 'private', to: JSON.stringify([shy.id]), content: 'hi' })).id
    const dmFetched = expectSuccess(t, await as(app, member).get(`/messages/${dm}`)).message as Body
    t.same((dmFetched.display_recipient as Body[]).map((r) => r.email).sort(), [member.email, standIn(shy)].sort())

    // Addressing a direct message: the API email works for everyone, the real address only for those who may see it.
    expectSuccess(t, await as(app, member).post('/messages', { type: 'private', to: JSON.stringify([standIn(shy)]), content: 'by stand-in' }))
    expectError(t, await as(app, member).post('/messages', { type: 'private', to: JSON.stringify([shy.deliveryEmail]), content: 'by address' }), {
      code: 'BAD_REQUEST',
      status: 400,
      msg: `Invalid email '${shy.deliveryEmail}'`,
    })
    expectSuccess(t, await as(app, admin).post('/messages', { type: 'private', to: JSON.stringify([shy.deliveryEmail]), content: 'by address' }))
    expectError(t, await as(app, member).post('/typing', { op: 'start', to: JSON.stringify([shy.deliveryEmail]) }), { code: 'BAD_REQUEST', status: 400 })

    // Narrows: the same rule.
    const byStandIn = expectSuccess(t, await as(app, member).get('/messages', { anchor: 'newest', num_before: 10, num_after: 0, narrow: JSON.stringify([{ operator: 'dm', operand: standIn(shy) }]) }))
    t.ok((byStandIn.messages as Body[]).some((m) => m.id === dm))
    expectError(t, await as(app, member).get('/messages', { anchor: 'newest', num_before: 10, num_after: 0, narrow: JSON.stringify([{ operator: 'dm', operand: shy.deliveryEmail }]) }), {
      code: 'BAD_NARROW',
      status: 400,
    })
    const byAddress = expectSuccess(t, await as(app, admin).get('/messages', { anchor: 'newest', num_before: 10, num_after: 0, narrow: JSON.stringify([{ operator: 'sender', operand: shy.deliveryEmail }]) }))
    t.ok((byAddress.messages as Body[]).some((m) => m.id === streamMessage))
  })

  t.test('GET /users/{email} (level 302): a stand-in names its user whatever the visibility; a real address only where the role may see it', async (t) => {
    const { moderator } = fx.users
    const NO_SUCH_USER = { code: 'BAD_REQUEST', status: 400, msg: 'No such user' }
    const lookUp = async (viewer: User, email: string) => {
      const res = await as(app, viewer).get(`/users/${encodeURIComponent(email)}`)
      return res.statusCode === 200 ? (expectSuccess(t, res).user as Body).user_id : expectError(t, res, NO_SUCH_USER).msg
    }
    const open = await fx.newUser({ fullName: 'Open Person' })
    t.equal(await lookUp(guest, standIn(open)), open.id, "a public address's user is also named by the stand-in")
    t.equal(await lookUp(guest, `  ${open.deliveryEmail.toUpperCase()} `), open.id, 'a public address in any case, trimmed')
    t.equal(await lookUp(member, standIn(open).toUpperCase()), open.id)

    const byVisibility = async (visibility: number) => {
      const user = await fx.newUser({ fullName: `Visibility ${visibility}` })
      expectSuccess(t, await as(app, user).patch('/settings', { email_address_visibility: visibility }))
      const found = []
      for (const viewer of [guest, member, moderator, admin, owner, user]) found.push(await lookUp(viewer, user.deliveryEmail))
      for (const viewer of [guest, member, user]) t.equal(await lookUp(viewer, standIn(user)), user.id, `visibility ${visibility}: the stand-in for everyone`)
      return found
    }
    const ID = 'found'
    const got = async (visibility: number) => (await byVisibility(visibility)).map((r) => (typeof r === 'number' ? ID : r))
    const no = 'No such user'
    // Viewers: guest, member, moderator, admin, owner, the user.
    t.same(await got(2), [no, ID, ID, ID, ID, ID], 'members')
    t.same(await got(5), [no, no, ID, ID, ID, no], 'moderators: the member looking up their own real address is refused, as upstream')
    t.same(await got(3), [no, no, no, ID, ID, no], 'administrators')
    t.same(await got(4), [no, no, no, no, no, no], 'nobody')

    t.equal(await lookUp(member, `user999999999@${domain}`), no, 'a stand-in of no user')
    t.equal(await lookUp(member, `user${open.id}@elsewhere.example.com`), no, 'the shape at another domain is an address like any other')
  })

  t.test("a real address shaped like the realm's stand-ins is refused wherever an address enters", async (t) => {
    await services.prisma.user.update({ where: { id: owner.id }, data: { canChangeUserEmails: true } })
    const hidden = await fx.newUser({ fullName: 'Hidden Target' })
    expectSuccess(t, await as(app, hidden).patch('/settings', { email_address_visibility: 3 }))
    const open = await fx.newUser({ fullName: 'Open Target' })
    for (const target of [hidden, open]) {
      const address = standIn(target)
      const notAllowed = { code: 'BAD_REQUEST', status: 400, msg: `Email '${address}' not allowed in this organization` }
      expectError(t, await as(app, owner).post('/users', { email: address, password: 'shaped-pass-1', full_name: 'Shaped' }), notAllowed)
      expectError(t, await as(app, owner).patch(`/users/${member.id}`, { new_email: address }), notAllowed)
      expectError(t, await as(app, member).patch('/settings', { email: address }), notAllowed)
      const invite = expectError(t, await as(app, owner).post('/invites', { invitee_emails: address, stream_ids: [] }), { code: 'INVITATION_FAILED', status: 400 })
      t.same(invite.errors, [[address, 'Not allowed in this organization.', false]])
    }
    t.equal((await fx.refresh(member)).deliveryEmail, member.deliveryEmail, 'nothing changed')
    // The stand-in owner can still hide and show the address: no other account has it.
    expectSuccess(t, await as(app, open).patch('/settings', { email_address_visibility: 4 }))
    t.equal((await fx.refresh(open)).email, standIn(open))

    // An account stored before the refusal with another's stand-in as its real address: hiding is a 400, not a crash.
    const target = await fx.newUser({ fullName: 'Collision Target' })
    const squatter = await fx.newUser({ fullName: 'Old Squatter' })
    await services.prisma.user.update({ where: { id: squatter.id }, data: { email: standIn(target), deliveryEmail: standIn(target) } })
    expectError(t, await as(app, target).patch('/settings', { email_address_visibility: 3, timezone: 'Europe/Paris' }), {
      code: 'BAD_REQUEST', status: 400, msg: `Email '${standIn(target)}' already in use`,
    })
    const unchanged = await fx.refresh(target)
    t.same([unchanged.email, unchanged.timezone], [target.deliveryEmail, target.timezone], 'nothing applied')
  })

  t.test("with client_gravatar, a hidden sender's avatar URL is sent in live events, as in register and GET /messages", async (t) => {
    const hidden = await fx.newUser({ fullName: 'Hidden Face' })
    expectSuccess(t, await as(app, hidden).patch('/settings', { email_address_visibility: 2 }))
    const open = await fx.newUser({ fullName: 'Open Face' })
    const general = fx.streams.general
    for (const user of [hidden, open]) expectSuccess(t, await as(app, owner).post('/users/me/subscriptions', { subscriptions: JSON.stringify([{ name: general.name }]), principals: JSON.stringify([user.id]) }))
    // Upstream: the client computes a Gravatar only from a real address (finalize_payload, format_user_row).
    const expected = (user: User) => (user.id === hidden.id ? avatarUrl(user) : null)
    for (const sender of [hidden, open]) {
      let id = 0
      const events = await captureEvents(app, member, async () => {
        id = expectSuccess(t, await as(app, sender).post('/messages', { type: 'stream', to: general.name, topic: 'faces', content: 'hi' })).id as number
      }, { register: { event_types: ['message'], client_gravatar: true } })
      t.equal(events[0]?.message.avatar_url, expected(sender), `${sender.fullName}: the live event`)
      const fetched = expectSuccess(t, await as(app, member).get('/messages', { message_ids: JSON.stringify([id]), client_gravatar: true })).messages as Body[]
      t.equal(fetched[0]?.avatar_url, expected(sender), `${sender.fullName}: GET /messages`)
      const state = expectSuccess(t, await as(app, member).post('/register', { fetch_event_types: JSON.stringify(['realm_user']), client_gravatar: true }))
      t.equal((state.realm_users as Body[]).find((u) => u.user_id === sender.id)?.avatar_url, expected(sender), `${sender.fullName}: register`)
    }
  })

  t.test('a new person starts with the realm default: a hidden default gives the stand-in from the first event', async (t) => {
    await services.prisma.realm.update({ where: { id: fx.realm.id }, data: { emailAddressVisibility: 3 } })
    t.teardown(() => services.prisma.realm.update({ where: { id: fx.realm.id }, data: { emailAddressVisibility: 1 } }))
    const email = `hidden-newcomer@${fx.realm.stringId}.example.com`
    let userId = 0
    const events = await captureEvents(app, member, async () => {
      userId = expectSuccess(t, await as(app, owner).post('/users', { email, password: 'newcomer-pass-1', full_name: 'Hidden Newcomer' })).user_id as number
    }, REALM_USER)
    t.match(events, [{ type: 'realm_user', op: 'add', person: { user_id: userId, email: standIn({ id: userId }), delivery_email: null } }])
    const adminView = expectSuccess(t, await as(app, admin).get(`/users/${userId}`)).user as Body
    t.match(adminView, { email: standIn({ id: userId }), delivery_email: email })
    const settings = expectSuccess(t, await as(app, { deliveryEmail: email, apiKey: (await services.prisma.user.findUniqueOrThrow({ where: { id: userId } })).apiKey }).post('/register', {}))
    t.match(settings, { email: standIn({ id: userId }), delivery_email: email, user_settings: { email_address_visibility: 3 } })
  })
})
