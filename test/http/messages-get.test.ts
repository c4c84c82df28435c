import t from 'tap'
import { buildTestApp } from '../support/app.js'
import { as } from '../support/client.js'
import { expectError, expectSuccess, type Body } from '../support/expect.js'
import type { User } from '../../src/db/index.js'
import { FLAG_BITS } from '../../src/domain/flags.js'
import { ROLE } from '../../src/domain/roles.js'

const NEWEST = 10_000_000_000_000_000

t.test('GET /messages and GET /messages/{id}', async (t) => {
  const { app, fx, services } = await buildTestApp(t)
  const { owner, admin, member, otherMember, guest } = fx.users
  const { design, secret } = fx.streams

  await services.prisma.alertWord.create({ data: { userId: otherMember.id, word: 'plan' } })
  const send = async (user: User, params: Record<string, unknown>): Promise<number> =>
    expectSuccess(t, await as(app, user).post('/messages', params)).id as number
  const ch = (to: string, topic: string, content: string) => ({ type: 'stream', to, topic, content })
  const dm = (to: number[], content: string) => ({ type: 'direct', to: JSON.stringify(to), content })

  const m1 = await send(member, ch('general', 'alpha', 'hello world'))
  const m2 = await send(otherMember, ch('general', 'beta', 'check https://example.com/page'))
  const m3 = await send(member, ch('design', 'gamma', 'design talk'))
  const m4 = await send(member, dm([otherMember.id], 'the secret plan'))
  const m5 = await send(member, dm([otherMember.id, admin.id], 'group chat'))
  const m6 = await send(owner, ch('secret', 'hidden', 'private stuff'))
  const m7 = await send(admin, ch('general', '✔ done', 'resolved thing'))
  const m8 = await send(member, ch('general', 'alpha', '@**Otto Other** look'))
  const m9 = await send(otherMember, dm([otherMember.id], 'me only'))
  const m10 = await send(member, ch('general', 'files', 'see [pic](/user_uploads/1/ab/pic.png)'))
  await services.prisma.reaction.create({ data: { messageId: m1, userId: admin.id, emojiName: 'big_smile', emojiCode: '1f604' } })

  const get = (user: User, params: Record<string, unknown>) => as(app, user).get('/messages', { anchor: 'newest', num_before: 100, ...params })
  const ids = async (user: User, narrow: unknown, params: Record<string, unknown> = {}): Promise<number[]> =>
    expectSuccess(t, await get(user, { narrow, ...params })).messages.map((m: Body) => m.id)

  t.test('newest window: the viewer’s own messages, ascending, with flags', async (t) => {
    const body = expectSuccess(t, await get(otherMember, {}))
    t.same(
      body.messages.map((m: Body) => m.id),
      [m1, m2, m4, m5, m7, m8, m9, m10],
    )
    t.equal(body.found_newest, true)
    t.equal(body.found_oldest, true)
    t.equal(body.found_anchor, false)
    t.equal(body.history_limited, false)
    t.equal(body.anchor, NEWEST)
    const first = body.messages[0]
    t.same(first.flags, [])
    t.same(first.reactions, [{ emoji_name: 'big_smile', emoji_code: '1f604', reaction_type: 'unicode_emoji', user_id: admin.id }], 'no user object (level 328)')
    t.equal(first.avatar_url, null, 'client_extavatar defaults to true')
    t.same(body.messages.find((m: Body) => m.id === m8).flags, ['mentioned'])
    t.same(body.messages.find((m: Body) => m.id === m4).flags, ['has_alert_word'])
  })

  t.test('apply_markdown=false and client_extavatar=false', async (t) => {
    const body = expectSuccess(t, await get(otherMember, { narrow: [['id', String(m1)]], apply_markdown: false, client_extavatar: false }))
    t.equal(body.messages[0].content, 'hello world')
    t.equal(body.messages[0].content_type, 'text/x-markdown')
    t.match(body.messages[0].avatar_url, /^https:\/\/secure\.gravatar\.com\/avatar\//)
  })

  t.test('channel narrows include readable history as read and historical', async (t) => {
    const body = expectSuccess(t, await get(otherMember, { narrow: [['channel', 'design']] }))
    t.same(body.messages.map((m: Body) => m.id), [m3])
    t.same(body.messages[0].flags, ['read', 'historical'])
    t.same(await ids(otherMember, [{ operator: 'channel', operand: design.id }]), [m3])
    t.same(await ids(otherMember, [{ operator: 'stream', operand: 'Design' }]), [m3])
    // Private channel without access: nothing, no error.
    t.same(await ids(otherMember, [['channel', 'secret']]), [])
    t.same(await ids(member, [['channel', 'secret']]), [m6])
    // Guests cannot read public channels they are not in.
    t.same(await ids(guest, [['channel', 'design']]), [])
    // A flag term limits the narrow to the viewer's own messages.
    t.same(await ids(otherMember, [['channel', 'design'], ['is', 'unread']]), [])
  })

  t.test('protected history: new subscribers of a private channel see only what they received', async (t) => {
    const late = await fx.newUser({ fullName: 'Late Comer' })
    await services.prisma.subscription.create({ data: { userId: late.id, streamId: secret.id, color: '#ffffff' } })
    t.same(await ids(late, [['channel', 'secret']]), [])
    expectError(t, await as(app, late).get(`/messages/${m6}`), { code: 'BAD_REQUEST', msg: 'Invalid message(s)' })
    const m11 = await send(owner, ch('secret', 'hidden', 'now you see it'))
    t.same(await ids(late, [['channel', 'secret']]), [m11])
  })

  t.test('channels:public', async (t) => {
    const found = await ids(otherMember, [['channels', 'public']])
    t.ok(found.includes(m3))
    t.notOk(found.includes(m6))
    t.notOk(found.includes(m4))
  })

  t.test('topic, sender, id, resolved, has, search', async (t) => {
    t.same(await ids(otherMember, [['channel', 'general'], ['topic', 'ALPHA']]), [m1, m8])
    t.same(await ids(otherMember, [['sender', member.deliveryEmail], ['channel', 'general']]), [m1, m8, m10])
    t.same(await ids(otherMember, [{ operator: 'sender', operand: admin.id }]), [m7])
    t.same(await ids(otherMember, [['id', String(m2)]]), [m2])
    t.same(await ids(otherMember, [['is', 'resolved']]), [m7])
    t.same(await ids(otherMember, [['has', 'link']]), [m2, m10])
    t.same(await ids(otherMember, [['has', 'image']]), [m10])
    t.same(await ids(otherMember, [['has', 'attachment']]), [m10])
    t.same(await ids(otherMember, [['has', 'reaction']]), [m1])
    const search = expectSuccess(t, await get(otherMember, { narrow: [['search', 'PLAN secret']] }))
    t.same(search.messages.map((m: Body) => m.id), [m4])
    t.equal(search.messages[0].match_content, '<p>the secret plan</p>')
    t.equal(search.messages[0].match_subject, '')
    t.same(await ids(otherMember, [['search', 'gamma']]), [], 'only the viewer’s own messages')
    t.same(await ids(member, [['search', 'gamma']]), [m3], 'topics are searched')
  })

  t.test('direct message narrows', async (t) => {
    t.same(await ids(otherMember, [['dm', member.deliveryEmail]]), [m4])
    t.same(await ids(otherMember, [{ operator: 'dm', operand: [member.id] }]), [m4])
    t.same(await ids(otherMember, [['dm', `${member.deliveryEmail},${admin.deliveryEmail}`]]), [m5])
    t.same(await ids(otherMember, [{ operator: 'pm-with', operand: [admin.id, member.id] }]), [m5])
    t.same(await ids(otherMember, [{ operator: 'dm', operand: [otherMember.id] }]), [m9])
    t.same(await ids(otherMember, [{ operator: 'dm-including', operand: admin.id }]), [m5])
    t.same(await ids(otherMember, [{ operator: 'dm-including', operand: member.id }]), [m4, m5])
    // The legacy operators, in both spellings upstream accepts (the terminal client sends pm_with).
    for (const op of ['pm-with', 'pm_with']) {
      t.same(await ids(otherMember, [[op, member.deliveryEmail]]), [m4], `${op}: one email is the one-to-one conversation`)
      t.same(await ids(otherMember, [{ operator: op, operand: `${admin.deliveryEmail},${member.deliveryEmail}` }]), [m5], `${op}: several emails`)
      t.same(await ids(otherMember, [[op, otherMember.deliveryEmail]]), [m9], `${op}: oneself`)
    }
    for (const op of ['group-pm-with', 'group_pm_with']) {
      t.same(await ids(otherMember, [[op, member.deliveryEmail]]), [m5], `${op}: group conversations including the user`)
      t.same(await ids(otherMember, [[op, owner.deliveryEmail]]), [], op)
    }
    t.same(await ids(otherMember, [{ operator: 'group-pm-with', operand: admin.id }]), [m5])
    t.same(await ids(otherMember, [{ operator: 'pm_with', operand: member.deliveryEmail, negated: true }, ['is', 'dm']]), [m5, m9])
    // Upstream validates the underscore spellings' operands as strings only.
    expectError(t, await get(otherMember, { narrow: [{ operator: 'pm_with', operand: [member.id] }] }), { code: 'BAD_REQUEST', status: 400, msg: 'Invalid narrow: operand of pm_with must be a string' })
    expectError(t, await get(otherMember, { narrow: [['pm_with', member.deliveryEmail], ['channel', 'general']] }), {
      code: 'BAD_NARROW', msg: 'Invalid narrow operator: No message can be both a channel message and direct message',
    })
    expectError(t, await get(otherMember, { narrow: [['dm_including', member.deliveryEmail]] }), {
      code: 'BAD_NARROW', msg: 'Invalid narrow operator: unknown operator dm_including',
    })
    t.same(await ids(otherMember, [['is', 'dm']]), [m4, m5, m9])
    t.same(await ids(otherMember, [['is', 'private']]), [m4, m5, m9])
    expectError(t, await get(otherMember, { narrow: [['dm', 'nobody@example.org']] }), { code: 'BAD_NARROW' })
  })

  t.test('flag narrows', async (t) => {
    await services.prisma.userMessage.update({
      where: { userId_messageId: { userId: otherMember.id, messageId: m2 } },
      data: { flags: FLAG_BITS.starred | FLAG_BITS.read },
    })
    t.same(await ids(otherMember, [['is', 'starred']]), [m2])
    t.same(await ids(otherMember, [['is', 'mentioned']]), [m8])
    t.same(await ids(otherMember, [['is', 'alerted']]), [m4])
    const unread = await ids(otherMember, [['is', 'unread']])
    t.notOk(unread.includes(m2))
    t.ok(unread.includes(m1))
  })

  t.test('negated terms', async (t) => {
    t.same(await ids(otherMember, [{ operator: 'channel', operand: 'general', negated: true }]), [m4, m5, m9])
    t.same(await ids(otherMember, [{ operator: 'is', operand: 'dm', negated: true }, { operator: 'topic', operand: 'alpha', negated: true }]), [m2, m7, m10])
  })

  t.test('narrow errors', async (t) => {
    expectError(t, await get(otherMember, { narrow: [['bogus', 'x']] }), { code: 'BAD_NARROW', msg: 'Invalid narrow operator: unknown operator bogus' })
    const unknown = expectError(t, await get(otherMember, { narrow: [['channel', 'nowhere']] }), {
      code: 'BAD_NARROW',
      msg: 'Invalid narrow operator: unknown channel nowhere',
    })
    t.equal(unknown.desc, 'unknown channel nowhere')
    expectError(t, await get(otherMember, { narrow: [['sender', 'nobody@example.org']] }), { code: 'BAD_NARROW' })
    expectError(t, await get(otherMember, { narrow: 'not json' }), { code: 'BAD_REQUEST', msg: 'narrow is not valid JSON' })
  })

  t.test('anchors and the found_* booleans', async (t) => {
    const general = [['channel', 'general']]
    // general as otherMember: m1 m2 m7 m8 m10
    let body = expectSuccess(t, await get(otherMember, { narrow: general, anchor: String(m7), num_before: 1, num_after: 1 }))
    t.same(body.messages.map((m: Body) => m.id), [m2, m7, m8])
    t.equal(body.found_anchor, true)
    t.equal(body.found_oldest, false)
    t.equal(body.found_newest, false)
    t.equal(body.anchor, m7)

    body = expectSuccess(t, await get(otherMember, { narrow: general, anchor: String(m7), num_before: 10, num_after: 10 }))
    t.same(body.messages.map((m: Body) => m.id), [m1, m2, m7, m8, m10])
    t.equal(body.found_oldest, true)
    t.equal(body.found_newest, true)

    // Anchor not in the narrow.
    body = expectSuccess(t, await get(otherMember, { narrow: general, anchor: String(m4), num_before: 1, num_after: 1 }))
    t.same(body.messages.map((m: Body) => m.id), [m2, m7])
    t.equal(body.found_anchor, false)

    body = expectSuccess(t, await get(otherMember, { narrow: general, anchor: String(m7), num_before: 0, num_after: 2, include_anchor: false }))
    t.same(body.messages.map((m: Body) => m.id), [m8, m10])
    body = expectSuccess(t, await get(otherMember, { narrow: general, anchor: String(m7), num_before: 2, num_after: 0, include_anchor: false }))
    t.same(body.messages.map((m: Body) => m.id), [m1, m2])
    body = expectSuccess(t, await get(otherMember, { narrow: general, anchor: String(m7), num_before: 0, num_after: 0 }))
    t.same(body.messages.map((m: Body) => m.id), [m7])
    t.equal(body.found_anchor, true)

    body = expectSuccess(t, await get(otherMember, { narrow: general, anchor: 'oldest', num_before: 0, num_after: 2 }))
    t.same(body.messages.map((m: Body) => m.id), [m1, m2])
    t.equal(body.found_oldest, true)
    t.equal(body.found_newest, false)
    t.equal(body.anchor, 0)

    body = expectSuccess(t, await get(otherMember, { narrow: general, anchor: 'newest', num_before: 2, num_after: 0 }))
    t.same(body.messages.map((m: Body) => m.id), [m8, m10])
    t.equal(body.found_newest, true)
    t.equal(body.found_oldest, false)

    // Negative anchors count as 0.
    body = expectSuccess(t, await get(otherMember, { narrow: general, anchor: '-5', num_before: 0, num_after: 1 }))
    t.same(body.messages.map((m: Body) => m.id), [m1])
  })

  t.test('first_unread, and the legacy use_first_unread_anchor', async (t) => {
    const viewer = await fx.newUser({ fullName: 'Reader' })
    const a = await send(member, dm([viewer.id], 'one'))
    const b = await send(member, dm([viewer.id], 'two'))
    await services.prisma.userMessage.update({ where: { userId_messageId: { userId: viewer.id, messageId: a } }, data: { flags: FLAG_BITS.read } })
    let body = expectSuccess(t, await get(viewer, { anchor: 'first_unread', num_before: 5, num_after: 5 }))
    t.equal(body.anchor, b)
    t.same(body.messages.map((m: Body) => m.id), [a, b])
    t.equal(body.found_anchor, true)
    body = expectSuccess(t, await as(app, viewer).get('/messages', { use_first_unread_anchor: true, num_before: 0, num_after: 1 }))
    t.equal(body.anchor, b)
    // The flag wins over an anchor sent with it (the terminal client sends anchor=0 with it).
    for (const anchor of ['0', 'oldest', 'newest', String(a)]) {
      body = expectSuccess(t, await as(app, viewer).get('/messages', { anchor, use_first_unread_anchor: true, num_before: 0, num_after: 1 }))
      t.equal(body.anchor, b, `anchor=${anchor}`)
      t.same(body.messages.map((m: Body) => m.id), [b], `anchor=${anchor}`)
      t.equal(body.found_anchor, true)
    }
    body = expectSuccess(t, await as(app, viewer).get('/messages', { anchor: '0', use_first_unread_anchor: false, num_before: 0, num_after: 1 }))
    t.same(body.messages.map((m: Body) => m.id), [a], 'use_first_unread_anchor=false leaves the anchor alone')
    await services.prisma.userMessage.update({ where: { userId_messageId: { userId: viewer.id, messageId: b } }, data: { flags: FLAG_BITS.read } })
    body = expectSuccess(t, await get(viewer, { anchor: 'first_unread', num_before: 5, num_after: 5 }))
    t.equal(body.anchor, NEWEST, 'no unread: newest')
    t.same(body.messages.map((m: Body) => m.id), [a, b])
  })

  t.test('parameter errors', async (t) => {
    expectError(t, await get(otherMember, { num_before: 2500, num_after: 2501 }), { code: 'BAD_REQUEST', msg: 'Too many messages requested (maximum 5000).' })
    expectSuccess(t, await get(otherMember, { num_before: 2500, num_after: 2500 }))
    expectError(t, await as(app, otherMember).get('/messages', { num_before: 1 }), { code: 'BAD_REQUEST', msg: "Missing 'anchor' argument." })
    expectError(t, await get(otherMember, { anchor: 'middle' }), { code: 'BAD_REQUEST', msg: 'Invalid anchor' })
    expectError(t, await get(otherMember, { anchor: String(m1), num_before: 1, num_after: 1, include_anchor: false }), {
      code: 'BAD_REQUEST',
      msg: 'The anchor can only be excluded at an end of the range',
    })
    expectError(t, await get(otherMember, { num_before: -1 }), { code: 'BAD_REQUEST' })
  })

  t.test('GET /messages/{id}', async (t) => {
    let body = expectSuccess(t, await as(app, otherMember).get(`/messages/${m8}`))
    t.equal(body.raw_content, '@**Otto Other** look')
    t.same(body.message.flags, ['mentioned'])
    t.match(body.message.content, /^<p><span class="user-mention"/)
    t.match(body.message.avatar_url, /^https:/)
    body = expectSuccess(t, await as(app, otherMember).get(`/messages/${m8}`, { apply_markdown: false }))
    t.equal(body.message.content, '@**Otto Other** look')
    // Public channel history without a copy.
    body = expectSuccess(t, await as(app, otherMember).get(`/messages/${m3}`))
    t.same(body.message.flags, ['read', 'historical'])
    expectError(t, await as(app, guest).get(`/messages/${m3}`), { code: 'BAD_REQUEST', msg: 'Invalid message(s)' })
    expectError(t, await as(app, otherMember).get(`/messages/${m6}`), { code: 'BAD_REQUEST', msg: 'Invalid message(s)' })
    expectError(t, await as(app, owner).get(`/messages/${m4}`), { code: 'BAD_REQUEST', msg: 'Invalid message(s)' })
    expectError(t, await as(app, otherMember).get('/messages/99999999'), { code: 'BAD_REQUEST', msg: 'Invalid message(s)' })
    // Another realm's message is unknown here.
    const other = await buildTestApp(t)
    const foreign = expectSuccess(t, await as(other.app, other.fx.users.member).post('/messages', ch('general', 't', 'elsewhere'))).id
    expectError(t, await as(app, otherMember).get(`/messages/${foreign}`), { code: 'BAD_REQUEST', msg: 'Invalid message(s)' })
  })

  t.test('guests see only their own messages and web-public history', async (t) => {
    const visible = await ids(guest, [['channels', 'public']])
    t.notOk(visible.includes(m3), 'guests get no public history')
    t.ok(visible.includes(m1), 'but keep what they received')
    const webPublic = await services.prisma.stream.create({
      data: { realmId: fx.realm.id, name: 'showcase', isWebPublic: true, canRemoveSubscribersGroupId: design.canRemoveSubscribersGroupId },
    })
    const shown = await send(admin, ch('showcase', 't', 'for all eyes'))
    t.same(await ids(guest, [{ operator: 'channel', operand: webPublic.id }]), [shown])
    expectSuccess(t, await as(app, guest).get(`/messages/${shown}`))
    t.equal((await fx.refresh(guest)).role, ROLE.GUEST)
  })
})
