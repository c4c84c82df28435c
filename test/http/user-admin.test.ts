import t from 'tap'
import type { FastifyInstance } from 'fastify'
import { buildTestApp } from '../support/app.js'
import { anon, as, basicAuth, type Params } from '../support/client.js'
import { bodyOf, expectError, expectSuccess, type Body } from '../support/expect.js'
import { captureEvents, type CapturedEvent } from '../support/events.js'
import type { User } from '../../src/db/index.js'
import { ROLE } from '../../src/domain/roles.js'

const REALM_USER = { register: { event_types: ['realm_user'] } }
const REALM_USER_AND_GROUPS = { register: { event_types: ['realm_user', 'user_group'] } }

const PNG = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), Buffer.from('IHDR-not-really-a-picture')])

function multipart(files: { name: string; fileName: string; contentType: string; data: Buffer }[]): { body: Buffer; contentType: string } {
  const boundary = `----roost${Math.random().toString(16).slice(2)}`
  const chunks: Buffer[] = []
  for (const f of files) {
    chunks.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${f.name}"; filename="${f.fileName}"\r\nContent-Type: ${f.contentType}\r\n\r\n`), f.data, Buffer.from('\r\n'))
  }
  chunks.push(Buffer.from(`--${boundary}--\r\n`))
  return { body: Buffer.concat(chunks), contentType: `multipart/form-data; boundary=${boundary}` }
}

function postAvatar(app: FastifyInstance, host: string, user: User, files: { name: string; fileName: string; contentType: string; data: Buffer }[]) {
  const { body, contentType } = multipart(files)
  return app.inject({
    method: 'POST',
    url: '/api/v1/users/me/avatar',
    headers: { authorization: basicAuth(user.deliveryEmail, user.apiKey), host, 'content-type': contentType },
    payload: body,
  })
}

const userById = async (app: FastifyInstance, viewer: User, id: number): Promise<Body> => expectSuccess(t, await as(app, viewer).get(`/users/${id}`)).user as Body

/** Events `observer` receives while `fn` runs, and whether `outsider` (a queue that must stay empty) received any. */
async function eventsSeenAndUnseen(app: FastifyInstance, observer: User, outsider: User, fn: () => Promise<unknown>, register: Params) {
  let seen: CapturedEvent[] = []
  const unseen = await captureEvents(app, outsider, async () => {
    seen = await captureEvents(app, observer, fn, { register })
  }, { register, expectNone: true })
  return { seen, unseen }
}

