import t from 'tap'
import { buildTestApp } from '../support/app.js'
import { as } from '../support/client.js'
import { expectError, expectSuccess } from '../support/expect.js'
import { capture, messageAs, ofType, send, sendTo } from './conversation-support.js'

t.test('POST /messages/flags', async (t) => {
  const { app, fx, services } = await buildTestApp(t)
  const { owner, member, otherMember, guest } = fx.users
  const { general } = fx.streams
  const prisma = services.prisma
  const flags = async (id: number) => (await messageAs(t, app, otherMember, id)).flags as string[]

  t.test('stars and unstars; the event lists only messages that changed; the response echoes the request', async (t) => {
    const a = await sendTo(t, app, member, 'general', 'f', 'a')
    const b = await sendTo(t, app, member, 'general', 'f', 'b')
    expectSuccess(t, await as(app, otherMember).post('/messages/flags', { messages: [a], op: 'add', flag: 'starred' }))
    const events = await capture(t, app, [otherMember, member], async () => {
      const body = expectSuccess(t, await as(app, otherMember).post('/messages/flags', { messages: [a, b], op: 'add', flag: 'starred' }))
      t.same(body.messages, [a, b])
    })
    t.same(ofType(events.get(otherMember.id), 'update_message_flags').map(({ id: _id, ...e }) => e), [
      { type: 'update_message_flags', op: 'add', operation: 'add', flag: 'starred', messages: [b], all: false },
    ])
    t.same(ofType(events.get(member.id), 'update_message_flags'), [], 'only the acting user hears')
    t.same(await flags(b), ['starred'])
    expectSuccess(t, await as(app, otherMember).post('/messages/flags', { messages: [a, b], op: 'remove', flag: 'starred' }))
    t.same(await flags(a), [])
  })

  t.test('marking unread carries message_details', async (t) => {
    const a = await sendTo(t, app, member, 'general', 'details', `hi @**${otherMember.fullName}**`)
    const dm = await send(t, app, member, { type: 'direct', to: JSON.stringify([otherMember.id]), content: 'x' })
    expectSuccess(t, await as(app, otherMember).post('/messages/flags', { messages: [a, dm], op: 'add', flag: 'read' }))
    const events = await capture(t, app, [otherMember], () => as(app, otherMember).post('/messages/flags', { messages: [a, dm], op: 'remove', flag: 'read' }))
    const [e] = ofType(events.get(otherMember.id), 'update_message_flags')
    t.match(e, { op: 'remove', flag: 'read', messages: [a, dm] })
    t.same(e?.message_details, {
      [a]: { type: 'stream', stream_id: general.id, topic: 'details', unmuted_stream_msg: true, mentioned: true },
      [dm]: { type: 'private', user_ids: [member.id] },
    })
  })

  t.test('only read, starred and collapsed are settable', async (t) => {
    const a = await sendTo(t, app, member, 'general', 'bad', 'x')
    const post = (p: Record<string, unknown>) => as(app, otherMember).post('/messages/flags', { messages: [a], ...p })
    expectError(t, await post({ op: 'add', flag: 'mentioned' }), { code: 'BAD_REQUEST', msg: "Flag not editable: 'mentioned'" })
    expectError(t, await post({ op: 'add', flag: 'historical' }), { code: 'BAD_REQUEST', msg: "Flag not editable: 'historical'" })
    expectError(t, await post({ op: 'add', flag: 'shiny' }), { code: 'BAD_REQUEST', msg: "Invalid flag: 'shiny'" })
    expectError(t, await post({ op: 'toggle', flag: 'read' }), { code: 'BAD_REQUEST', msg: "Invalid message flag operation: 'toggle'" })
    expectError(t, await post({ flag: 'read' }), { code: 'REQUEST_VARIABLE_MISSING', msg: "Missing 'op' argument" })
    expectError(t, await as(app, otherMember).post('/messages/flags', { messages: 'nope', op: 'add', flag: 'read' }), { code: 'BAD_REQUEST' })
    expectSuccess(t, await post({ op: 'add', flag: 'collapsed' }))
    t.same(await flags(a), ['collapsed'])
  })

  t.test('starring a readable message never received creates a historical copy; unreadable ones are refused', async (t) => {
    const old = await sendTo(t, app, member, 'design', 'old', 'before you looked')
    expectSuccess(t, await as(app, otherMember).post('/messages/flags', { messages: [old], op: 'add', flag: 'read' }))
    t.equal(await prisma.userMessage.count({ where: { userId: otherMember.id, messageId: old } }), 0, 'read needs no copy')
    expectSuccess(t, await as(app, otherMember).post('/messages/flags', { messages: [old], op: 'add', flag: 'starred' }))
    t.same(await flags(old), ['read', 'starred', 'historical'])
    const hidden = await sendTo(t, app, member, 'secret', 'x', 'x')
    expectError(t, await as(app, otherMember).post('/messages/flags', { messages: [hidden], op: 'add', flag: 'starred' }), { code: 'BAD_REQUEST', msg: 'Invalid message(s)' })
    expectError(t, await as(app, guest).post('/messages/flags', { messages: [old], op: 'add', flag: 'starred' }), { code: 'BAD_REQUEST', msg: 'Invalid message(s)' })
    // Unread is only for subscribed channels; the response names the channels skipped (level 355), only when marking unread.
    const dm = await send(t, app, member, { type: 'direct', to: JSON.stringify([otherMember.id]), content: 'also' })
    const unread = expectSuccess(t, await as(app, otherMember).post('/messages/flags', { messages: [old, dm], op: 'remove', flag: 'read' }))
    t.same({ ...unread }, { result: 'success', msg: '', messages: [old, dm], ignored_because_not_subscribed_channels: [fx.streams.design.id] })
    t.same(await flags(old), ['read', 'starred', 'historical'])
    const none = expectSuccess(t, await as(app, otherMember).post('/messages/flags', { messages: [dm], op: 'remove', flag: 'read' }))
    t.same({ ...none }, { result: 'success', msg: '', messages: [dm], ignored_because_not_subscribed_channels: [] })
    const starred = expectSuccess(t, await as(app, otherMember).post('/messages/flags', { messages: [old], op: 'remove', flag: 'starred' }))
    t.same({ ...starred }, { result: 'success', msg: '', messages: [old] })
  })
})

