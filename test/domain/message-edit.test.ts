import t from 'tap'
import { clampRange } from '../../src/actions/update-flags-for-narrow.js'
import {
  checkMoveWindow,
  isResolveNotice,
  moveDeadlineSeconds,
  newThreadNotice,
  oldThreadNotice,
  pastLimit,
  resolveNotice,
  visibilityPolicyAfterMerge,
  type EditRealm,
} from '../../src/domain/message-edit.js'
import { ApiError } from '../../src/errors.js'

const realm: EditRealm = {
  waitingPeriodThreshold: 0,
  allowMessageEditing: true,
  messageContentEditLimitSeconds: 600,
  moveMessagesWithinStreamLimitSeconds: 3600,
  moveMessagesBetweenStreamsLimitSeconds: 600,
  messageContentDeleteLimitSeconds: 600,
}

t.test('limits allow 20 seconds of grace; null never expires', async (t) => {
  const now = new Date(1_000_000_000)
  const ago = (s: number) => new Date(now.getTime() - s * 1000)
  t.equal(pastLimit(600, ago(619), now), false)
  t.equal(pastLimit(600, ago(621), now), true)
  t.equal(pastLimit(null, ago(1e9), now), false)
  t.equal(pastLimit(600, ago(601), now, 0), true)
})

t.test('the change_all deadline is the smaller applicable limit', async (t) => {
  t.equal(moveDeadlineSeconds(realm, { topic: true, stream: false }), 3620)
  t.equal(moveDeadlineSeconds(realm, { topic: true, stream: true }), 620)
  t.equal(moveDeadlineSeconds({ ...realm, moveMessagesBetweenStreamsLimitSeconds: null }, { topic: false, stream: true }), null)
})

t.test('the move window error carries the counts', async (t) => {
  const now = new Date(10_000_000)
  const m = (id: number, age: number) => ({ id, dateSent: new Date(now.getTime() - age * 1000) })
  t.doesNotThrow(() => checkMoveWindow([m(1, 10), m(2, 5)], 100, now))
  t.doesNotThrow(() => checkMoveWindow([m(1, 1e6)], null, now))
  const cases: [ReturnType<typeof m>[], number | null, number, number][] = [
    [[m(1, 500), m(2, 50), m(3, 10)], 2, 3, 2],
    [[m(1, 500), m(2, 400)], null, 2, 0],
  ]
  for (const [messages, first, total, allowed] of cases) {
    try {
      checkMoveWindow(messages, 100, now)
      t.fail('should throw')
    } catch (e) {
      t.ok(e instanceof ApiError)
      t.match(e, { code: 'MOVE_MESSAGES_TIME_LIMIT_EXCEEDED', extra: { first_message_id_allowed_to_move: first, total_messages_in_topic: total, total_messages_allowed_to_move: allowed } })
    }
  }
})

t.test('notice wording', async (t) => {
  const actor = { id: 7, fullName: 'Ada Lovelace' }
  t.equal(resolveNotice(actor, true), '@_**Ada Lovelace|7** has marked this topic as resolved.')
  t.ok(isResolveNotice(resolveNotice(actor, false)))
  t.notOk(isResolveNotice('hello'))
  t.equal(oldThreadNotice({ actor, newLocation: '#**a>b**', count: 3, movedAll: false }), '3 messages were moved from this topic to #**a>b** by @_**Ada Lovelace|7**.')
  t.equal(oldThreadNotice({ actor, newLocation: '#**a>b**', count: 1, movedAll: false }), 'A message was moved from this topic to #**a>b** by @_**Ada Lovelace|7**.')
  t.equal(newThreadNotice({ actor, oldLocation: '#**a>b**', count: 2, wholeTopicIntoEmpty: true, messageLink: 'L' }), 'This topic was moved here from #**a>b** by @_**Ada Lovelace|7**.')
  t.equal(newThreadNotice({ actor, oldLocation: '#**a>b**', count: 1, wholeTopicIntoEmpty: false, messageLink: 'L' }), '[A message](L) was moved here from #**a>b** by @_**Ada Lovelace|7**.')
})

t.test('visibility policies merge towards followed, then unmuted', async (t) => {
  const table: [number, number, number][] = [
    [1, 1, 1],
    [1, 3, 3],
    [3, 0, 3],
    [2, 1, 2],
    [1, 0, 0],
  ]
  for (const [a, b, merged] of table) t.equal(visibilityPolicyAfterMerge(a, b), merged, `${a}+${b}`)
})

t.test('flag windows are clamped to 5000', async (t) => {
  t.same(clampRange(10, 10), { numBefore: 10, numAfter: 10 })
  t.same(clampRange(6000, 0), { numBefore: 5000, numAfter: 0 })
  t.same(clampRange(6000, 6000), { numBefore: 2500, numAfter: 2500 })
  t.same(clampRange(100, 6000), { numBefore: 100, numAfter: 4900 })
})