t.test('PATCH /users/{user_id}', async (t) => {
  const { app, fx, services } = await buildTestApp(t)
  const { owner, admin, moderator, member, guest } = fx.users

  t.test('lets an administrator rename a user and tells everyone who can see them', async (t) => {
    const target = await fx.newUser({ fullName: 'Old Name' })
    const events = await captureEvents(app, moderator, () => as(app, admin).patch(`/users/${target.id}`, { full_name: '  New Name ' }), REALM_USER)
    t.same(events.map(({ id: _id, ...e }) => e), [{ type: 'realm_user', op: 'update', person: { user_id: target.id, full_name: 'New Name' } }])
    t.equal((await userById(app, member, target.id)).full_name, 'New Name')
  })

  t.test('ignores a blank full name and refuses an invalid one, changing nothing', async (t) => {
    const target = await fx.newUser({ fullName: 'Kept Name' })
    expectSuccess(t, await as(app, admin).patch(`/users/${target.id}`, { full_name: '   ' }))
    expectError(t, await as(app, admin).patch(`/users/${target.id}`, { full_name: 'x'.repeat(101), role: ROLE.MODERATOR }), { code: 'BAD_REQUEST', msg: 'Name too long!' })
    expectError(t, await as(app, admin).patch(`/users/${target.id}`, { full_name: 'Bad @name' }), { code: 'BAD_REQUEST', msg: 'Invalid characters in name!' })
    const row = await fx.refresh(target)
    t.equal(row.fullName, 'Kept Name')
    t.equal(row.role, ROLE.MEMBER)
  })

  t.test('is for administrators only', async (t) => {
    const target = await fx.newUser()
    for (const actor of [member, moderator, guest]) {
      expectError(t, await as(app, actor).patch(`/users/${target.id}`, { full_name: 'Hijacked' }), { code: 'BAD_REQUEST', msg: 'Insufficient permission' })
    }
    t.equal((await fx.refresh(target)).fullName, target.fullName)
  })

  t.test('names the parameter of a malformed value', async (t) => {
    const target = await fx.newUser()
    expectError(t, await as(app, admin).patch(`/users/${target.id}`, { role: 'boss' }), { code: 'BAD_REQUEST', msg: /role/ })
    expectError(t, await as(app, admin).patch(`/users/${target.id}`, { role: 401 }), { code: 'BAD_REQUEST', msg: 'Invalid role' })
    expectError(t, await as(app, admin).patch(`/users/${target.id}`, { profile_data: '{not json' }), { code: 'BAD_REQUEST', msg: /profile_data/ })
    // Since level 313 a segment that is not a number names the user by email, as GET /users/{email}.
    expectError(t, await as(app, admin).patch('/users/abc', { full_name: 'Someone' }), { code: 'BAD_REQUEST', msg: 'No such user' })
    expectError(t, await as(app, admin).patch('/users/999999', { full_name: 'Someone' }), { code: 'BAD_REQUEST', msg: 'No such user' })
  })

  t.test('changes a role, moves the role group membership and sends the role form', async (t) => {
    const target = await fx.newUser()
    const groups = await services.prisma.userGroup.findMany({ where: { realmId: fx.realm.id, name: { in: ['role:fullmembers', 'role:moderators'] } } })
    const full = groups.find((g) => g.name === 'role:fullmembers')?.id
    const mods = groups.find((g) => g.name === 'role:moderators')?.id
    const events = await captureEvents(app, member, () => as(app, admin).patch(`/users/${target.id}`, { role: ROLE.MODERATOR }), REALM_USER_AND_GROUPS)
    t.match(events, [
      { type: 'realm_user', op: 'update', person: { user_id: target.id, role: ROLE.MODERATOR } },
      { type: 'user_group', op: 'remove_members', group_id: full, user_ids: [target.id] },
      { type: 'user_group', op: 'add_members', group_id: mods, user_ids: [target.id] },
    ])
    t.same(Object.keys(events[0]?.person ?? {}).sort(), ['role', 'user_id'])
    const memberships = await services.prisma.userGroupMember.findMany({ where: { userId: target.id } })
    t.same(memberships.map((m) => m.groupId), [mods])
    const seen = await userById(app, member, target.id)
    t.equal(seen.role, ROLE.MODERATOR)
  })

  t.test('grants roles only up to the actor own: only owners grant or revoke owner', async (t) => {
    const target = await fx.newUser()
    expectError(t, await as(app, admin).patch(`/users/${target.id}`, { role: ROLE.OWNER }), { code: 'UNAUTHORIZED_PRINCIPAL', msg: 'Must be an organization owner' })
    expectError(t, await as(app, admin).patch(`/users/${owner.id}`, { role: ROLE.MEMBER }), { code: 'UNAUTHORIZED_PRINCIPAL', msg: 'Must be an organization owner' })
    expectSuccess(t, await as(app, admin).patch(`/users/${target.id}`, { role: ROLE.ADMIN }))
    expectSuccess(t, await as(app, owner).patch(`/users/${target.id}`, { role: ROLE.OWNER }))
    t.equal((await fx.refresh(target)).role, ROLE.OWNER)
    expectSuccess(t, await as(app, owner).patch(`/users/${target.id}`, { role: ROLE.MEMBER }))
    t.equal((await fx.refresh(target)).role, ROLE.MEMBER)
  })

  t.test('refuses to demote the only owner', async (t) => {
    const res = await as(app, owner).patch(`/users/${owner.id}`, { role: ROLE.ADMIN, full_name: 'Renamed Owner' })
    expectError(t, res, { code: 'BAD_REQUEST', msg: 'The owner permission cannot be removed from the only organization owner.' })
    const row = await fx.refresh(owner)
    t.equal(row.role, ROLE.OWNER)
    t.equal(row.fullName, owner.fullName, 'the name did not change either')
  })

  t.test('sets custom profile data, sending the custom_profile_field form', async (t) => {
    const target = await fx.newUser()
    const fieldId = expectSuccess(t, await as(app, admin).post('/realm/profile_fields', { name: 'Desk', field_type: 1 })).id as number
    const events = await captureEvents(app, member, () => as(app, admin).patch(`/users/${target.id}`, { profile_data: [{ id: fieldId, value: 'B12' }] }), REALM_USER)
    t.match(events, [{ type: 'realm_user', op: 'update', person: { user_id: target.id, custom_profile_field: { id: fieldId, value: 'B12' } } }])
    const user = expectSuccess(t, await as(app, member).get(`/users/${target.id}`, { include_custom_profile_fields: true })).user as Body
    t.equal(user.profile_data[String(fieldId)].value, 'B12')
  })

  t.test('changes nothing when one profile field is refused', async (t) => {
    const target = await fx.newUser({ fullName: 'Steady Name' })
    const res = await as(app, admin).patch(`/users/${target.id}`, { full_name: 'Other Name', role: ROLE.MODERATOR, profile_data: [{ id: 999999, value: 'x' }] })
    expectError(t, res, { code: 'BAD_REQUEST', msg: 'Field id 999999 not found.' })
    const row = await fx.refresh(target)
    t.equal(row.fullName, 'Steady Name')
    t.equal(row.role, ROLE.MEMBER)
  })

  t.test('tells a promoted user which real addresses it now sees, and a demoted one which it lost', async (t) => {
    const private_ = await fx.newUser({ fullName: 'Private Person' })
    expectSuccess(t, await as(app, private_).patch('/settings', { email_address_visibility: 3 }))
    const target = await fx.newUser()
    const promoted = await captureEvents(app, target, () => as(app, owner).patch(`/users/${target.id}`, { role: ROLE.ADMIN }), REALM_USER)
    t.match(
      promoted.filter((e) => e.person.user_id === private_.id),
      [{ type: 'realm_user', op: 'update', person: { user_id: private_.id, delivery_email: private_.deliveryEmail } }],
    )
    t.notOk(promoted.some((e) => e.person.user_id === member.id && 'delivery_email' in e.person), 'no event for addresses visible either way')
    const demoted = await captureEvents(app, target, () => as(app, owner).patch(`/users/${target.id}`, { role: ROLE.MEMBER }), REALM_USER)
    t.match(demoted.filter((e) => e.person.user_id === private_.id), [{ person: { user_id: private_.id, delivery_email: null } }])
  })
})

