import { createHash } from 'node:crypto'
import t from 'tap'
import { buildTestApp } from '../support/app.js'
import { anon, as } from '../support/client.js'
import { expectError, expectSuccess, type Body } from '../support/expect.js'
import type { CapturedBusItem as BusItem } from '../support/events.js'
import { ROLE } from '../../src/domain/roles.js'
import { withTimeout } from '../events/queue-store.contract.js'

const md5 = (s: string) => createHash('md5').update(s.toLowerCase()).digest('hex')

t.test('GET /users/me', async (t) => {
  const { app, fx, services } = await buildTestApp(t)

  t.test('returns exactly the spec fields of the requester', async (t) => {
    const member = fx.users.member
    const body = expectSuccess(t, await as(app, member).get('/users/me'))
    const { result, msg, ...fields } = body
    t.same(Object.keys(fields).sort(), [
      'avatar_url', 'avatar_version', 'date_joined', 'delivery_email', 'email', 'full_name', 'is_active', 'is_admin',
      'is_billing_admin', 'is_bot', 'is_guest', 'is_owner', 'max_message_id', 'profile_data', 'role', 'timezone', 'user_id',
    ], 'no bot_type for a person: neither the spec nor upstream has it on this endpoint')
    t.equal(result, 'success')
    t.equal(msg, '')
    t.equal(fields.user_id, member.id)
    t.equal(fields.email, member.email)
    t.equal(fields.delivery_email, member.deliveryEmail)
    t.equal(fields.full_name, 'Mia Member')
    t.equal(fields.role, ROLE.MEMBER)
    t.same([fields.is_admin, fields.is_owner, fields.is_guest, fields.is_bot, fields.is_billing_admin, fields.is_active], [false, false, false, false, false, true])
    t.equal(fields.avatar_url, `https://secure.gravatar.com/avatar/${md5(member.deliveryEmail)}?d=identicon&version=1`)
    t.equal(fields.avatar_version, 1)
    t.equal(fields.timezone, '')
    t.equal(new Date(fields.date_joined).getTime(), member.dateJoined.getTime())
    t.equal(fields.max_message_id, -1)
    t.same(fields.profile_data, {})
  })

  t.test('reports the newest message the user has', async (t) => {
    const member = await fx.newUser()
    const message = await services.prisma.message.create({
      data: { realmId: fx.realm.id, senderId: member.id, streamId: fx.streams.general.id, topic: 't', content: 'x', renderedContent: '<p>x</p>', dateSent: new Date() },
    })
    await services.prisma.userMessage.create({ data: { userId: member.id, messageId: message.id } })
    t.equal(expectSuccess(t, await as(app, member).get('/users/me')).max_message_id, message.id)
  })

  t.test('marks owners as administrators too', async (t) => {
    const body = expectSuccess(t, await as(app, fx.users.owner).get('/users/me'))
    t.equal(body.is_owner, true)
    t.equal(body.is_admin, true)
    t.equal(body.role, ROLE.OWNER)
  })

  t.test('returns custom profile values with rendered_value for Markdown fields only, by field ID', async (t) => {
    const person = await fx.newUser()
    const [text, long, date] = await Promise.all([
      services.prisma.customProfileField.create({ data: { realmId: fx.realm.id, name: `Title ${person.id}`, type: 1, order: 1 } }),
      services.prisma.customProfileField.create({ data: { realmId: fx.realm.id, name: `About ${person.id}`, type: 2, order: 2 } }),
      services.prisma.customProfileField.create({ data: { realmId: fx.realm.id, name: `Born ${person.id}`, type: 4, order: 3 } }),
    ])
    await services.prisma.customProfileFieldValue.createMany({
      data: [
        { userId: person.id, fieldId: date.id, value: '2000-01-01' },
        { userId: person.id, fieldId: text.id, value: '**lead**', renderedValue: '<p><strong>lead</strong></p>' },
        { userId: person.id, fieldId: long.id, value: 'plain', renderedValue: null },
      ],
    })
    const other = await fx.newUser()
    await services.prisma.customProfileFieldValue.create({ data: { userId: other.id, fieldId: text.id, value: 'not mine' } })
    const body = expectSuccess(t, await as(app, person).get('/users/me'))
    t.same(body.profile_data, {
      [text.id]: { value: '**lead**', rendered_value: '<p><strong>lead</strong></p>' },
      [long.id]: { value: 'plain', rendered_value: 'plain' },
      [date.id]: { value: '2000-01-01' },
    })
    t.same(Object.keys(body.profile_data), [text.id, long.id, date.id].sort((a, b) => a - b).map(String))
  })

  t.test('reflects the current row: role, billing admin, timezone, uploaded avatar, name and address', async (t) => {
    const person = await fx.newUser()
    expectSuccess(t, await as(app, person).get('/users/me'))
    await withTimeout(services.authCache.whenListening(), 10_000, 'the invalidation listener')
    expectSuccess(t, await as(app, person).get('/users/me')) // served from the cache from now on
    const updated = await services.prisma.user.update({
      where: { id: person.id },
      data: { role: ROLE.ADMIN, timezone: 'Europe/Berlin', avatarSource: 'U', avatarHash: 'f'.repeat(40), avatarVersion: 3, fullName: 'Renamed Person', email: `user${person.id}@api.example.org` },
    })
    // is_billing_admin is membership of can_manage_billing_group's group (role:administrators by default): a new row is announced too.
    const admins = await services.prisma.userGroup.findFirstOrThrow({ where: { realmId: fx.realm.id, name: 'role:administrators', isSystemGroup: true } })
    await services.prisma.userGroupMember.create({ data: { groupId: admins.id, userId: person.id } })
    const body = expectSuccess(t, await as(app, person).get('/users/me'))
    t.strictSame(
      { ...body, profile_data: undefined },
      {
        result: 'success',
        msg: '',
        avatar_url: `/user_avatars/${fx.realm.id}/${'f'.repeat(40)}.png?version=3`,
        avatar_version: 3,
        email: `user${person.id}@api.example.org`,
        full_name: 'Renamed Person',
        is_admin: true,
        is_owner: false,
        is_billing_admin: true,
        role: ROLE.ADMIN,
        is_guest: false,
        is_bot: false,
        is_active: true,
        timezone: 'Europe/Berlin',
        date_joined: updated.dateJoined.toISOString().replace(/Z$/, '+00:00'),
        max_message_id: -1,
        user_id: person.id,
        delivery_email: person.deliveryEmail,
        profile_data: undefined,
      },
    )
  })

  t.test('shows the real address even when the user hides it from everyone', async (t) => {
    const shy = await fx.newUser()
    await services.prisma.userSettings.update({ where: { userId: shy.id }, data: { emailAddressVisibility: 4 } })
    const body = expectSuccess(t, await as(app, shy).get('/users/me'))
    t.equal(body.delivery_email, shy.deliveryEmail)
    t.equal(body.avatar_url, `https://secure.gravatar.com/avatar/${md5(shy.deliveryEmail)}?d=identicon&version=1`)
  })

  t.test('gives bots their bot fields and no profile_data', async (t) => {
    const bot = fx.users.bot
    const body = expectSuccess(t, await as(app, bot).get('/users/me'))
    const { result, msg, ...fields } = body
    t.same(Object.keys(fields).sort(), [
      'avatar_url', 'avatar_version', 'bot_owner_id', 'bot_type', 'date_joined', 'delivery_email', 'email', 'full_name', 'is_active', 'is_admin',
      'is_billing_admin', 'is_bot', 'is_guest', 'is_owner', 'max_message_id', 'role', 'timezone', 'user_id',
    ])
    t.equal(fields.is_bot, true)
    t.equal(fields.bot_type, 1)
    t.equal(fields.bot_owner_id, fx.users.member.id)
  })

  t.test('agrees with GET /users/{id} for the same user, field for field (bot_type only for bots)', async (t) => {
    for (const user of [fx.users.owner, fx.users.guest, fx.users.bot, fx.users.member]) {
      const { max_message_id, ...me } = expectSuccess(t, await as(app, user).get('/users/me'))
      const { user: dict } = expectSuccess(t, await as(app, user).get(`/users/${user.id}`, { client_extavatar: false, include_custom_profile_fields: true }))
      t.type(max_message_id, 'number')
      const { bot_type, ...rest } = dict
      t.strictSame(me, { result: 'success', msg: '', ...rest, ...(dict.is_bot ? { bot_type } : {}) }, `user ${user.id}`)
      if (!dict.is_bot) t.equal(bot_type, null, 'the user object of GET /users/{id} keeps bot_type: null for a person')
    }
  })

  t.test('requires authentication', async (t) => {
    const res = await anon(app, fx).get('/users/me')
    expectError(t, res, { code: 'UNAUTHORIZED', status: 401 })
  })
})

