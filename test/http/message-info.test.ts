import t from 'tap'
import { buildTestApp, makeFixture } from '../support/app.js'
import { as } from '../support/client.js'
import { expectError, expectSuccess } from '../support/expect.js'
import { messageAs, send, sendTo } from './conversation-support.js'

t.test('POST /messages/render', async (t) => {
  const { app, fx, services } = await buildTestApp(t)
  const { member, otherMember } = fx.users

  t.test('renders as a sent message renders, mentions resolved in the user’s organization', async (t) => {
    const content = `**hi** @**${otherMember.fullName}** #**design** :smile:`
    const body = expectSuccess(t, await as(app, member).post('/messages/render', { content }))
    t.same(Object.keys(body).sort(), ['msg', 'rendered', 'result'])
    t.match(body.rendered, `data-user-id="${otherMember.id}"`)
    const id = await sendTo(t, app, member, 'general', 'render', content)
    t.equal(body.rendered, (await messageAs(t, app, member, id)).content)
    const stranger = (await makeFixture(services)).users.member
    const elsewhere = expectSuccess(t, await as(app, stranger).post('/messages/render', { content: `@**${otherMember.fullName}**` })).rendered
    t.notMatch(elsewhere, `data-user-id="${otherMember.id}"`, 'another organization’s users are not mentioned')
  })

  t.test('topic and message links (levels 319, 347): a topic link names its first message with /with/, a message link /near/', async (t) => {
    const { general, secret } = fx.streams
    const first = await sendTo(t, app, otherMember, 'general', 'Linked Topic', 'one')
    await sendTo(t, app, otherMember, 'general', 'linked topic', 'two')
    const render = async (content: string) => expectSuccess(t, await as(app, member).post('/messages/render', { content })).rendered as string
    t.equal(
      await render('#**general>linked topic**'),
      `<p><a class="stream-topic" data-stream-id="${general.id}" href="/#narrow/channel/${general.id}-general/topic/linked.20topic/with/${first}">#general &gt; linked topic</a></p>`,
      'the first message, topics compared without case',
    )
    t.equal(
      await render('#**general>nobody here**'),
      `<p><a class="stream-topic" data-stream-id="${general.id}" href="/#narrow/channel/${general.id}-general/topic/nobody.20here">#general &gt; nobody here</a></p>`,
      'a topic without messages: no with',
    )
    t.equal(
      await render(`#**general>linked topic@${first}**`),
      `<p><a class="message-link" href="/#narrow/channel/${general.id}-general/topic/linked.20topic/near/${first}">#general &gt; linked topic @ 💬</a></p>`,
    )
    // secret does not share its history: only messages the sender received count.
    const before = await sendTo(t, app, fx.users.owner, 'secret', 'old', 'before')
    const mine = await sendTo(t, app, member, 'secret', 'old', 'mine')
    t.ok(before < mine)
    t.match(await render('#**secret>old**'), `href="/#narrow/channel/${secret.id}-secret/topic/old/with/${before}"`, 'member received both: the first')
    const id = await sendTo(t, app, member, 'general', 'render', '#**general>linked topic**')
    t.match((await messageAs(t, app, member, id)).content, `/with/${first}"`, 'a sent message renders it too')
  })

  t.test('nothing is stored or sent', async (t) => {
    const before = await services.prisma.message.count({ where: { realmId: fx.realm.id } })
    expectSuccess(t, await as(app, member).post('/messages/render', { content: 'draft' }))
    t.equal(await services.prisma.message.count({ where: { realmId: fx.realm.id } }), before)
  })

  t.test('content is required and bounded', async (t) => {
    expectError(t, await as(app, member).post('/messages/render', {}), { code: 'REQUEST_VARIABLE_MISSING', status: 400, msg: "Missing 'content' argument" })
    expectError(t, await as(app, member).post('/messages/render', { content: 'x'.repeat(10001) }), {
      code: 'BAD_REQUEST', status: 400, msg: 'content is too long (limit: 10000 characters)',
    })
    t.equal(expectSuccess(t, await as(app, member).post('/messages/render', { content: '' })).rendered, '')
  })
})

