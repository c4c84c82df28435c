// GET /messages with message_ids (upstream level 300) and the is:muted narrow
// (level 366) in message fetches, matches_narrow and event-queue narrows.
import t from 'tap'
import { buildTestApp } from '../support/app.js'
import { as } from '../support/client.js'
import { bodyOf, expectError, expectSuccess, type Body } from '../support/expect.js'
import { capture, ofType, send, sendTo } from './conversation-support.js'
import type { User } from '../../src/db/index.js'

const ANCHOR_PARAMETERS = 'num_before, num_after, anchor, message_ids, include_anchor, use_first_unread_anchor'

t.test('GET /messages with message_ids', async (t) => {
  const { app, fx } = await buildTestApp(t)
  const { owner, member, otherMember } = fx.users
  const inGeneral = await sendTo(t, app, member, 'general', 'ids', 'one')
  const inDesign = await sendTo(t, app, member, 'design', 'ids', 'two')
  const inSecret = await sendTo(t, app, owner, 'secret', 'ids', 'three')
  const direct = await send(t, app, member, { type: 'direct', to: JSON.stringify([otherMember.id]), content: 'four' })
  const byIds = (user: User, params: Record<string, unknown>) => as(app, user).get('/messages', params)
  const idsOf = (body: Body): number[] => body.messages.map((m: Body) => m.id)

  t.test('answers the listed messages the viewer has, in ID order, without anchor and with every found_* false', async (t) => {
    const body = expectSuccess(t, await byIds(otherMember, { message_ids: [direct, inSecret, inGeneral, inDesign, 2_000_000_000] }))
    t.same(Object.keys(body).sort(), ['found_anchor', 'found_newest', 'found_oldest', 'history_limited', 'messages', 'msg', 'result'])
    t.same({ ...body, messages: idsOf(body) }, {
      result: 'success',
      msg: '',
      messages: [inGeneral, direct],
      found_anchor: false,
      found_oldest: false,
      found_newest: false,
      history_limited: false,
    }, 'not the private channel, nor a public channel the viewer is not in without a channel narrow, nor unknown IDs')
    t.same(body.messages.map((m: Body) => m.flags), [[], []])
    t.same(idsOf(expectSuccess(t, await byIds(owner, { message_ids: [inSecret, inSecret] }))), [inSecret], 'an ID listed twice comes once')
    t.same(idsOf(expectSuccess(t, await byIds(otherMember, { message_ids: [] }))), [])
  })

  t.test('the narrow still applies, with its channel history', async (t) => {
    t.same(idsOf(expectSuccess(t, await byIds(otherMember, { message_ids: [inGeneral, direct], narrow: [{ operator: 'is', operand: 'dm' }] }))), [direct])
    const history = expectSuccess(t, await byIds(otherMember, { message_ids: [inGeneral, inDesign], narrow: [{ operator: 'channel', operand: fx.streams.design.id }] }))
    t.same(idsOf(history), [inDesign])
    t.same(history.messages[0].flags, ['read', 'historical'])
    const search = expectSuccess(t, await byIds(member, { message_ids: [inGeneral, inDesign], narrow: [{ operator: 'search', operand: 'two' }] }))
    t.same(idsOf(search), [inDesign])
    t.equal(search.messages[0].match_subject, 'ids')
  })

  t.test('refuses anchor parameters beside message_ids with upstream error', async (t) => {
    for (const extra of [{ anchor: 'newest' }, { num_before: 1 }, { num_after: 5 }, { use_first_unread_anchor: true }]) {
      const res = await byIds(member, { message_ids: [inGeneral], ...extra })
      t.same(bodyOf(res), { result: 'error', msg: `Unsupported parameter combination: ${ANCHOR_PARAMETERS}`, code: 'BAD_REQUEST', parameters: ANCHOR_PARAMETERS }, JSON.stringify(extra))
      t.equal(res.statusCode, 400)
    }
    t.same(idsOf(expectSuccess(t, await byIds(member, { message_ids: [inGeneral], num_before: 0, num_after: 0, include_anchor: false }))), [inGeneral], 'zero counts are no anchor request')
  })

  t.test('at most 5000 IDs; IDs are non-negative integers', async (t) => {
    const many = Array.from({ length: 5001 }, (_, i) => i + 1)
    expectError(t, await byIds(member, { message_ids: many }), { code: 'BAD_REQUEST', msg: 'Too many messages requested (maximum 5000).' })
    expectSuccess(t, await byIds(member, { message_ids: many.slice(0, 5000) }))
    expectError(t, await byIds(member, { message_ids: [-1] }), { code: 'BAD_REQUEST' })
    expectError(t, await byIds(member, { message_ids: ['x'] }), { code: 'BAD_REQUEST' })
    expectError(t, await byIds(member, { message_ids: [99_999_999_999] }), { code: 'BAD_REQUEST', msg: 'message_ids[0] is too large' })
    expectError(t, await byIds(member, { message_ids: 'nope' }), { code: 'BAD_REQUEST' })
    expectError(t, await byIds(member, {}), { code: 'BAD_REQUEST', msg: "Missing 'anchor' argument." })
  })
})