t.test('GET /users', async (t) => {
  const { app, fx, services } = await buildTestApp(t)
  const byId = (members: Body[]) => new Map(members.map((m) => [m.user_id as number, m]))

  t.test('lists every user of the realm, bots and deactivated users included', async (t) => {
    const gone = await fx.newUser({ fullName: 'Gone Person' })
    await services.prisma.user.update({ where: { id: gone.id }, data: { isActive: false } })
    const members = expectSuccess(t, await as(app, fx.users.member).get('/users')).members as Body[]
    const users = byId(members)
    for (const u of Object.values(fx.users)) t.ok(users.has(u.id), `${u.fullName} listed`)
    t.ok(users.has(fx.notificationBot.id))
    t.equal(users.get(gone.id)?.is_active, false)
    t.same(members.map((m) => m.user_id), [...members.map((m) => m.user_id)].sort((a, b) => a - b), 'sorted by ID')
  })

  t.test('gives bots bot_type and bot_owner_id and no profile_data', async (t) => {
    const users = byId(expectSuccess(t, await as(app, fx.users.member).get('/users', { include_custom_profile_fields: true })).members)
    const bot = users.get(fx.users.bot.id) as Body
    t.equal(bot.is_bot, true)
    t.equal(bot.bot_type, 1)
    t.equal(bot.bot_owner_id, fx.users.member.id)
    t.notOk('profile_data' in bot)
    const human = users.get(fx.users.admin.id) as Body
    t.equal(human.bot_type, null, 'bot_type is null for people (spec "User")')
    t.notOk('bot_owner_id' in human)
    t.same(human.profile_data, {})
  })

  t.test('leaves profile_data out unless asked', async (t) => {
    const users = byId(expectSuccess(t, await as(app, fx.users.member).get('/users')).members)
    t.notOk('profile_data' in (users.get(fx.users.admin.id) as Body))
  })

  t.test('returns custom profile field values with rendered_value for text fields', async (t) => {
    const field = await services.prisma.customProfileField.create({ data: { realmId: fx.realm.id, name: 'Role', type: 1, order: 1 } })
    const date = await services.prisma.customProfileField.create({ data: { realmId: fx.realm.id, name: 'Birthday', type: 4, order: 2 } })
    const person = await fx.newUser()
    await services.prisma.customProfileFieldValue.createMany({
      data: [
        { userId: person.id, fieldId: field.id, value: '**lead**', renderedValue: '<p><strong>lead</strong></p>' },
        { userId: person.id, fieldId: date.id, value: '2000-01-01' },
      ],
    })
    const users = byId(expectSuccess(t, await as(app, fx.users.member).get('/users', { include_custom_profile_fields: true })).members)
    t.same(users.get(person.id)?.profile_data, {
      [field.id]: { value: '**lead**', rendered_value: '<p><strong>lead</strong></p>' },
      [date.id]: { value: '2000-01-01' },
    })
  })

  t.test('leaves avatar_url null for clients that compute external avatars', async (t) => {
    const withDefault = byId(expectSuccess(t, await as(app, fx.users.member).get('/users')).members)
    t.equal(withDefault.get(fx.users.admin.id)?.avatar_url, null)
    const explicit = byId(expectSuccess(t, await as(app, fx.users.member).get('/users', { client_extavatar: false })).members)
    t.equal(explicit.get(fx.users.admin.id)?.avatar_url, `https://secure.gravatar.com/avatar/${md5(fx.users.admin.deliveryEmail)}?d=identicon&version=1`)
  })

  t.test('hides real addresses the viewer may not see, and sends avatar_url to everyone for a hidden address (clients hash the API email)', async (t) => {
    const shy = await fx.newUser()
    await services.prisma.userSettings.update({ where: { userId: shy.id }, data: { emailAddressVisibility: 3 } })
    const asMember = byId(expectSuccess(t, await as(app, fx.users.member).get('/users')).members).get(shy.id) as Body
    t.equal(asMember.delivery_email, null)
    t.match(asMember.avatar_url, /^https:\/\/secure\.gravatar\.com\/avatar\//)
    const asAdmin = byId(expectSuccess(t, await as(app, fx.users.admin).get('/users')).members).get(shy.id) as Body
    t.equal(asAdmin.delivery_email, shy.deliveryEmail)
    t.match(asAdmin.avatar_url, /^https:\/\/secure\.gravatar\.com\/avatar\//)
    const asSelf = expectSuccess(t, await as(app, shy).get('/users/me'))
    t.equal(asSelf.delivery_email, shy.deliveryEmail)
  })

  t.test('rejects a non-boolean client_extavatar', async (t) => {
    expectError(t, await as(app, fx.users.member).get('/users', { client_extavatar: 'maybe' }), {
      code: 'BAD_REQUEST', msg: 'client_extavatar is not a boolean',
    })
  })

  t.test('lets guests see everyone while can_access_all_users_group is everyone', async (t) => {
    const members = expectSuccess(t, await as(app, fx.users.guest).get('/users')).members as Body[]
    t.ok(members.some((m) => m.user_id === fx.users.otherMember.id))
  })
})

t.test('GET /users restricted for guests', async (t) => {
  const { app, fx, services } = await buildTestApp(t)
  const membersGroup = await services.prisma.userGroup.findFirstOrThrow({ where: { realmId: fx.realm.id, name: 'role:members' } })
  await services.prisma.realm.update({ where: { id: fx.realm.id }, data: { canAccessAllUsersGroupId: membersGroup.id } })
  const guest = fx.users.guest
  const stranger = await fx.newUser({ fullName: 'Stranger' })
  await services.prisma.subscription.deleteMany({ where: { userId: stranger.id } })

  t.test('shows a restricted guest only the people it shares channels with, and bots', async (t) => {
    const ids = (expectSuccess(t, await as(app, guest).get('/users')).members as Body[]).map((m) => m.user_id)
    t.ok(ids.includes(guest.id))
    t.ok(ids.includes(fx.users.member.id), 'shares #general')
    t.ok(ids.includes(fx.users.bot.id))
    t.notOk(ids.includes(stranger.id))
  })

  t.test('answers No such user for someone the guest may not access', async (t) => {
    expectError(t, await as(app, guest).get(`/users/${stranger.id}`), { code: 'BAD_REQUEST', msg: 'No such user' })
  })

  t.test('does not restrict members', async (t) => {
    const ids = (expectSuccess(t, await as(app, fx.users.member).get('/users')).members as Body[]).map((m) => m.user_id)
    t.ok(ids.includes(stranger.id))
  })
})

t.test('GET /users/{user_id}', async (t) => {
  const { app, fx } = await buildTestApp(t)
  const other = await buildTestApp(t)

  t.test('returns the user dict', async (t) => {
    const body = expectSuccess(t, await as(app, fx.users.member).get(`/users/${fx.users.admin.id}`))
    t.equal(body.user.user_id, fx.users.admin.id)
    t.equal(body.user.full_name, 'Adam Admin')
    t.equal(body.user.is_admin, true)
    t.equal(body.user.avatar_url, null)
    t.notOk('profile_data' in body.user)
  })

  t.test('honours client_extavatar and include_custom_profile_fields', async (t) => {
    const body = expectSuccess(t, await as(app, fx.users.member).get(`/users/${fx.users.admin.id}`, { client_extavatar: false, include_custom_profile_fields: true }))
    t.match(body.user.avatar_url, /^https:\/\/secure\.gravatar\.com\/avatar\/[0-9a-f]{32}\?d=identicon&version=1$/)
    t.same(body.user.profile_data, {})
  })

  t.test('returns bots with their owner', async (t) => {
    const body = expectSuccess(t, await as(app, fx.users.member).get(`/users/${fx.users.bot.id}`))
    t.equal(body.user.bot_owner_id, fx.users.member.id)
    t.equal(body.user.bot_type, 1)
  })

  t.test('finds a user by email too', async (t) => {
    const body = expectSuccess(t, await as(app, fx.users.member).get(`/users/${encodeURIComponent(fx.users.admin.email)}`))
    t.equal(body.user.user_id, fx.users.admin.id)
  })

  t.test('answers No such user for an unknown ID', async (t) => {
    expectError(t, await as(app, fx.users.member).get('/users/999999999'), { code: 'BAD_REQUEST', status: 400, msg: 'No such user' })
    expectError(t, await as(app, fx.users.member).get('/users/nobody@example.com'), { code: 'BAD_REQUEST', status: 400, msg: 'No such user' })
  })

  t.test('an email key is decoded once, as any path segment: a literal % is no pattern and no error', async (t) => {
    for (const key of ['%25', '_%25%5C', '%2C%25U']) {
      expectError(t, await as(app, fx.users.member).get(`/users/${key}`), { code: 'BAD_REQUEST', status: 400, msg: 'No such user' })
      expectError(t, await as(app, fx.users.member).get(`/users/${key}/presence`), { code: 'BAD_REQUEST', status: 400, msg: 'No such user' })
    }
  })

  t.test('answers No such user for a user of another realm', async (t) => {
    expectError(t, await as(app, fx.users.member).get(`/users/${other.fx.users.admin.id}`), { code: 'BAD_REQUEST', status: 400, msg: 'No such user' })
  })
})

t.test('POST /users', async (t) => {
  const { app, fx, services } = await buildTestApp(t)
  const domain = fx.users.owner.deliveryEmail.split('@')[1]
  let n = 0
  const fresh = () => `created${n++}@${domain}`

  t.test('lets an administrator create a person who can then log in', async (t) => {
    const email = fresh()
    const body = expectSuccess(t, await as(app, fx.users.admin).post('/users', { email, password: 'new-password', full_name: 'New Person' }))
    t.type(body.user_id, 'number')
    const row = await services.prisma.user.findUniqueOrThrow({ where: { id: body.user_id } })
    t.equal(row.deliveryEmail, email)
    t.equal(row.fullName, 'New Person')
    t.equal(row.role, ROLE.MEMBER)
    t.equal(row.realmId, fx.realm.id)
    const login = expectSuccess(t, await anon(app, fx).post('/fetch_api_key', { username: email, password: 'new-password' }))
    t.equal(login.user_id, body.user_id)
    const subs = await services.prisma.subscription.findMany({ where: { userId: body.user_id } })
    t.same(subs.map((s) => s.streamId), [fx.streams.general.id], 'subscribed to the default channels')
  })

  t.test('lets an owner create a person', async (t) => {
    expectSuccess(t, await as(app, fx.users.owner).post('/users', { email: fresh(), password: 'new-password', full_name: 'Owner Made' }))
  })

  t.test('refuses moderators, members and guests', async (t) => {
    for (const role of ['moderator', 'member', 'guest'] as const) {
      expectError(t, await as(app, fx.users[role]).post('/users', { email: fresh(), password: 'new-password', full_name: 'Nope' }), {
        code: 'UNAUTHORIZED_PRINCIPAL', status: 400, msg: 'Must be an organization administrator',
      })
    }
  })

  t.test('refuses an address already in use, whatever its case', async (t) => {
    const email = fx.users.member.deliveryEmail.toUpperCase()
    expectError(t, await as(app, fx.users.admin).post('/users', { email, password: 'new-password', full_name: 'Dup' }), {
      code: 'BAD_REQUEST', msg: `Email '${email}' already in use`,
    })
  })

  t.test('refuses a malformed address', async (t) => {
    for (const email of ['broken', 'a@b', 'two words@example.com', '@example.com']) {
      expectError(t, await as(app, fx.users.admin).post('/users', { email, password: 'new-password', full_name: 'Bad Email' }), {
        code: 'BAD_REQUEST', msg: 'Bad name or username',
      })
    }
  })

  t.test('checks the full name', async (t) => {
    const post = (full_name: string) => as(app, fx.users.admin).post('/users', { email: fresh(), password: 'new-password', full_name })
    expectError(t, await post('   '), { code: 'BAD_REQUEST', msg: 'Name too short!' })
    expectError(t, await post('x'.repeat(101)), { code: 'BAD_REQUEST', msg: 'Name too long!' })
    expectError(t, await post('Evil @mention'), { code: 'BAD_REQUEST', msg: 'Invalid characters in name!' })
  })

  t.test('refuses a password shorter than six characters', async (t) => {
    expectError(t, await as(app, fx.users.admin).post('/users', { email: fresh(), password: '12345', full_name: 'Weak Pass' }), {
      code: 'BAD_REQUEST', msg: 'The password is too weak.',
    })
  })

  t.test('names a missing parameter', async (t) => {
    expectError(t, await as(app, fx.users.admin).post('/users', { email: fresh(), password: 'new-password' }), {
      code: 'REQUEST_VARIABLE_MISSING', msg: "Missing 'full_name' argument",
    })
  })

  t.test('refuses addresses outside the allowed domains when the realm restricts them', async (t) => {
    await services.prisma.realm.update({ where: { id: fx.realm.id }, data: { emailsRestrictedToDomains: true } })
    await services.prisma.realmDomain.create({ data: { realmId: fx.realm.id, domain: 'allowed.example.org' } })
    t.teardown(() => services.prisma.realm.update({ where: { id: fx.realm.id }, data: { emailsRestrictedToDomains: false } }))
    expectError(t, await as(app, fx.users.admin).post('/users', { email: 'x@elsewhere.example.org', password: 'new-password', full_name: 'Outsider' }), {
      code: 'BAD_REQUEST', msg: "Email 'x@elsewhere.example.org' not allowed in this organization",
    })
    expectSuccess(t, await as(app, fx.users.admin).post('/users', { email: 'x@allowed.example.org', password: 'new-password', full_name: 'Insider' }))
  })

  t.test('tells every active user about the new person, and the person about its channels', async (t) => {
    const items: BusItem[] = []
    const unsubscribe = services.bus.subscribe((item) => items.push(item))
    t.teardown(unsubscribe)
    const email = fresh()
    const { user_id } = expectSuccess(t, await as(app, fx.users.admin).post('/users', { email, password: 'new-password', full_name: 'Event Person' }))
    await new Promise((resolve) => setImmediate(resolve))

    const adds = items.filter((i) => i.event.type === 'realm_user' && i.event.op === 'add')
    t.equal(adds.length, 1)
    const add = adds[0] as BusItem
    t.equal(add.realmId, fx.realm.id)
    t.same(add.event, {
      type: 'realm_user',
      op: 'add',
      person: {
        email,
        user_id,
        avatar_version: 1,
        is_admin: false,
        is_owner: false,
        is_guest: false,
        is_billing_admin: false,
        role: ROLE.MEMBER,
        is_bot: false,
        full_name: 'Event Person',
        timezone: '',
        is_active: true,
        date_joined: add.event.person && (add.event.person as Body).date_joined,
        delivery_email: email,
        avatar_url: `https://secure.gravatar.com/avatar/${md5(email)}?d=identicon&version=1`,
        bot_type: null,
        profile_data: {},
      },
    })
    const active = await services.prisma.user.findMany({ where: { realmId: fx.realm.id, isActive: true }, select: { id: true } })
    t.same([...add.userIds].sort((a, b) => a - b), active.map((u) => u.id).sort((a, b) => a - b))

    const subAdd = items.find((i) => i.event.type === 'subscription' && i.event.op === 'add') as BusItem
    t.same(subAdd.userIds, [user_id])
    t.match(subAdd.event.subscriptions, [{ stream_id: fx.streams.general.id, name: 'general', in_home_view: true, is_muted: false, invite_only: false }])
    t.ok(((subAdd.event.subscriptions as Body[])[0]?.subscribers as number[]).includes(user_id))

    const peerAdd = items.find((i) => i.event.type === 'subscription' && i.event.op === 'peer_add') as BusItem
    t.same(peerAdd.event, { type: 'subscription', op: 'peer_add', stream_ids: [fx.streams.general.id], user_ids: [user_id] })
    t.notOk(peerAdd.userIds.includes(user_id))
    t.ok(peerAdd.userIds.includes(fx.users.member.id))
  })

  t.test('writes nothing and tells no one when it fails', async (t) => {
    const items: BusItem[] = []
    const unsubscribe = services.bus.subscribe((item) => items.push(item))
    t.teardown(unsubscribe)
    const before = await services.prisma.user.count({ where: { realmId: fx.realm.id } })
    await as(app, fx.users.admin).post('/users', { email: fx.users.member.deliveryEmail, password: 'new-password', full_name: 'Dup' })
    await new Promise((resolve) => setImmediate(resolve))
    t.equal(await services.prisma.user.count({ where: { realmId: fx.realm.id } }), before)
    t.same(items, [])
  })
})
