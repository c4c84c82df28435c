import t from 'tap'
import { ApiError } from '../../src/errors.js'
import {
  applyFlagOperation,
  FLAG_BITS,
  flagsToList,
  HISTORICAL_FLAGS,
  listToFlags,
  parseFlagOperation,
  recipientFlags,
  USER_SETTABLE_FLAGS,
} from '../../src/domain/flags.js'

t.test('bit order', async (t) => {
  t.equal(FLAG_BITS.read, 1)
  t.equal(FLAG_BITS.starred, 2)
  t.equal(FLAG_BITS.collapsed, 4)
  t.equal(FLAG_BITS.mentioned, 8)
  t.equal(FLAG_BITS.stream_wildcard_mentioned, 16)
  t.equal(FLAG_BITS.topic_wildcard_mentioned, 32)
  t.equal(FLAG_BITS.group_mentioned, 64)
  t.equal(FLAG_BITS.has_alert_word, 512)
  t.equal(FLAG_BITS.historical, 1024)
  t.equal(FLAG_BITS.is_private, 2048)
  t.equal(FLAG_BITS.active_mobile_push_notification, 4096)
  t.same(USER_SETTABLE_FLAGS, ['read', 'starred', 'collapsed'])
})

t.test('flagsToList / listToFlags', async (t) => {
  t.same(flagsToList(0), [])
  t.same(flagsToList(FLAG_BITS.read | FLAG_BITS.is_private | FLAG_BITS.active_mobile_push_notification), ['read'])
  t.same(flagsToList(FLAG_BITS.starred | FLAG_BITS.read | FLAG_BITS.topic_wildcard_mentioned), [
    'read',
    'starred',
    'topic_wildcard_mentioned',
    'wildcard_mentioned',
  ])
  t.same(flagsToList(HISTORICAL_FLAGS), ['read', 'historical'])
  t.equal(listToFlags(['read', 'starred']), 3)
  t.throws(() => listToFlags(['nope']), new ApiError("Invalid flag: 'nope'"))
})

t.test('parseFlagOperation', async (t) => {
  t.same(parseFlagOperation('starred', 'add'), { flag: 'starred', op: 'add', bit: 2 })
  const bad: [string, string, string][] = [
    ['bogus', 'add', "Invalid flag: 'bogus'"],
    ['mentioned', 'add', "Flag not editable: 'mentioned'"],
    ['is_private', 'remove', "Flag not editable: 'is_private'"],
    ['read', 'toggle', "Invalid message flag operation: 'toggle'"],
  ]
  for (const [flag, op, msg] of bad) {
    t.throws(() => parseFlagOperation(flag, op), { msg, code: 'BAD_REQUEST', status: 400 }, msg)
  }
  t.equal(applyFlagOperation(3, { op: 'remove', bit: 1 }), 2)
  t.equal(applyFlagOperation(2, { op: 'add', bit: 1 }), 3)
})

t.test('recipientFlags', async (t) => {
  const base = {
    isSender: false,
    mentioned: false,
    streamWildcard: false,
    topicWildcard: false,
    topicParticipant: false,
    alertWord: false,
    isPrivate: false,
    readBySender: false,
  }
  const cases: [string, Partial<typeof base> & { markRead?: boolean }, number][] = [
    ['plain recipient', {}, 0],
    ['sender, read_by_sender', { isSender: true, readBySender: true }, FLAG_BITS.read],
    ['sender, not read_by_sender', { isSender: true }, 0],
    ['recipient ignores readBySender', { readBySender: true }, 0],
    ['muted sender', { markRead: true }, FLAG_BITS.read],
    ['mentioned', { mentioned: true }, FLAG_BITS.mentioned],
    ['stream wildcard', { streamWildcard: true }, FLAG_BITS.stream_wildcard_mentioned],
    ['topic wildcard, participant', { topicWildcard: true, topicParticipant: true }, FLAG_BITS.topic_wildcard_mentioned],
    ['topic wildcard, not participant', { topicWildcard: true }, 0],
    ['alert word', { alertWord: true }, FLAG_BITS.has_alert_word],
    ['dm', { isPrivate: true }, FLAG_BITS.is_private],
  ]
  for (const [name, over, mask] of cases) t.equal(recipientFlags({ ...base, ...over }), mask, name)
})