t.test('GET /messages/matches_narrow', async (t) => {
  const { app, fx, services } = await buildTestApp(t)
  const { owner, member, otherMember } = fx.users

  t.test('answers the given messages the user received that match, with their search fields', async (t) => {
    const viewer = await fx.newUser()
    const old = await sendTo(t, app, owner, 'design', 'fruit', 'pineapple from before') // viewer is not subscribed to design
    const a = await sendTo(t, app, owner, 'general', 'fruit <3', 'I like **pineapple**')
    const b = await sendTo(t, app, owner, 'general', 'fruit', 'I like apples')
    const dm = await send(t, app, owner, { type: 'direct', to: JSON.stringify([viewer.id]), content: 'pineapple?' })
    const hidden = await sendTo(t, app, member, 'secret', 'fruit', 'pineapple in secret')
    const ids = [a, b, dm, old, hidden, 999999999]
    const body = expectSuccess(t, await as(app, viewer).get('/messages/matches_narrow', { msg_ids: ids, narrow: [{ operator: 'search', operand: 'pineapple' }] }))
    t.same(body, {
      result: 'success',
      msg: '',
      messages: {
        [a]: { match_content: '<p>I like <strong>pineapple</strong></p>', match_subject: 'fruit &lt;3' },
        [dm]: { match_content: '<p>pineapple?</p>', match_subject: '' },
      },
    })
    const inChannel = expectSuccess(t, await as(app, viewer).get('/messages/matches_narrow', { msg_ids: ids, narrow: [['channel', 'general']] }))
    t.same(Object.keys(inChannel.messages).map(Number).sort((x, y) => x - y), [a, b])
    const all = expectSuccess(t, await as(app, viewer).get('/messages/matches_narrow', { msg_ids: ids, narrow: [] }))
    t.same(Object.keys(all.messages).map(Number).sort((x, y) => x - y), [a, b, dm])
    for (const op of ['pm_with', 'pm-with']) {
      const dms = expectSuccess(t, await as(app, viewer).get('/messages/matches_narrow', { msg_ids: ids, narrow: [[op, owner.deliveryEmail]] }))
      t.same(Object.keys(dms.messages).map(Number), [dm], op)
    }
    const group = await send(t, app, owner, { type: 'direct', to: JSON.stringify([viewer.id, member.id]), content: 'all three' })
    for (const op of ['group_pm_with', 'group-pm-with']) {
      const groups = expectSuccess(t, await as(app, viewer).get('/messages/matches_narrow', { msg_ids: [...ids, group], narrow: [[op, owner.deliveryEmail]] }))
      t.same(Object.keys(groups.messages).map(Number), [group], `${op}: group conversations including the user, not the one-to-one one`)
    }
    const none = expectSuccess(t, await as(app, otherMember).get('/messages/matches_narrow', { msg_ids: [], narrow: [] }))
    t.same(none.messages, {})
  })

  t.test('never crosses organizations', async (t) => {
    const id = await sendTo(t, app, owner, 'general', 'x', 'pineapple')
    const stranger = (await makeFixture(services)).users.member
    t.same(expectSuccess(t, await as(app, stranger).get('/messages/matches_narrow', { msg_ids: [id], narrow: [] })).messages, {})
  })

  t.test('bad input names the parameter', async (t) => {
    expectError(t, await as(app, member).get('/messages/matches_narrow', { narrow: [] }), { code: 'REQUEST_VARIABLE_MISSING', msg: "Missing 'msg_ids' argument" })
    expectError(t, await as(app, member).get('/messages/matches_narrow', { msg_ids: [1] }), { code: 'REQUEST_VARIABLE_MISSING', msg: "Missing 'narrow' argument" })
    const tooMany = Array.from({ length: 5001 }, (_, i) => i + 1)
    t.match(expectError(t, await as(app, member).get('/messages/matches_narrow', { msg_ids: tooMany, narrow: [] }), { code: 'BAD_REQUEST', status: 400 }).msg, /msg_ids/)
    t.match(expectError(t, await as(app, member).get('/messages/matches_narrow', { msg_ids: '[1,', narrow: [] }), { code: 'BAD_REQUEST' }).msg, /msg_ids/)
    t.match(expectError(t, await as(app, member).get('/messages/matches_narrow', { msg_ids: ['a'], narrow: [] }), { code: 'BAD_REQUEST' }).msg, /msg_ids/)
    expectError(t, await as(app, member).get('/messages/matches_narrow', { msg_ids: [1], narrow: [{ operator: 'channel', operand: 'no such channel' }] }), {
      code: 'BAD_NARROW', status: 400, msg: 'Invalid narrow operator: unknown channel no such channel',
    })
  })
})