t.test('is:muted (level 366): messages in muted topics, and in muted channels unless the topic is unmuted or followed', async (t) => {
  const { app, fx } = await buildTestApp(t)
  const { owner, member } = fx.users
  const { general, design } = fx.streams
  expectSuccess(t, await as(app, member).post('/users/me/subscriptions/properties', { subscription_data: [{ stream_id: design.id, property: 'is_muted', value: true }] }))
  const policy = (stream_id: number, topic: string, visibility_policy: number) => as(app, member).post('/user_topics', { stream_id, topic, visibility_policy })
  expectSuccess(t, await policy(general.id, 'noisy', 1))
  expectSuccess(t, await policy(design.id, 'kept', 2))
  expectSuccess(t, await policy(design.id, 'watched', 3))
  const noisy = await sendTo(t, app, owner, 'general', 'Noisy', 'n')
  const quiet = await sendTo(t, app, owner, 'general', 'quiet', 'q')
  const chatter = await sendTo(t, app, owner, 'design', 'chatter', 'c')
  const kept = await sendTo(t, app, owner, 'design', 'kept', 'k')
  const watched = await sendTo(t, app, owner, 'design', 'watched', 'w')
  const direct = await send(t, app, owner, { type: 'direct', to: JSON.stringify([member.id]), content: 'd' })
  const narrowed = async (narrow: unknown): Promise<number[]> =>
    expectSuccess(t, await as(app, member).get('/messages', { anchor: 'newest', num_before: 100, narrow })).messages.map((m: Body) => m.id)

  t.same(await narrowed([{ operator: 'is', operand: 'muted' }]), [noisy, chatter], 'a muted topic (names compared without case) and a muted channel')
  t.same(await narrowed([{ operator: 'is', operand: 'muted', negated: true }]), [quiet, kept, watched, direct])
  t.same(await narrowed([{ operator: 'channel', operand: design.id }, { operator: 'is', operand: 'muted' }]), [chatter])

  const matched = expectSuccess(t, await as(app, member).get('/messages/matches_narrow', { msg_ids: [noisy, quiet, direct], narrow: [{ operator: 'is', operand: 'muted' }] }))
  t.same(matched.messages, { [noisy]: { match_content: '<p>n</p>', match_subject: 'Noisy' } })

  const events = await capture(
    t,
    app,
    [member],
    async () => {
      await sendTo(t, app, owner, 'general', 'quiet', 'not muted')
      await sendTo(t, app, owner, 'general', 'noisy', 'muted')
    },
    { event_types: ['message'], narrow: [['is', 'muted']] },
  )
  // Upstream's event-queue narrow accepts is:muted and filters nothing by it (its predicate has no muting state).
  t.same(ofType(events.get(member.id), 'message').map((e) => e.message.content), ['not muted', 'muted'], 'an event queue narrowed to is:muted')
})