t.test('PATCH /users/{user_id} in a realm that restricts guests', async (t) => {
  const { app, fx, services } = await buildTestApp(t)
  const membersGroup = await services.prisma.userGroup.findFirstOrThrow({ where: { realmId: fx.realm.id, name: 'role:members' } })
  await services.prisma.realm.update({ where: { id: fx.realm.id }, data: { canAccessAllUsersGroupId: membersGroup.id } })
  const stranger = await fx.newUser({ fullName: 'Stranger Danger' })
  await services.prisma.subscription.deleteMany({ where: { userId: stranger.id } })

  t.test('sends nothing to a guest who cannot access the user', async (t) => {
    const { seen, unseen } = await eventsSeenAndUnseen(app, fx.users.member, fx.users.guest, () => as(app, fx.users.admin).patch(`/users/${stranger.id}`, { full_name: 'Renamed Stranger' }), REALM_USER.register)
    t.match(seen, [{ person: { user_id: stranger.id, full_name: 'Renamed Stranger' } }])
    t.same(unseen, [])
  })

  t.test('sends the change to a guest sharing a channel with the user', async (t) => {
    const events = await captureEvents(app, fx.users.guest, () => as(app, fx.users.admin).patch(`/users/${fx.users.otherMember.id}`, { full_name: 'Otto Renamed' }), REALM_USER)
    t.match(events, [{ person: { user_id: fx.users.otherMember.id, full_name: 'Otto Renamed' } }])
  })
})

