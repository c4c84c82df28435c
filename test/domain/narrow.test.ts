import t from 'tap'
import { FLAG_BITS } from '../../src/domain/flags.js'
import { matchesNarrow, parseNarrow, type NarrowableMessage } from '../../src/domain/narrow.js'

t.test('parse and normalize', async (t) => {
  t.same(parseNarrow([['stream', 'Denmark'], { operator: 'subject', operand: 'x', negated: true }]), [
    { operator: 'channel', operand: 'Denmark', negated: false },
    { operator: 'topic', operand: 'x', negated: true },
  ])
  t.same(parseNarrow([['is', 'private']]), [{ operator: 'is', operand: 'dm', negated: false }])
  t.same(parseNarrow([{ operator: 'pm-with', operand: [3, 4] }]), [{ operator: 'dm', operand: [3, 4], negated: false }])
  t.same(parseNarrow([{ operator: 'streams', operand: 'public' }]), [{ operator: 'channels', operand: 'public', negated: false }])
  t.same(parseNarrow([{ operator: 'channel', operand: 7 }, { operator: 'near', operand: '12' }]), [
    { operator: 'channel', operand: 7, negated: false },
    { operator: 'near', operand: 12, negated: false },
  ])
  t.same(parseNarrow(undefined), [])
})

t.test('BAD_NARROW errors', async (t) => {
  const cases: [unknown, string][] = [
    [[['foo', 'x']], 'unknown operator foo'],
    [[['is', 'bogus']], "unknown 'is' operand bogus"],
    [[['has', 'video']], "unknown 'has' operand video"],
    [[['in', 'nowhere']], "unknown 'in' operand nowhere"],
    [[['channels', 'private']], 'unknown channels operand private'],
    [[['id', 'abc']], 'Invalid message ID'],
    [[['channel', 'x'], ['dm', 'a@example.com']], 'No message can be both a channel message and direct message'],
  ]
  for (const [narrow, desc] of cases) {
    t.throws(() => parseNarrow(narrow), { msg: `Invalid narrow operator: ${desc}`, code: 'BAD_NARROW', extra: { desc } }, desc)
  }
  t.throws(() => parseNarrow([['channel']]), { code: 'BAD_REQUEST' })
  t.throws(() => parseNarrow([{ operand: 'x' }]), { code: 'BAD_REQUEST' })
  t.throws(() => parseNarrow([{ operator: 'search', operand: '  ' }]), { code: 'BAD_REQUEST' })
  t.throws(() => parseNarrow('nope'), { code: 'BAD_REQUEST' })
})

const me = { userId: 1, email: 'me@example.com' }
const channelMsg: NarrowableMessage = {
  id: 100,
  type: 'stream',
  streamId: 3,
  streamName: 'Denmark',
  streamIsPublic: true,
  topic: '✔ Castle',
  senderId: 2,
  senderEmail: 'Othello@example.com',
  flags: FLAG_BITS.starred | FLAG_BITS.stream_wildcard_mentioned,
  content: 'The quick brown fox',
  hasLink: true,
}
const dmMsg: NarrowableMessage = {
  id: 101,
  type: 'private',
  senderId: 2,
  senderEmail: 'othello@example.com',
  dmUsers: [
    { id: 1, email: 'me@example.com' },
    { id: 2, email: 'othello@example.com' },
  ],
  flags: FLAG_BITS.read | FLAG_BITS.is_private,
  content: 'hello',
}

t.test('matchesNarrow', async (t) => {
  const cases: [string, NarrowableMessage, unknown, boolean][] = [
    ['empty narrow', channelMsg, [], true],
    ['channel by name, case-insensitive', channelMsg, [['channel', 'denmark']], true],
    ['channel by id', channelMsg, [{ operator: 'channel', operand: 3 }], true],
    ['other channel', channelMsg, [['channel', 'Verona']], false],
    ['topic', channelMsg, [['channel', 'Denmark'], ['topic', '✔ castle']], true],
    ['negated topic', channelMsg, [{ operator: 'topic', operand: '✔ Castle', negated: true }], false],
    ['sender email', channelMsg, [['sender', 'othello@example.com']], true],
    ['sender id', channelMsg, [{ operator: 'sender', operand: 3 }], false],
    ['is:starred', channelMsg, [['is', 'starred']], true],
    ['is:unread', channelMsg, [['is', 'unread']], true],
    ['is:mentioned via wildcard', channelMsg, [['is', 'mentioned']], true],
    ['is:resolved', channelMsg, [['is', 'resolved']], true],
    ['is:dm on channel message', channelMsg, [['is', 'dm']], false],
    ['has:link', channelMsg, [['has', 'link']], true],
    ['has:image', channelMsg, [['has', 'image']], false],
    ['search all words', channelMsg, [['search', 'quick FOX']], true],
    ['search missing word', channelMsg, [['search', 'quick cat']], false],
    ['id', channelMsg, [{ operator: 'id', operand: 100 }], true],
    ['channels:public', channelMsg, [['channels', 'public']], true],
    ['dm by email', dmMsg, [['dm', 'othello@example.com']], true],
    ['dm by ids', dmMsg, [{ operator: 'dm', operand: [2] }], true],
    ['dm wrong set', dmMsg, [{ operator: 'dm', operand: [2, 5] }], false],
    ['is:dm', dmMsg, [['is', 'private']], true],
    ['dm-including', dmMsg, [{ operator: 'dm-including', operand: 2 }], true],
    ['group-pm-with on 1:1', dmMsg, [{ operator: 'group-pm-with', operand: 2 }], false],
    ['read dm not unread', dmMsg, [['is', 'unread']], false],
    ['in:home without mutes', channelMsg, [['in', 'home']], true],
  ]
  for (const [name, msg, narrow, expected] of cases) t.equal(matchesNarrow(msg, parseNarrow(narrow), me), expected, name)

  const muted = { ...me, isTopicMuted: () => true, isTopicFollowed: () => true }
  t.equal(matchesNarrow(channelMsg, parseNarrow([['in', 'home']]), muted), false)
  t.equal(matchesNarrow(channelMsg, parseNarrow([['is', 'muted']]), muted), true)
  t.equal(matchesNarrow(channelMsg, parseNarrow([['is', 'followed']]), muted), true)
})