t.test('GET /messages/{id}/read_receipts', async (t) => {
  const { app, fx, services } = await buildTestApp(t)
  const { owner, admin, member, otherMember, guest, bot, moderator } = fx.users
  const prisma = services.prisma
  const read = (user: typeof member, id: number) => as(app, user).post('/messages/flags', { messages: [id], op: 'add', flag: 'read' })
  const receipts = async (user: typeof member, id: number) => expectSuccess(t, await as(app, user).get(`/messages/${id}/read_receipts`)).user_ids

  t.test('lists who read it, never the sender; bots count', async (t) => {
    await prisma.subscription.create({ data: { userId: bot.id, streamId: fx.streams.general.id, color: '#76ce90' } })
    const id = await sendTo(t, app, member, 'general', 'rr', 'did you read this?')
    for (const u of [otherMember, owner, bot]) expectSuccess(t, await read(u, id))
    t.same(expectSuccess(t, await as(app, member).get(`/messages/${id}/read_receipts`)), { result: 'success', msg: '', user_ids: [owner.id, otherMember.id, bot.id].sort((x, y) => x - y) })
    expectSuccess(t, await read(member, id))
    t.same(await receipts(otherMember, id), [owner.id, otherMember.id, bot.id].sort((x, y) => x - y))
    expectSuccess(t, await as(app, owner).post('/messages/flags', { messages: [id], op: 'remove', flag: 'read' }))
    t.same(await receipts(member, id), [otherMember.id, bot.id].sort((x, y) => x - y), 'marking unread withdraws the receipt')
  })

  t.test('leaves out users who turned receipts off, deactivated users, and muting in either direction', async (t) => {
    const id = await sendTo(t, app, owner, 'general', 'rr2', 'x')
    const quiet = await fx.newUser()
    const gone = await fx.newUser()
    for (const u of [admin, moderator, otherMember, quiet, gone]) expectSuccess(t, await read(u, id))
    expectSuccess(t, await as(app, quiet).patch('/settings', { send_read_receipts: false }))
    await prisma.user.update({ where: { id: gone.id }, data: { isActive: false } })
    t.same(await receipts(member, id), [admin.id, moderator.id, otherMember.id].sort((x, y) => x - y))
    expectSuccess(t, await as(app, otherMember).post(`/users/me/muted_users/${member.id}`))
    expectSuccess(t, await as(app, member).post(`/users/me/muted_users/${admin.id}`))
    t.same(await receipts(member, id), [moderator.id])
    t.same(await receipts(owner, id), [admin.id, moderator.id, otherMember.id].sort((x, y) => x - y), 'others still see them')
  })

  t.test('needs access to the message, then the organization setting', async (t) => {
    const secret = await sendTo(t, app, member, 'secret', 'x', 'x')
    const design = await sendTo(t, app, member, 'design', 'x', 'x')
    const invalid = { code: 'BAD_REQUEST', status: 400, msg: 'Invalid message(s)' }
    expectError(t, await as(app, otherMember).get(`/messages/${secret}/read_receipts`), invalid)
    expectError(t, await as(app, guest).get(`/messages/${design}/read_receipts`), invalid)
    expectError(t, await as(app, member).get('/messages/999999999/read_receipts'), invalid)
    const stranger = (await makeFixture(services)).users.member
    expectError(t, await as(app, stranger).get(`/messages/${design}/read_receipts`), invalid)
    t.match(expectError(t, await as(app, member).get('/messages/abc/read_receipts'), { code: 'BAD_REQUEST' }).msg, /message_id/)
    expectSuccess(t, await as(app, otherMember).get(`/messages/${design}/read_receipts`))

    await prisma.realm.update({ where: { id: fx.realm.id }, data: { enableReadReceipts: false } })
    t.teardown(() => prisma.realm.update({ where: { id: fx.realm.id }, data: { enableReadReceipts: true } }))
    expectError(t, await as(app, member).get(`/messages/${design}/read_receipts`), { code: 'BAD_REQUEST', status: 400, msg: 'Read receipts are disabled in this organization.' })
    expectError(t, await as(app, otherMember).get(`/messages/${secret}/read_receipts`), invalid)
  })
})
