// GET /avatar/{user_id or email}[/medium]: a redirect to the user's avatar.
import t from 'tap'
import { buildTestApp } from '../support/app.js'
import { basicAuth } from '../support/client.js'
import { expectError } from '../support/expect.js'
import { sendMultipart, TINY_PNG } from '../support/multipart.js'
import { gravatarUrl } from '../../src/present/user.js'
import type { User } from '../../src/db/index.js'

t.test('GET /avatar/{user}', async (t) => {
  const { app, fx, services } = await buildTestApp(t)
  const { owner, member, guest } = fx.users
  const get = (viewer: User | undefined, path: string, host = fx.host) =>
    app.inject({ method: 'GET', url: path, headers: { host, ...(viewer ? { authorization: basicAuth(viewer.deliveryEmail, viewer.apiKey) } : {}) } })

  t.test('redirects to the external avatar, by ID or email, medium at 500 pixels', async (t) => {
    const res = await get(owner, `/avatar/${member.id}`)
    t.equal(res.statusCode, 302)
    t.equal(res.headers.location, gravatarUrl(member.deliveryEmail, member.avatarVersion))
    t.equal((await get(owner, `/avatar/${encodeURIComponent(member.email)}`)).headers.location, gravatarUrl(member.deliveryEmail, member.avatarVersion))
    t.equal((await get(owner, `/avatar/${member.id}/medium`)).headers.location, gravatarUrl(member.deliveryEmail, member.avatarVersion).replace('?d=identicon&', '?d=identicon&s=500&'))
    t.equal((await get(owner, `/avatar/${member.id}?medium=true`)).headers.location, gravatarUrl(member.deliveryEmail, member.avatarVersion).replace('?d=identicon&', '?d=identicon&s=500&'))
  })

  t.test('an uploaded avatar redirects to its file, which is served', async (t) => {
    await sendMultipart(app, member, 'POST', '/users/me/avatar', [{ name: 'file', fileName: 'me.png', contentType: 'image/png', data: TINY_PNG }])
    const fresh = await services.prisma.user.findUniqueOrThrow({ where: { id: member.id } })
    const res = await get(owner, `/avatar/${member.id}`)
    t.equal(res.headers.location, `/user_avatars/${fx.realm.id}/${fresh.avatarHash}.png?version=${fresh.avatarVersion}`)
    t.equal((await get(owner, `/avatar/${member.id}/medium`)).headers.location, `/user_avatars/${fx.realm.id}/${fresh.avatarHash}-medium.png?version=${fresh.avatarVersion}`)
    const image = await get(owner, res.headers.location as string)
    t.equal(image.statusCode, 200)
    t.same(image.rawPayload, TINY_PNG)
  })

  t.test('an unknown user or one of another organization is treated as a new address', async (t) => {
    const other = await buildTestApp(t)
    const stranger = other.fx.users.member
    t.equal((await get(owner, `/avatar/${stranger.id}`)).headers.location, gravatarUrl(String(stranger.id), 1))
    t.equal((await get(owner, '/avatar/nobody@example.org')).headers.location, gravatarUrl('nobody@example.org', 1))
    t.equal((await get(owner, `/avatar/${encodeURIComponent(stranger.email)}`)).headers.location, gravatarUrl(stranger.email, 1))
  })

  t.test('a guest who may not see a user gets the unknown-user image', async (t) => {
    const members = await services.prisma.userGroup.findFirstOrThrow({ where: { realmId: fx.realm.id, name: 'role:members' } })
    await services.prisma.realm.update({ where: { id: fx.realm.id }, data: { canAccessAllUsersGroupId: members.id } })
    t.teardown(async () => {
      const everyone = await services.prisma.userGroup.findFirstOrThrow({ where: { realmId: fx.realm.id, name: 'role:everyone' } })
      await services.prisma.realm.update({ where: { id: fx.realm.id }, data: { canAccessAllUsersGroupId: everyone.id } })
    })
    const stranger = await fx.newUser({ fullName: 'Nobody Known' })
    await services.prisma.subscription.deleteMany({ where: { userId: stranger.id } })
    t.equal((await get(guest, `/avatar/${stranger.id}`)).headers.location, '/static/images/unknown-user-avatar.png')
    t.equal((await get(owner, `/avatar/${stranger.id}`)).headers.location, gravatarUrl(stranger.deliveryEmail, stranger.avatarVersion))
  })

  t.test('needs credentials unless the organization is web-public', async (t) => {
    expectError(t, await get(undefined, `/avatar/${member.id}`), { code: 'UNAUTHORIZED', status: 401 })
    const wrong = await app.inject({ method: 'GET', url: `/avatar/${member.id}`, headers: { host: fx.host, authorization: basicAuth(member.deliveryEmail, 'wrong-key-wrong-key-wrong-key-12') } })
    t.equal(wrong.statusCode, 401)
  })
})