t.test('POST /messages/flags/narrow', async (t) => {
  const { app, fx } = await buildTestApp(t)
  const { member, otherMember } = fx.users
  const ids: number[] = []
  for (let i = 0; i < 6; i++) ids.push(await sendTo(t, app, member, 'design', 'n', `m${i}`))
  const other = await sendTo(t, app, member, 'design', 'elsewhere', 'x')
  const narrow = [{ operator: 'channel', operand: 'design' }, { operator: 'topic', operand: 'n' }]
  const post = (p: Record<string, unknown>) => as(app, fx.users.owner).post('/messages/flags/narrow', { narrow, op: 'add', flag: 'read', ...p })

  t.test('processes a window around an anchor and counts what changed', async (t) => {
    const body = expectSuccess(t, await post({ anchor: String(ids[2]), num_before: 1, num_after: 2 }))
    t.same(
      { ...body, result: undefined, msg: undefined },
      { result: undefined, msg: undefined, processed_count: 4, updated_count: 4, first_processed_id: ids[1], last_processed_id: ids[4], found_oldest: false, found_newest: false },
    )
    const again = expectSuccess(t, await post({ anchor: String(ids[2]), num_before: 1, num_after: 2 }))
    t.equal(again.updated_count, 0)
    t.equal(again.processed_count, 4)
  })

  t.test('anchors oldest, newest and first_unread; include_anchor', async (t) => {
    const first = expectSuccess(t, await post({ anchor: 'first_unread', num_before: 0, num_after: 10 }))
    t.match(first, { first_processed_id: ids[0], last_processed_id: ids[5], processed_count: 6, updated_count: 2, found_newest: true })
    const all = expectSuccess(t, await post({ anchor: 'oldest', num_before: 0, num_after: 100, op: 'remove' }))
    t.match(all, { processed_count: 6, updated_count: 6, first_processed_id: ids[0], last_processed_id: ids[5], found_oldest: true, found_newest: true })
    const newest = expectSuccess(t, await post({ anchor: 'newest', num_before: 2, num_after: 0, include_anchor: false }))
    t.match(newest, { processed_count: 2, first_processed_id: ids[4], last_processed_id: ids[5] })
    const empty = expectSuccess(t, await as(app, fx.users.owner).post('/messages/flags/narrow', {
      narrow: [{ operator: 'channel', operand: 'design' }, { operator: 'topic', operand: 'nothing here' }], op: 'add', flag: 'starred', anchor: 'newest', num_before: 5, num_after: 0,
    }))
    t.match(empty, { processed_count: 0, updated_count: 0, first_processed_id: null, last_processed_id: null, found_oldest: true, found_newest: true })
    t.notOk('ignored_because_not_subscribed_channels' in empty)
    t.same(all.ignored_because_not_subscribed_channels, [])
    // otherMember is not subscribed to design: nothing becomes unread, and design is named (level 355).
    const skipped = expectSuccess(t, await as(app, otherMember).post('/messages/flags/narrow', { narrow, op: 'remove', flag: 'read', anchor: 'oldest', num_before: 0, num_after: 100 }))
    t.match(skipped, { processed_count: 6, updated_count: 0, ignored_because_not_subscribed_channels: [fx.streams.design.id] })
    void other
  })

  t.test('publishes update_message_flags for the changed messages', async (t) => {
    const events = await capture(t, app, [member], () =>
      as(app, member).post('/messages/flags/narrow', { narrow, op: 'add', flag: 'starred', anchor: String(ids[0]), num_before: 0, num_after: 1 }),
    )
    t.match(ofType(events.get(member.id), 'update_message_flags'), [{ op: 'add', flag: 'starred', messages: [ids[0], ids[1]], all: false }])
  })

  t.test('processed_count counts the num_before messages before the anchor, as GET /messages returns them', async (t) => {
    const at = (i: number) => ids[i] ?? 0
    const cases: [Record<string, unknown>, number, number | null, number | null, boolean][] = [
      [{ anchor: String(at(3)), num_before: 3, num_after: 0 }, 4, at(0), at(3), false],
      [{ anchor: String(at(3)), num_before: 3, num_after: 0, include_anchor: false }, 3, at(0), at(2), false],
      [{ anchor: String(at(3)), num_before: 5, num_after: 0 }, 4, at(0), at(3), true],
      [{ anchor: String(at(3)), num_before: 2, num_after: 1 }, 4, at(1), at(4), false],
      [{ anchor: 'newest', num_before: 3, num_after: 0 }, 3, at(3), at(5), false],
      [{ anchor: String(other), num_before: 2, num_after: 0 }, 2, at(4), at(5), false],
      [{ anchor: String(at(5) + 1_000_000), num_before: 10, num_after: 0 }, 6, at(0), at(5), true],
      [{ anchor: 'oldest', num_before: 3, num_after: 2 }, 2, at(0), at(1), true],
    ]
    for (const [params, processed, first, last, foundOldest] of cases) {
      const body = expectSuccess(t, await post({ op: 'add', flag: 'collapsed', ...params }))
      t.match(body, { processed_count: processed, first_processed_id: first, last_processed_id: last, found_oldest: foundOldest }, JSON.stringify(params))
      const window = expectSuccess(t, await as(app, fx.users.owner).get('/messages', { narrow, include_anchor: true, ...params }))
      t.equal(window.messages.length, processed, 'the same window as GET /messages')
    }
  })

  t.test('errors', async (t) => {
    expectError(t, await post({ anchor: String(ids[2]), num_before: 1, num_after: 1, include_anchor: false }), {
      code: 'BAD_REQUEST',
      msg: 'The anchor can only be excluded at an end of the range',
    })
    expectError(t, await post({ anchor: 'sideways', num_before: 1, num_after: 1 }), { code: 'BAD_REQUEST', msg: 'Invalid anchor' })
    expectError(t, await post({ anchor: 'newest', num_before: -1, num_after: 1 }), { code: 'BAD_REQUEST' })
    expectError(t, await post({ anchor: 'newest', num_after: 1 }), { code: 'REQUEST_VARIABLE_MISSING', msg: "Missing 'num_before' argument" })
    expectError(t, await post({ anchor: 'newest', num_before: 1, num_after: 0, flag: 'mentioned' }), { code: 'BAD_REQUEST', msg: "Flag not editable: 'mentioned'" })
    expectError(t, await post({ anchor: 'newest', num_before: 1, num_after: 0, narrow: [{ operator: 'bogus', operand: 'x' }] }), { code: 'BAD_NARROW' })
    void otherMember
  })
})