t.test('DELETE /users/{user_id} and POST /users/{user_id}/reactivate', async (t) => {
  const { app, fx, services } = await buildTestApp(t)
  const { owner, admin, member } = fx.users

  t.test('deactivates a user and their bots, telling everyone with the is_active form', async (t) => {
    const target = await fx.newUser({ password: 'target-password-1' })
    const bot = await fx.newUser({ isBot: true, botOwnerId: target.id, fullName: 'Target Bot' })
    const events = await captureEvents(app, member, () => as(app, admin).delete(`/users/${target.id}`), REALM_USER)
    t.same(events.map(({ id: _id, ...e }) => e), [
      { type: 'realm_user', op: 'update', person: { user_id: target.id, is_active: false } },
      { type: 'realm_user', op: 'update', person: { user_id: bot.id, is_active: false } },
    ])
    t.equal((await userById(app, member, target.id)).is_active, false)
    t.equal((await userById(app, member, bot.id)).is_active, false)
    for (const who of [target, bot]) {
      expectError(t, await as(app, who).get('/users/me'), { code: 'USER_DEACTIVATED', status: 401, msg: 'Account is deactivated' })
    }
    const login = await anon(app, fx).post('/fetch_api_key', { username: target.deliveryEmail, password: 'target-password-1' })
    expectError(t, login, { code: 'USER_DEACTIVATED', status: 401, msg: 'Account is deactivated' })
  })

  t.test('refuses the same deactivation twice, bots, strangers and non-administrators', async (t) => {
    const target = await fx.newUser()
    expectError(t, await as(app, member).delete(`/users/${target.id}`), { code: 'BAD_REQUEST', msg: 'Insufficient permission' })
    expectError(t, await as(app, admin).delete(`/users/${fx.users.bot.id}`), { code: 'BAD_REQUEST', msg: 'No such user' })
    expectError(t, await as(app, admin).delete('/users/999999'), { code: 'BAD_REQUEST', msg: 'No such user' })
    expectSuccess(t, await as(app, admin).delete(`/users/${target.id}`))
    expectError(t, await as(app, admin).delete(`/users/${target.id}`), { code: 'BAD_REQUEST', msg: 'User is deactivated' })
  })

  t.test('lets only owners deactivate owners, and never the only one', async (t) => {
    expectError(t, await as(app, admin).delete(`/users/${owner.id}`), { code: 'UNAUTHORIZED_PRINCIPAL', msg: 'Must be an organization owner' })
    expectError(t, await as(app, owner).delete(`/users/${owner.id}`), { code: 'BAD_REQUEST', msg: 'Cannot deactivate the only organization owner' })
    t.equal((await fx.refresh(owner)).isActive, true)
    const second = await fx.newUser({ role: ROLE.OWNER })
    expectSuccess(t, await as(app, owner).delete(`/users/${second.id}`))
  })

  t.test('reactivates a user with the is_active form; their key works again', async (t) => {
    const target = await fx.newUser()
    expectSuccess(t, await as(app, admin).delete(`/users/${target.id}`))
    const events = await captureEvents(app, member, () => as(app, admin).post(`/users/${target.id}/reactivate`), REALM_USER)
    t.same(events.map(({ id: _id, ...e }) => e), [{ type: 'realm_user', op: 'update', person: { user_id: target.id, is_active: true } }])
    expectSuccess(t, await as(app, target).get('/users/me'))
  })

  t.test("reactivation puts the user back among its channels' subscribers (peer_add, as upstream)", async (t) => {
    const target = await fx.newUser()
    expectSuccess(t, await as(app, target).post('/users/me/subscriptions', { subscriptions: [{ name: fx.streams.design.name }] }))
    expectSuccess(t, await as(app, admin).delete(`/users/${target.id}`))
    const events = await captureEvents(app, member, () => as(app, admin).post(`/users/${target.id}/reactivate`), { register: { event_types: ['subscription'] } })
    t.same(events.map(({ id: _id, ...e }) => e), [
      { type: 'subscription', op: 'peer_add', stream_ids: [fx.streams.general.id], user_ids: [target.id] },
      { type: 'subscription', op: 'peer_add', stream_ids: [fx.streams.design.id], user_ids: [target.id] },
    ])
    const subs = expectSuccess(t, await as(app, member).get('/users/me/subscriptions', { include_subscribers: true })).subscriptions as { stream_id: number; subscribers: number[] }[]
    t.ok(subs.find((s) => s.stream_id === fx.streams.design.id)?.subscribers.includes(target.id), 'listed as a subscriber again')
  })

  t.test('reactivation is for administrators, of inactive users', async (t) => {
    const target = await fx.newUser()
    expectError(t, await as(app, admin).post(`/users/${target.id}/reactivate`), { code: 'BAD_REQUEST', msg: 'User is already active' })
    expectSuccess(t, await as(app, admin).delete(`/users/${target.id}`))
    expectError(t, await as(app, member).post(`/users/${target.id}/reactivate`), { code: 'UNAUTHORIZED_PRINCIPAL', msg: 'Must be an organization administrator' })
    expectError(t, await as(app, admin).post('/users/999999/reactivate'), { code: 'BAD_REQUEST', msg: 'No such user' })
    t.equal((await fx.refresh(target)).isActive, false)
  })

  t.test('reactivating a bot needs can_create_bots_group, or can_create_write_only_bots_group for an incoming-webhook bot (level 344)', async (t) => {
    const system = async (name: string) => (await services.prisma.userGroup.findFirstOrThrow({ where: { realmId: fx.realm.id, name } })).id
    const [owners, admins, members] = await Promise.all(['role:owners', 'role:administrators', 'role:members'].map(system))
    const set = async (setting: string, group: number) => expectSuccess(t, await as(app, owner).patch('/realm', { [setting]: { new: group } }))
    const generic = await fx.newUser({ isBot: true, botOwnerId: member.id, fullName: 'Generic Gone' })
    const webhook = await fx.newUser({ isBot: true, botOwnerId: member.id, fullName: 'Webhook Gone' })
    await services.prisma.user.update({ where: { id: webhook.id }, data: { botType: 2 } })
    await services.prisma.user.updateMany({ where: { id: { in: [generic.id, webhook.id] } }, data: { isActive: false } })
    await set('can_create_bots_group', owners)
    await set('can_create_write_only_bots_group', owners)
    const refused = { code: 'BAD_REQUEST', status: 400, msg: 'Insufficient permission' }
    expectError(t, await as(app, admin).post(`/users/${generic.id}/reactivate`), refused)
    expectError(t, await as(app, admin).post(`/users/${webhook.id}/reactivate`), refused)
    await set('can_create_write_only_bots_group', admins)
    expectError(t, await as(app, admin).post(`/users/${generic.id}/reactivate`), refused)
    expectSuccess(t, await as(app, admin).post(`/users/${webhook.id}/reactivate`))
    t.equal((await fx.refresh(generic)).isActive, false, 'nothing changed for the refused one')
    await set('can_create_bots_group', admins)
    expectSuccess(t, await as(app, admin).post(`/users/${generic.id}/reactivate`))
    await set('can_create_bots_group', members)
    await set('can_create_write_only_bots_group', members)
  })
})

