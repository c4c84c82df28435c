// Custom emoji: GET /realm/emoji, POST/DELETE /realm/emoji/{emoji_name},
// the images at source_url, realm_emoji events and register state, and
// reactions with reaction_type realm_emoji.
import t from 'tap'
import sharp from 'sharp'
import { buildTestApp } from '../support/app.js'
import { realmSetter } from '../support/realm-settings.js'
import { as } from '../support/client.js'
import { expectError, expectSuccess } from '../support/expect.js'
import { captureEvents } from '../support/events.js'
import { sendMultipart, TINY_GIF, TINY_PNG } from '../support/multipart.js'
import { messageAs, sendTo } from './conversation-support.js'
import type { FastifyInstance } from 'fastify'
import type { User } from '../../src/db/index.js'

const addEmoji = (app: FastifyInstance, user: User, name: string, data: Buffer = TINY_PNG, contentType = 'image/png') =>
  sendMultipart(app, user, 'POST', `/realm/emoji/${encodeURIComponent(name)}`, [{ name: 'filename', fileName: 'emoji.png', contentType, data }])

t.test('custom emoji', async (t) => {
  const { app, fx, services } = await buildTestApp(t)
  const { owner, admin, member, otherMember, guest, bot } = fx.users

  t.test('a member adds one; everyone is told the whole realm_emoji dict; the image is served', async (t) => {
    const events = await captureEvents(app, otherMember, async () => expectSuccess(t, await addEmoji(app, member, 'party parrot')))
    const row = await services.prisma.realmEmoji.findFirstOrThrow({ where: { realmId: fx.realm.id, name: 'party_parrot' } })
    const dict = {
      id: String(row.id),
      name: 'party_parrot',
      source_url: `/user_avatars/${fx.realm.id}/emoji/images/${row.fileName}`,
      still_url: null,
      deactivated: false,
      author_id: member.id,
    }
    t.same(events, [{ type: 'realm_emoji', op: 'update', realm_emoji: { [row.id]: dict }, id: events[0]?.id }])
    t.same(expectSuccess(t, await as(app, guest).get('/realm/emoji')).emoji, { [row.id]: dict }, 'the list is public to the realm, guests included')
    t.same(expectSuccess(t, await as(app, member).post('/register', { fetch_event_types: ['realm_emoji'] })).realm_emoji, { [row.id]: dict })

    const image = await app.inject({ method: 'GET', url: dict.source_url, headers: { host: fx.host } })
    t.equal(image.statusCode, 200)
    t.equal(image.headers['content-type'], 'image/png')
    t.same(image.rawPayload, TINY_PNG)
    const other = await app.inject({ method: 'GET', url: `/user_avatars/${fx.realm.id}/emoji/images/000000000000000000000000.png`, headers: { host: fx.host } })
    t.equal(other.statusCode, 404)
  })

  t.test('reactions and statuses use it by name or by id; deactivated emoji are refused for new uses', async (t) => {
    expectSuccess(t, await addEmoji(app, member, 'shipit', TINY_GIF, 'image/gif'))
    const row = await services.prisma.realmEmoji.findFirstOrThrow({ where: { realmId: fx.realm.id, name: 'shipit' } })
    const id = await sendTo(t, app, member, 'general', 'custom', 'ship it?')
    expectSuccess(t, await as(app, member).post(`/messages/${id}/reactions`, { emoji_name: 'shipit' }))
    expectSuccess(t, await as(app, owner).post(`/messages/${id}/reactions`, { emoji_name: 'shipit', emoji_code: String(row.id), reaction_type: 'realm_emoji' }))
    t.match((await messageAs(t, app, owner, id)).reactions, [
      { emoji_name: 'shipit', emoji_code: String(row.id), reaction_type: 'realm_emoji', user_id: member.id },
      { emoji_name: 'shipit', emoji_code: String(row.id), reaction_type: 'realm_emoji', user_id: owner.id },
    ])
    const fresh = await sendTo(t, app, member, 'general', 'custom', 'no reactions yet')
    expectError(t, await as(app, admin).post(`/messages/${fresh}/reactions`, { emoji_name: 'other', emoji_code: String(row.id), reaction_type: 'realm_emoji' }), {
      code: 'BAD_REQUEST',
      msg: 'Invalid custom emoji name.',
    })
    expectError(t, await as(app, admin).post(`/messages/${fresh}/reactions`, { emoji_name: 'shipit', emoji_code: '999999', reaction_type: 'realm_emoji' }), {
      code: 'BAD_REQUEST',
      msg: 'Invalid custom emoji.',
    })
    expectSuccess(t, await as(app, otherMember).post('/users/me/status', { emoji_name: 'shipit' }))
    t.match(expectSuccess(t, await as(app, owner).get(`/users/${otherMember.id}/status`)).status, { emoji_name: 'shipit', emoji_code: String(row.id), reaction_type: 'realm_emoji' })

    const events = await captureEvents(app, owner, async () => expectSuccess(t, await as(app, member).delete('/realm/emoji/shipit')))
    t.match(events, [{ type: 'realm_emoji', op: 'update', realm_emoji: { [row.id]: { name: 'shipit', deactivated: true } } }])
    expectError(t, await as(app, admin).post(`/messages/${fresh}/reactions`, { emoji_name: 'shipit', emoji_code: String(row.id), reaction_type: 'realm_emoji' }), {
      code: 'BAD_REQUEST',
      msg: 'This custom emoji has been deactivated.',
    })
    expectError(t, await as(app, admin).post(`/messages/${fresh}/reactions`, { emoji_name: 'shipit' }), { code: 'BAD_REQUEST', msg: "Emoji 'shipit' does not exist" })
    expectSuccess(t, await as(app, admin).post(`/messages/${id}/reactions`, { emoji_name: 'shipit', emoji_code: String(row.id), reaction_type: 'realm_emoji' }))
    t.equal((await messageAs(t, app, owner, id)).reactions.length, 3, 'old reactions stay, and may still be voted for')
    t.match(expectSuccess(t, await as(app, owner).get('/realm/emoji')).emoji[row.id], { deactivated: true }, 'still listed, deactivated')
    expectSuccess(t, await addEmoji(app, otherMember, 'shipit'))
    t.equal(await services.prisma.realmEmoji.count({ where: { realmId: fx.realm.id, name: 'shipit' } }), 2, 'the name is free again')
  })

  t.test('names follow upstream rules; each error names the problem', async (t) => {
    const cases: [string, string][] = [
      ['Capital', 'Emoji names must contain only lowercase English letters, digits, spaces, dashes, and underscores.'],
      ['émoji', 'Emoji names must contain only lowercase English letters, digits, spaces, dashes, and underscores.'],
      ['dots.here', 'Emoji names must contain only lowercase English letters, digits, spaces, dashes, and underscores.'],
      ['trailing_', 'Emoji names must end with either a letter or digit.'],
      ['trailing-', 'Emoji names must end with either a letter or digit.'],
    ]
    for (const [name, msg] of cases) expectError(t, await addEmoji(app, member, name), { code: 'BAD_REQUEST', msg })
    expectError(t, await addEmoji(app, member, ' '), { code: 'BAD_REQUEST', msg: 'Emoji name is missing' })
    expectSuccess(t, await addEmoji(app, member, 'ok-2_go'))
    expectError(t, await addEmoji(app, otherMember, 'ok-2_go'), { code: 'BAD_REQUEST', msg: 'A custom emoji with this name already exists.' })
    expectError(t, await addEmoji(app, member, 'octopus'), { code: 'BAD_REQUEST', msg: 'Only administrators can override built-in emoji.' })
    expectSuccess(t, await addEmoji(app, admin, 'octopus'))
    t.equal(await services.prisma.realmEmoji.count({ where: { realmId: fx.realm.id, name: { in: ['Capital', 'trailing_', 'trailing-'] } } }), 0, 'nothing half-written')
  })

  t.test('an animated emoji gets a still image: its first frame as PNG, at still_url', async (t) => {
    const frame = (background: string) => sharp({ create: { width: 4, height: 4, channels: 4, background } }).png().toBuffer()
    const animated = await sharp([await frame('#ff0000'), await frame('#0000ff')], { join: { animated: true } }).gif({ loop: 0 }).toBuffer()
    const events = await captureEvents(app, otherMember, async () => expectSuccess(t, await addEmoji(app, member, 'blinker', animated, 'image/gif')))
    const row = await services.prisma.realmEmoji.findFirstOrThrow({ where: { realmId: fx.realm.id, name: 'blinker' } })
    const stillUrl = `/user_avatars/${fx.realm.id}/emoji/images/still/${row.fileName.replace(/\.gif$/, '')}.png`
    t.match(events, [{ type: 'realm_emoji', op: 'update', realm_emoji: { [row.id]: { source_url: `/user_avatars/${fx.realm.id}/emoji/images/${row.fileName}`, still_url: stillUrl } } }])

    const still = await app.inject({ method: 'GET', url: stillUrl, headers: { host: fx.host } })
    t.equal(still.statusCode, 200)
    t.equal(still.headers['content-type'], 'image/png')
    const { data, info } = await sharp(still.rawPayload).raw().toBuffer({ resolveWithObject: true })
    t.same([info.width, info.height, info.pages ?? 1], [4, 4, 1], 'one frame, the size of the original')
    t.same([...data.subarray(0, 4)], [255, 0, 0, 255], 'the first frame (red), not the second')
    const missing = await app.inject({ method: 'GET', url: `/user_avatars/${fx.realm.id}/emoji/images/still/000000000000000000000000.png`, headers: { host: fx.host } })
    t.equal(missing.statusCode, 404)

    // A file that claims to be animated but cannot be decoded is refused whole.
    const broken = Buffer.concat([Buffer.from('GIF89a'), Buffer.alloc(7), Buffer.from('!\xff\x0bNETSCAPE2.0', 'latin1'), Buffer.alloc(16)])
    expectError(t, await addEmoji(app, member, 'broken_blinker', broken, 'image/gif'), { code: 'BAD_REQUEST', msg: 'Invalid image format' })
    t.equal(await services.prisma.realmEmoji.count({ where: { realmId: fx.realm.id, name: 'broken_blinker' } }), 0)
  })

  t.test('files: exactly one real image of at most 5 MiB', async (t) => {
    expectError(t, await sendMultipart(app, member, 'POST', '/realm/emoji/nofile', [{ name: 'x', data: 'y' }]), {
      code: 'BAD_REQUEST',
      msg: 'You must upload exactly one file.',
    })
    expectError(
      t,
      await sendMultipart(app, member, 'POST', '/realm/emoji/twofiles', [
        { name: 'a', fileName: 'a.png', contentType: 'image/png', data: TINY_PNG },
        { name: 'b', fileName: 'b.png', contentType: 'image/png', data: TINY_PNG },
      ]),
      { code: 'BAD_REQUEST', msg: 'You may only upload one file at a time' },
    )
    expectError(t, await addEmoji(app, member, 'notimage', Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"/>'), 'image/png'), {
      code: 'BAD_REQUEST',
      msg: 'Invalid image format',
    })
    const big = Buffer.concat([TINY_PNG, Buffer.alloc(5 * 1024 * 1024)])
    expectError(t, await addEmoji(app, member, 'huge', big), { code: 'BAD_REQUEST', msg: 'Uploaded file is larger than the allowed limit of 5 MiB' })
    t.equal(await services.prisma.realmEmoji.count({ where: { realmId: fx.realm.id, name: { in: ['nofile', 'twofiles', 'notimage', 'huge'] } } }), 0)
  })

  t.test('who may add: members by default, the policy, never guests or bots', async (t) => {
    expectError(t, await addEmoji(app, guest, 'guesty'), { code: 'BAD_REQUEST', msg: 'Not allowed for guest users' })
    expectError(t, await addEmoji(app, bot, 'botty'), { code: 'BAD_REQUEST', msg: 'This endpoint does not accept bot requests.' })
    await realmSetter(app, owner, services.prisma, fx.realm.id)({ addCustomEmojiPolicy: 2 })
    const strict = await addEmoji(app, member, 'adminonly')
    await realmSetter(app, owner, services.prisma, fx.realm.id)({ addCustomEmojiPolicy: 1 })
    expectError(t, strict, { code: 'BAD_REQUEST', msg: 'Insufficient permission' })
  })

  t.test('who may deactivate: administrators, or the author; unknown names are a 404', async (t) => {
    expectSuccess(t, await addEmoji(app, member, 'my_own'))
    expectError(t, await as(app, otherMember).delete('/realm/emoji/my_own'), { code: 'BAD_REQUEST', msg: 'Must be an organization administrator or emoji author' })
    expectError(t, await as(app, guest).delete('/realm/emoji/my_own'), { code: 'BAD_REQUEST', msg: 'Must be an organization administrator or emoji author' })
    expectSuccess(t, await as(app, admin).delete('/realm/emoji/my_own'))
    expectError(t, await as(app, admin).delete('/realm/emoji/my_own'), { code: 'BAD_REQUEST', status: 404, msg: "Emoji 'my_own' does not exist" })
    expectError(t, await as(app, admin).delete('/realm/emoji/never_was'), { code: 'BAD_REQUEST', status: 404, msg: "Emoji 'never_was' does not exist" })
  })

  t.test('another organization sees none of it', async (t) => {
    const other = await buildTestApp(t)
    expectSuccess(t, await addEmoji(app, member, 'ours'))
    const row = await services.prisma.realmEmoji.findFirstOrThrow({ where: { realmId: fx.realm.id, name: 'ours' } })
    const stranger = other.fx.users.owner
    t.same(expectSuccess(t, await as(other.app, stranger).get('/realm/emoji')).emoji, {})
    expectError(t, await as(other.app, stranger).delete('/realm/emoji/ours'), { code: 'BAD_REQUEST', status: 404 })
    const image = await other.app.inject({ method: 'GET', url: `/user_avatars/${fx.realm.id}/emoji/images/${row.fileName}`, headers: { host: other.fx.host } })
    t.equal(image.statusCode, 404)
    const id = await sendTo(t, other.app, stranger, 'general', 'x', 'y')
    expectError(t, await as(other.app, stranger).post(`/messages/${id}/reactions`, { emoji_name: 'ours', emoji_code: String(row.id), reaction_type: 'realm_emoji' }), {
      code: 'BAD_REQUEST',
      msg: 'Invalid custom emoji.',
    })
  })
})
