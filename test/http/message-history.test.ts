import t from 'tap'
import { buildTestApp, makeFixture } from '../support/app.js'
import { as } from '../support/client.js'
import { expectError, expectSuccess } from '../support/expect.js'
import { send, sendTo } from './conversation-support.js'
import { captureEvents } from '../support/events.js'

t.test('message edit history', async (t) => {
  const { app, fx, services } = await buildTestApp(t)
  const { owner, member, otherMember, guest } = fx.users
  const { general, design } = fx.streams
  const history = (user: typeof member, id: number | string) => as(app, user).get(`/messages/${id}/history`)

  t.test('GET /messages/{id}/history: the original, then each edit with what it changed, oldest first', async (t) => {
    const id = await sendTo(t, app, member, 'general', 't1', 'first')
    const sent = Math.floor((await services.prisma.message.findUniqueOrThrow({ where: { id } })).dateSent.getTime() / 1000)
    expectSuccess(t, await as(app, member).patch(`/messages/${id}`, { content: 'second **take**' }))
    expectSuccess(t, await as(app, member).patch(`/messages/${id}`, { topic: 't2' }))
    expectSuccess(t, await as(app, owner).patch(`/messages/${id}`, { stream_id: design.id, send_notification_to_new_thread: false }))
    const body = expectSuccess(t, await history(otherMember, id))
    t.same(Object.keys(body).sort(), ['message_history', 'msg', 'result'])
    const h = body.message_history as Record<string, unknown>[]
    t.equal(h.length, 4)
    for (const snapshot of h) t.type(snapshot.timestamp, 'number')
    t.equal(h[0]?.timestamp, sent)
    const plain = h.map(({ timestamp: _t, ...rest }) => rest)
    t.same(plain, [
      { content: 'first', rendered_content: '<p>first</p>', topic: 't1', user_id: member.id },
      {
        content: 'second **take**',
        rendered_content: '<p>second <strong>take</strong></p>',
        topic: 't1',
        user_id: member.id,
        prev_content: 'first',
        prev_rendered_content: '<p>first</p>',
        content_html_diff:
          '<div><p><span class="highlight_text_deleted">first</span><span class="highlight_text_inserted">second </span><strong><span class="highlight_text_inserted">take</span></strong></p></div>',
      },
      { content: 'second **take**', rendered_content: '<p>second <strong>take</strong></p>', topic: 't2', prev_topic: 't1', user_id: member.id },
      { content: 'second **take**', rendered_content: '<p>second <strong>take</strong></p>', topic: 't2', prev_stream: general.id, stream: design.id, user_id: owner.id },
    ])
  })

  t.test('a message never edited has one snapshot; direct messages have an empty topic', async (t) => {
    const id = await send(t, app, member, { type: 'direct', to: JSON.stringify([otherMember.id]), content: 'hi' })
    t.same(
      expectSuccess(t, await history(otherMember, id)).message_history.map(({ timestamp: _t, ...rest }: Record<string, unknown>) => rest),
      [{ content: 'hi', rendered_content: '<p>hi</p>', topic: '', user_id: member.id }],
    )
  })

  t.test('edit_history in GET /messages and GET /messages/{id}, as stored (newest first)', async (t) => {
    const id = await sendTo(t, app, member, 'general', 'stored', 'v1')
    const unedited = expectSuccess(t, await as(app, otherMember).get(`/messages/${id}`)).message
    t.notOk('edit_history' in unedited)
    t.notOk('last_edit_timestamp' in unedited)
    expectSuccess(t, await as(app, member).patch(`/messages/${id}`, { content: 'v2' }))
    expectSuccess(t, await as(app, member).patch(`/messages/${id}`, { topic: 'renamed' }))
    const one = expectSuccess(t, await as(app, otherMember).get(`/messages/${id}`)).message
    t.same(one.edit_history, [
      { user_id: member.id, timestamp: one.edit_history[0].timestamp, prev_topic: 'stored', topic: 'renamed' },
      { user_id: member.id, timestamp: one.edit_history[1].timestamp, prev_content: 'v1', prev_rendered_content: '<p>v1</p>' },
    ])
    // Level 365: the content edit and the move each have their timestamp.
    t.equal(one.last_edit_timestamp, one.edit_history[1].timestamp)
    t.equal(one.last_moved_timestamp, one.edit_history[0].timestamp)
    const list = expectSuccess(t, await as(app, otherMember).get('/messages', { anchor: String(id), num_before: 0, num_after: 0, narrow: [] })).messages
    t.same(list[0].edit_history, one.edit_history)
  })

  t.test('allow_edit_history off: the endpoint refuses and messages carry no edit_history', async (t) => {
    const id = await sendTo(t, app, member, 'general', 'hidden', 'v1')
    expectSuccess(t, await as(app, member).patch(`/messages/${id}`, { content: 'v2' }))
    t.same(expectSuccess(t, await as(app, owner).patch('/realm', { allow_edit_history: false })), { result: 'success', msg: '', allow_edit_history: false })
    t.teardown(() => as(app, owner).patch('/realm', { allow_edit_history: true }))
    expectError(t, await history(otherMember, id), { code: 'BAD_REQUEST', status: 400, msg: 'Message edit history is disabled in this organization' })
    expectError(t, await history(otherMember, 999999999), { code: 'BAD_REQUEST', msg: 'Message edit history is disabled in this organization' })
    const one = expectSuccess(t, await as(app, otherMember).get(`/messages/${id}`)).message
    t.notOk('edit_history' in one)
    t.type(one.last_edit_timestamp, 'number', 'the edit time stays')
    const list = expectSuccess(t, await as(app, otherMember).get('/messages', { anchor: String(id), num_before: 0, num_after: 0, narrow: [] })).messages
    t.notOk('edit_history' in list[0])
  })

  t.test('message_edit_history_visibility_policy (level 358): "moves" shows moves without content; both settings read and write one value', async (t) => {
    const id = await sendTo(t, app, member, 'general', 'm1', 'c1')
    expectSuccess(t, await as(app, member).patch(`/messages/${id}`, { content: 'c2' }))
    expectSuccess(t, await as(app, member).patch(`/messages/${id}`, { topic: 'm2' }))
    expectSuccess(t, await as(app, member).patch(`/messages/${id}`, { topic: 'm3', content: 'c3' }))
    const events = await captureEvents(app, otherMember, async () => {
      t.same(expectSuccess(t, await as(app, owner).patch('/realm', { message_edit_history_visibility_policy: 'moves' })), {
        result: 'success',
        msg: '',
        message_edit_history_visibility_policy: 'updated',
      })
    })
    t.same(events.map(({ id: _id, ...e }) => e), [{ type: 'realm', op: 'update', property: 'message_edit_history_visibility_policy', value: 'moves' }], 'allow_edit_history stays true: no event for it')
    t.teardown(() => as(app, owner).patch('/realm', { message_edit_history_visibility_policy: 'all' }))
    const state = expectSuccess(t, await as(app, otherMember).post('/register', { fetch_event_types: JSON.stringify(['realm']) }))
    t.equal(state.realm_message_edit_history_visibility_policy, 'moves')
    t.equal(state.realm_allow_edit_history, true)
    const plain = expectSuccess(t, await history(otherMember, id)).message_history.map(({ timestamp: _t, ...rest }: Record<string, unknown>) => rest)
    t.same(plain, [
      { content: 'c1', rendered_content: '<p>c1</p>', topic: 'm1', user_id: member.id },
      { content: 'c2', rendered_content: '<p>c2</p>', topic: 'm2', prev_topic: 'm1', user_id: member.id },
      { content: 'c3', rendered_content: '<p>c3</p>', topic: 'm3', prev_topic: 'm2', user_id: member.id },
    ], 'the content-only edit is left out; the move with a content change keeps only its move')
    const one = expectSuccess(t, await as(app, otherMember).get(`/messages/${id}`)).message
    t.same(one.edit_history.map(({ timestamp: _t, ...rest }: Record<string, unknown>) => rest), [
      { user_id: member.id, prev_topic: 'm2', topic: 'm3' },
      { user_id: member.id, prev_topic: 'm1', topic: 'm2' },
    ])
    const off = await captureEvents(app, otherMember, async () => {
      expectSuccess(t, await as(app, owner).patch('/realm', { message_edit_history_visibility_policy: 'none' }))
    })
    t.same(off.map(({ id: _id, ...e }) => e), [
      { type: 'realm', op: 'update', property: 'message_edit_history_visibility_policy', value: 'none' },
      { type: 'realm', op: 'update', property: 'allow_edit_history', value: false },
    ], 'the deprecated boolean moves with it')
    expectError(t, await history(otherMember, id), { code: 'BAD_REQUEST', msg: 'Message edit history is disabled in this organization' })
    const back = await captureEvents(app, otherMember, async () => {
      t.same(expectSuccess(t, await as(app, owner).patch('/realm', { allow_edit_history: true })), { result: 'success', msg: '', allow_edit_history: true })
    })
    t.same(back.map(({ id: _id, ...e }) => e), [
      { type: 'realm', op: 'update', property: 'allow_edit_history', value: true },
      { type: 'realm', op: 'update', property: 'message_edit_history_visibility_policy', value: 'all' },
    ])
    t.match(expectError(t, await as(app, owner).patch('/realm', { message_edit_history_visibility_policy: 'some' }), { code: 'BAD_REQUEST' }).msg, /message_edit_history_visibility_policy/)
    expectError(t, await as(app, member).patch('/realm', { message_edit_history_visibility_policy: 'none' }), { code: 'UNAUTHORIZED_PRINCIPAL', msg: 'Must be an organization administrator' })
  })

  t.test('only readers of the message see its history', async (t) => {
    const secret = await sendTo(t, app, member, 'secret', 'x', 'classified')
    const inDesign = await sendTo(t, app, member, 'design', 'x', 'public but not for guests')
    const dm = await send(t, app, member, { type: 'direct', to: JSON.stringify([owner.id]), content: 'just us' })
    const invalid = { code: 'BAD_REQUEST', status: 400, msg: 'Invalid message(s)' }
    expectError(t, await history(otherMember, secret), invalid)
    expectError(t, await history(fx.users.admin, secret), invalid)
    expectError(t, await history(guest, inDesign), invalid)
    expectError(t, await history(otherMember, dm), invalid)
    expectError(t, await history(otherMember, 999999999), invalid)
    const other = await makeFixture(services)
    expectError(t, await history(other.users.member, inDesign), invalid)
    expectSuccess(t, await history(owner, secret))
    t.match(expectError(t, await history(otherMember, 'abc'), { code: 'BAD_REQUEST', status: 400 }).msg, /message_id/)
  })
})