t.test('DELETE /users/me', async (t) => {
  const { app, fx, services } = await buildTestApp(t)

  t.test('deactivates oneself', async (t) => {
    const target = await fx.newUser()
    const events = await captureEvents(app, fx.users.member, () => as(app, target).delete('/users/me'), REALM_USER)
    t.match(events, [{ person: { user_id: target.id, is_active: false } }])
    expectError(t, await as(app, target).get('/users/me'), { code: 'USER_DEACTIVATED', status: 401, msg: 'Account is deactivated' })
  })

  t.test('refuses the only owner', async (t) => {
    const body = expectError(t, await as(app, fx.users.owner).delete('/users/me'), { code: 'CANNOT_DEACTIVATE_LAST_USER', msg: 'Cannot deactivate the only organization owner' })
    t.equal(body.entity, 'organization owner')
    t.equal(body.is_last_owner, true)
  })

  t.test('refuses the only user of the realm', async (t) => {
    await services.prisma.user.updateMany({ where: { realmId: fx.realm.id, isBot: false, id: { not: fx.users.owner.id } }, data: { isActive: false } })
    const body = expectError(t, await as(app, fx.users.owner).delete('/users/me'), { code: 'CANNOT_DEACTIVATE_LAST_USER', msg: 'Cannot deactivate the only user' })
    t.equal(body.entity, 'user')
    t.equal(body.is_last_owner, false)
    t.equal((await fx.refresh(fx.users.owner)).isActive, true)
  })
})

