import t from 'tap'
import { buildTestApp } from '../support/app.js'
import { as } from '../support/client.js'
import { expectError, expectSuccess } from '../support/expect.js'
import type { CapturedBusItem as BusItem } from '../support/events.js'
import type { Services } from '../../src/services.js'
import { busItemsDuring } from '../support/events.js'

const published = async (services: Services, fn: () => Promise<unknown>): Promise<BusItem[]> => (await busItemsDuring(services, fn)).items

t.test('user status', async (t) => {
  const { app, fx, services } = await buildTestApp(t)
  const statusOf = async (viewer = fx.users.owner, userId: number) => expectSuccess(t, await as(app, viewer).get(`/users/${userId}/status`)).status

  t.test('an unset status is an empty object', async (t) => {
    const member = await fx.newUser()
    t.same(await statusOf(fx.users.owner, member.id), {})
  })

  t.test('sets text and a Unicode emoji by name, and tells everyone', async (t) => {
    const member = await fx.newUser()
    const items = await published(services, async () => {
      expectSuccess(t, await as(app, member).post('/users/me/status', { status_text: '  out to lunch ', emoji_name: 'car' }))
    })
    t.same(await statusOf(fx.users.owner, member.id), { status_text: 'out to lunch', emoji_name: 'car', emoji_code: '1f697', reaction_type: 'unicode_emoji' })
    t.equal(items.length, 1)
    t.same(items[0]?.event, { type: 'user_status', user_id: member.id, status_text: 'out to lunch', emoji_name: 'car', emoji_code: '1f697', reaction_type: 'unicode_emoji' })
    t.ok(items[0]?.userIds.includes(fx.users.admin.id))
  })

  t.test('changes only what was passed; an empty string clears', async (t) => {
    const member = await fx.newUser()
    await as(app, member).post('/users/me/status', { status_text: 'busy', emoji_name: 'big_smile' })
    const items = await published(services, async () => {
      expectSuccess(t, await as(app, member).post('/users/me/status', { status_text: '' }))
    })
    t.same(items[0]?.event, { type: 'user_status', user_id: member.id, status_text: '' })
    t.same(await statusOf(fx.users.owner, member.id), { emoji_name: 'big_smile', emoji_code: '1f604', reaction_type: 'unicode_emoji' })
    expectSuccess(t, await as(app, member).post('/users/me/status', { emoji_name: '' }))
    t.same(await statusOf(fx.users.owner, member.id), {})
  })

  t.test('accepts an explicit code and type, the extra emoji and custom emoji', async (t) => {
    const member = await fx.newUser()
    expectSuccess(t, await as(app, member).post('/users/me/status', { emoji_name: 'big_smile', emoji_code: '1f604', reaction_type: 'unicode_emoji' }))
    expectSuccess(t, await as(app, member).post('/users/me/status', { emoji_name: 'zulip' }))
    t.match(await statusOf(fx.users.owner, member.id), { emoji_name: 'zulip', emoji_code: 'zulip', reaction_type: 'service_extra_emoji' })
    const custom = await services.prisma.realmEmoji.create({ data: { realmId: fx.realm.id, name: 'party_parrot', fileName: 'p.gif' } })
    expectSuccess(t, await as(app, member).post('/users/me/status', { emoji_name: 'party_parrot' }))
    t.match(await statusOf(fx.users.owner, member.id), { emoji_name: 'party_parrot', emoji_code: String(custom.id), reaction_type: 'realm_emoji' })
    expectError(t, await as(app, member).post('/users/me/status', { emoji_name: 'parrot', emoji_code: String(custom.id), reaction_type: 'realm_emoji' }), {
      code: 'BAD_REQUEST',
      msg: 'Invalid custom emoji name.',
    })
    await services.prisma.realmEmoji.update({ where: { id: custom.id }, data: { deactivated: true } })
    expectError(t, await as(app, member).post('/users/me/status', { emoji_name: 'party_parrot', emoji_code: String(custom.id), reaction_type: 'realm_emoji' }), {
      code: 'BAD_REQUEST',
      msg: 'This custom emoji has been deactivated.',
    })
  })

  t.test('rejects every invalid request, changing nothing', async (t) => {
    const member = await fx.newUser()
    const cases: [Record<string, unknown>, string][] = [
      [{}, 'Client did not pass any new values.'],
      [{ status_text: 'x'.repeat(61) }, 'status_text is too long (limit: 60 characters)'],
      [{ away: false, emoji_code: '1f604' }, 'Client must pass emoji_name if they pass either emoji_code or reaction_type.'],
      [{ status_text: 'hi', reaction_type: 'unicode_emoji' }, 'Client must pass emoji_name if they pass either emoji_code or reaction_type.'],
      [{ emoji_name: 'no_such_emoji_here' }, "Emoji 'no_such_emoji_here' does not exist"],
      [{ emoji_name: 'big_smile', emoji_code: 'ffff0', reaction_type: 'unicode_emoji' }, 'Invalid emoji code.'],
      [{ emoji_name: 'car', emoji_code: '1f604', reaction_type: 'unicode_emoji' }, 'Invalid emoji name.'],
      [{ emoji_name: 'zulip', emoji_code: 'robot', reaction_type: 'service_extra_emoji' }, 'Invalid emoji code.'],
      [{ emoji_name: 'big_smile', emoji_code: '999999', reaction_type: 'realm_emoji' }, 'Invalid custom emoji.'],
      [{ emoji_name: 'big_smile', emoji_code: '1f604', reaction_type: 'sticker' }, 'Invalid emoji type.'],
    ]
    for (const [params, msg] of cases) {
      expectError(t, await as(app, member).post('/users/me/status', params), { code: 'BAD_REQUEST', status: 400, msg })
    }
    t.same(await statusOf(fx.users.owner, member.id), {})
    t.equal(await services.prisma.userStatus.count({ where: { userId: member.id } }), 0)
  })

  t.test('`away` is the inverse of presence_enabled', async (t) => {
    const member = await fx.newUser()
    const items = await published(services, async () => {
      expectSuccess(t, await as(app, member).post('/users/me/status', { away: true }))
    })
    t.same(await statusOf(fx.users.owner, member.id), { away: true })
    t.equal((await services.prisma.userSettings.findUniqueOrThrow({ where: { userId: member.id } })).presenceEnabled, false)
    t.ok(items.some((i) => i.event.type === 'user_settings' && i.event.property === 'presence_enabled' && i.event.value === false))
    t.ok(items.some((i) => i.event.type === 'user_status' && i.event.away === true))
    expectSuccess(t, await as(app, member).post('/users/me/status', { away: false }))
    t.same(await statusOf(fx.users.owner, member.id), {})
  })

  t.test('GET fails for unknown users, bots and deactivated users', async (t) => {
    expectError(t, await as(app, fx.users.owner).get('/users/999999/status'), { code: 'BAD_REQUEST', msg: 'No such user' })
    expectError(t, await as(app, fx.users.owner).get(`/users/${fx.users.bot.id}/status`), { code: 'BAD_REQUEST', msg: 'No such user' })
    const gone = await fx.newUser()
    await services.prisma.user.update({ where: { id: gone.id }, data: { isActive: false } })
    expectError(t, await as(app, fx.users.owner).get(`/users/${gone.id}/status`), { code: 'BAD_REQUEST', msg: 'User is deactivated' })
  })

  t.test('bots cannot set a status', async (t) => {
    expectError(t, await as(app, fx.users.bot).post('/users/me/status', { status_text: 'beep' }), {
      code: 'BAD_REQUEST',
      msg: 'This endpoint does not accept bot requests.',
    })
  })
})