t.test('POST and DELETE /users/me/avatar', async (t) => {
  const { app, fx, services } = await buildTestApp(t)
  const { member, otherMember } = fx.users

  t.test('stores an uploaded image and sends the avatar form', async (t) => {
    const before = await fx.refresh(member)
    let body: Body = {}
    const events = await captureEvents(app, otherMember, async () => {
      body = expectSuccess(t, await postAvatar(app, fx.host, member, [{ name: 'file', fileName: 'me.png', contentType: 'image/png', data: PNG }]))
    }, REALM_USER)
    const after = await fx.refresh(member)
    t.equal(after.avatarSource, 'U')
    t.equal(after.avatarVersion, before.avatarVersion + 1)
    t.match(body.avatar_url, new RegExp(`^/user_avatars/${fx.realm.id}/[0-9a-f]{40}\\.png\\?version=${after.avatarVersion}$`))
    t.same(events.map(({ id: _id, ...e }) => e), [{
      type: 'realm_user',
      op: 'update',
      person: {
        user_id: member.id,
        avatar_source: 'U',
        avatar_url: body.avatar_url,
        avatar_url_medium: String(body.avatar_url).replace('.png?', '-medium.png?'),
        avatar_version: after.avatarVersion,
      },
    }])
    for (const url of [body.avatar_url, events[0]?.person.avatar_url_medium]) {
      const res = await app.inject({ method: 'GET', url: String(url), headers: { host: fx.host } })
      t.equal(res.statusCode, 200)
      t.equal(res.headers['content-type'], 'image/png')
      t.same(res.rawPayload, PNG)
    }
    t.equal((await userById(app, otherMember, member.id)).avatar_url, body.avatar_url)
  })

  t.test('refuses anything but exactly one image', async (t) => {
    const before = await fx.refresh(member)
    expectError(t, await postAvatar(app, fx.host, member, []), { code: 'BAD_REQUEST', msg: 'You must upload exactly one avatar.' })
    const two = [{ name: 'a', fileName: 'a.png', contentType: 'image/png', data: PNG }, { name: 'b', fileName: 'b.png', contentType: 'image/png', data: PNG }]
    // The multipart layer refuses a second file for every endpoint, before the avatar action sees it.
    expectError(t, await postAvatar(app, fx.host, member, two), { code: 'BAD_REQUEST', msg: 'You may only upload one file at a time' })
    const text = [{ name: 'file', fileName: 'x.png', contentType: 'image/png', data: Buffer.from('<html>not an image</html>') }]
    expectError(t, await postAvatar(app, fx.host, member, text), { code: 'BAD_REQUEST', msg: 'Could not decode image; did you upload an image file?' })
    const huge = [{ name: 'file', fileName: 'big.png', contentType: 'image/png', data: Buffer.concat([PNG, Buffer.alloc(5 * 1024 * 1024)]) }]
    expectError(t, await postAvatar(app, fx.host, member, huge), { code: 'BAD_REQUEST', msg: 'Uploaded file is larger than the allowed limit of 5 MiB' })
    t.equal((await fx.refresh(member)).avatarVersion, before.avatarVersion)
  })

  t.test('removes the upload, back to the external avatar', async (t) => {
    const before = await fx.refresh(member)
    const oldUrl = (await userById(app, otherMember, member.id)).avatar_url as string
    let body: Body = {}
    const events = await captureEvents(app, otherMember, async () => {
      body = expectSuccess(t, await as(app, member).delete('/users/me/avatar'))
    }, REALM_USER)
    const version = before.avatarVersion + 1
    t.match(body.avatar_url, /^https:\/\/secure\.gravatar\.com\/avatar\/[0-9a-f]{32}\?d=identicon&version=\d+$/)
    t.match(events, [{ person: { user_id: member.id, avatar_source: 'G', avatar_url: body.avatar_url, avatar_url_medium: /&s=500&version=/, avatar_version: version } }])
    t.equal((await fx.refresh(member)).avatarSource, 'G')
    const gone = await app.inject({ method: 'GET', url: oldUrl, headers: { host: fx.host } })
    t.equal(gone.statusCode, 404)
  })

  t.test('is refused when the realm disables avatar changes', async (t) => {
    await services.prisma.realm.update({ where: { id: fx.realm.id }, data: { avatarChangesDisabled: true } })
    t.teardown(() => services.prisma.realm.update({ where: { id: fx.realm.id }, data: { avatarChangesDisabled: false } }))
    expectError(t, await postAvatar(app, fx.host, member, [{ name: 'f', fileName: 'me.png', contentType: 'image/png', data: PNG }]), {
      code: 'BAD_REQUEST',
      msg: 'Avatar changes are disabled in this organization.',
    })
    expectError(t, await as(app, member).delete('/users/me/avatar'), { code: 'BAD_REQUEST', msg: 'Avatar changes are disabled in this organization.' })
  })
})

t.test('PATCH /bots/{bot_id}', async (t) => {
  const { app, fx } = await buildTestApp(t)
  const { admin, member, otherMember, bot, guest } = fx.users

  t.test('lets the owner hand the bot over, sending the bot_owner_id form', async (t) => {
    let body: Body = {}
    const events = await captureEvents(app, guest, async () => {
      body = expectSuccess(t, await as(app, member).patch(`/bots/${bot.id}`, { bot_owner_id: otherMember.id }))
    }, REALM_USER)
    t.same(events.map(({ id: _id, ...e }) => e), [{ type: 'realm_user', op: 'update', person: { user_id: bot.id, bot_owner_id: otherMember.id } }])
    t.equal(body.bot_owner, otherMember.email)
    t.equal(body.full_name, bot.fullName)
    t.equal((await userById(app, admin, bot.id)).bot_owner_id, otherMember.id)
  })

  t.test('refuses someone who neither owns the bot nor administers the realm', async (t) => {
    expectError(t, await as(app, member).patch(`/bots/${bot.id}`, { bot_owner_id: member.id }), { code: 'BAD_REQUEST', msg: 'Insufficient permission' })
    t.equal((await fx.refresh(bot)).botOwnerId, otherMember.id)
  })

  t.test('lets an administrator rename and reassign the bot', async (t) => {
    const events = await captureEvents(app, member, () => as(app, admin).patch(`/bots/${bot.id}`, { full_name: 'Robo Renamed', bot_owner_id: member.id }), REALM_USER)
    t.match(events, [{ person: { user_id: bot.id, full_name: 'Robo Renamed' } }, { person: { user_id: bot.id, bot_owner_id: member.id } }])
  })

  t.test('refuses unknown, deactivated and bot owners, changing nothing', async (t) => {
    const gone = await fx.newUser()
    expectSuccess(t, await as(app, admin).delete(`/users/${gone.id}`))
    const cases: [number, string][] = [
      [999999, 'Failed to change owner, no such user'],
      [gone.id, 'Failed to change owner, user is deactivated'],
      [fx.notificationBot.id, "Failed to change owner, bots can't own other bots"],
    ]
    for (const [ownerId, msg] of cases) {
      expectError(t, await as(app, admin).patch(`/bots/${bot.id}`, { full_name: 'Never Applied', bot_owner_id: ownerId }), { code: 'BAD_REQUEST', msg })
    }
    const row = await fx.refresh(bot)
    t.equal(row.fullName, 'Robo Renamed')
    t.equal(row.botOwnerId, member.id)
  })

  t.test('answers No such bot for a human or unknown ID', async (t) => {
    expectError(t, await as(app, admin).patch(`/bots/${member.id}`, { bot_owner_id: admin.id }), { code: 'BAD_REQUEST', msg: 'No such bot' })
    expectError(t, await as(app, admin).patch('/bots/999999', { bot_owner_id: admin.id }), { code: 'BAD_REQUEST', msg: 'No such bot' })
    expectError(t, await as(app, admin).patch(`/bots/${bot.id}`, { bot_owner_id: 'me' }), { code: 'BAD_REQUEST', msg: /bot_owner_id/ })
  })

  t.test('changes the bot role within the actor rights', async (t) => {
    expectError(t, await as(app, member).patch(`/bots/${bot.id}`, { role: ROLE.ADMIN }), { code: 'UNAUTHORIZED_PRINCIPAL', msg: 'Must be an organization administrator' })
    expectError(t, await as(app, admin).patch(`/bots/${bot.id}`, { role: ROLE.OWNER }), { code: 'UNAUTHORIZED_PRINCIPAL', msg: 'Must be an organization owner' })
    const events = await captureEvents(app, otherMember, () => as(app, admin).patch(`/bots/${bot.id}`, { role: ROLE.MODERATOR }), REALM_USER)
    t.match(events, [{ person: { user_id: bot.id, role: ROLE.MODERATOR } }])
    t.notOk(bodyOf(await as(app, admin).get(`/users/${bot.id}`)).user.is_admin)
  })
})

t.test('a new bot owner leaves the bot its channels, even those the owner is not in (level 359)', async (t) => {
  const { app, fx, services } = await buildTestApp(t)
  const { admin, member, otherMember, bot } = fx.users
  expectSuccess(t, await as(app, admin).post('/users/me/subscriptions', { subscriptions: [{ name: 'bot den' }], invite_only: true, principals: [bot.id] }))
  const den = await services.prisma.stream.findFirstOrThrow({ where: { realmId: fx.realm.id, name: 'bot den' } })
  t.notOk(await services.prisma.subscription.findFirst({ where: { streamId: den.id, userId: { in: [member.id, otherMember.id] }, active: true } }), 'neither owner is subscribed')
  expectSuccess(t, await as(app, admin).patch(`/bots/${bot.id}`, { bot_owner_id: otherMember.id }))
  t.ok(await services.prisma.subscription.findFirst({ where: { streamId: den.id, userId: bot.id, active: true } }), 'the bot is still subscribed')
})
