// The browser app's model (web/src/model): narrows and search syntax, and
// "register state + applied events = fresh register" against a real server
// for the events the app registers for.
import t, { type Test } from 'tap'
import type { FastifyInstance } from 'fastify'
import type { User } from '../../src/db/index.js'
import { buildTestApp } from '../support/app.js'
import { sendMultipart, TINY_PNG } from '../support/multipart.js'
import { customEmoji } from '../../web/src/model/custom-emoji.js'
import { as } from '../support/client.js'
import { bodyOf, expectSuccess } from '../support/expect.js'
import { checkEventSchemas, MODERN_CAPABILITIES } from '../support/events.js'
import { apply } from '../../web/src/model/apply.js'
import { FETCH_EVENT_TYPES, REGISTERED_EVENT_TYPES, type AppEvent } from '../../web/src/model/events.js'
import { conversationOf, dmKey, hashToNarrow, hashToTarget, matches, messageHash, narrowToHash, narrowTerms, parseSearch, type Narrow } from '../../web/src/model/narrow.js'
import { listKey } from '../../web/src/model/lists.js'
import { canDeleteMessage, canEditMessage, fromRegister, holdsGroupSetting, topicKey, type RegisterResponse, type State } from '../../web/src/model/state.js'
import { dmConversations, topicsOf, unreadCounts, VISIBILITY_FOLLOWED, VISIBILITY_MUTED, VISIBILITY_UNMUTED } from '../../web/src/model/unread.js'
import { recentConversations, type RecentFilter } from '../../web/src/model/recent.js'
import { noticeFor, removedMessageIds } from '../../web/src/model/push.js'
import { SOUND_NOTES, soundFor } from '../../web/src/model/sounds.js'
import { isDmMuted, isUserMuted, mutedUsersList, typingUsers } from '../../web/src/model/muted-users.js'
import { alerts } from '../../web/src/model/notifications.js'
import type { MessageEvent, WireSubscription } from '../../web/src/model/events.js'
import { formatDate, formatTime, sameDay } from '../../web/src/lib/time.js'
import { addToLists, emptyList, lowerBound, mergePage, type Lists } from '../../web/src/model/lists.js'
import { applyPresences, presenceStatus, timingOf } from '../../web/src/model/presence.js'
import { addTypist, removeTypist, typingKey, TypingNotifier, type TypingRecipient } from '../../web/src/model/typing.js'

t.test('search syntax becomes narrow terms', async (t) => {
  t.same(parseSearch('sender:ann@example.com topic:"lunch plans" hello world'), [
    { operator: 'sender', operand: 'ann@example.com' },
    { operator: 'topic', operand: 'lunch plans' },
    { operator: 'search', operand: 'hello world' },
  ])
  t.same(parseSearch('stream:general -is:starred has:link'), [
    { operator: 'channel', operand: 'general' },
    { operator: 'is', operand: 'starred', negated: true },
    { operator: 'has', operand: 'link' },
  ])
  t.same(parseSearch('unknown:thing'), [{ operator: 'search', operand: 'unknown:thing' }])
})

t.test('every narrow survives its address, and bad addresses are refused', async (t) => {
  const narrows: Narrow[] = [
    { kind: 'all' },
    { kind: 'channel', streamId: 4 },
    { kind: 'topic', streamId: 4, topic: 'a/b c?' },
    { kind: 'dm', userIds: [3, 9] },
    { kind: 'mentioned' },
    { kind: 'starred' },
    { kind: 'search', query: 'sender:x "y z"' },
  ]
  for (const n of narrows) t.same(hashToNarrow(narrowToHash(n)), n, narrowToHash(n))
  for (const bad of ['#channel/x', '#dm/1,a', '#nope', '#search/%E0%A4%A', '']) t.equal(hashToNarrow(bad), undefined, bad)
  t.same(narrowTerms({ kind: 'topic', streamId: 4, topic: 'x' }), [{ operator: 'channel', operand: 4 }, { operator: 'topic', operand: 'x' }])
})

t.test("a link to a message is its conversation's address with near/ID; with/ID follows the message", async (t) => {
  const topic = { id: 77, type: 'stream' as const, stream_id: 4, subject: 'a/near/5', sender_id: 2, display_recipient: 'g', flags: [] }
  t.same(conversationOf(topic, 1), { kind: 'topic', streamId: 4, topic: 'a/near/5' })
  t.equal(messageHash(conversationOf(topic, 1), 77), '#channel/4/topic/a%2Fnear%2F5/near/77', "a topic's own slashes are encoded")
  const dm = { id: 78, type: 'private' as const, subject: '', sender_id: 2, display_recipient: [{ id: 1 }, { id: 9 }, { id: 2 }], flags: [] }
  t.equal(messageHash(conversationOf(dm, 1), 78), '#dm/2,9/near/78', 'a direct conversation as the navigation links it (without the user)')
  t.equal(messageHash(conversationOf({ ...dm, display_recipient: [{ id: 1 }] }, 1), 79), '#dm/1/near/79', 'a conversation with oneself')
  const narrows: Narrow[] = [{ kind: 'all' }, { kind: 'channel', streamId: 4 }, { kind: 'topic', streamId: 4, topic: 'a/near/5' }, { kind: 'dm', userIds: [2, 9] }, { kind: 'starred' }, { kind: 'search', query: 'x/y' }]
  for (const narrow of narrows) {
    t.same(hashToTarget(messageHash(narrow, 77)), { narrow, near: 77 }, messageHash(narrow, 77))
    t.same(hashToTarget(messageHash(narrow, 77, 'with')), { narrow, near: 77, follow: true }, messageHash(narrow, 77, 'with'))
    t.same(hashToNarrow(messageHash(narrow, 77)), narrow, 'the narrow alone')
    t.same(hashToTarget(narrowToHash(narrow)), { narrow }, 'no message without near/ID')
  }
  t.same(hashToTarget('#channel/4/topic/near'), { narrow: { kind: 'topic', streamId: 4, topic: 'near' } }, 'a topic called "near"')
  t.same(hashToTarget('#channel/4/near/x'), { narrow: { kind: 'channel', streamId: 4 } }, 'near/ with no ID is ignored')
  t.equal(hashToTarget('#channel/x/near/5'), undefined, 'a bad narrow stays bad')
  // The search box's near: operator opens the rest of the query at the message.
  t.same(hashToTarget(narrowToHash({ kind: 'search', query: 'near:12' })), { narrow: { kind: 'all' }, near: 12 })
  t.same(hashToTarget(narrowToHash({ kind: 'search', query: 'topic:x near:12 lunch' })), { narrow: { kind: 'search', query: 'topic:x lunch' }, near: 12 })
  t.same(hashToTarget(narrowToHash({ kind: 'search', query: 'near:soon' })), { narrow: { kind: 'search', query: 'near:soon' } }, 'only a message ID')
  // A list opened at a message is kept apart from its conversation's.
  t.not(listKey({ kind: 'topic', streamId: 4, topic: 'x' }, 77), listKey({ kind: 'topic', streamId: 4, topic: 'x' }))
  t.equal(emptyList({ kind: 'all' }, 77).near, 77)
})

t.test('live messages match narrows; direct conversations by their members', async (t) => {
  const dm = { id: 1, type: 'private' as const, subject: '', sender_id: 2, display_recipient: [{ id: 1 }, { id: 2 }], flags: [] }
  t.equal(matches({ kind: 'dm', userIds: [2] }, dm, 1), true)
  t.equal(matches({ kind: 'dm', userIds: [2, 3] }, dm, 1), false)
  t.equal(dmKey([1], 1), '1')
  const topic = { id: 2, type: 'stream' as const, stream_id: 5, subject: 'Lunch', sender_id: 2, display_recipient: 'g', flags: ['starred'] }
  t.equal(matches({ kind: 'topic', streamId: 5, topic: 'lunch' }, topic, 1), true)
  t.equal(matches({ kind: 'starred' }, topic, 1), true)
  t.equal(matches({ kind: 'search', query: 'x' }, topic, 1), undefined)
})

const REGISTER = {
  client_capabilities: MODERN_CAPABILITIES,
  event_types: REGISTERED_EVENT_TYPES,
  fetch_event_types: FETCH_EVENT_TYPES,
  include_subscribers: true,
  slim_presence: true,
  apply_markdown: true,
  client_gravatar: false,
}

/** The parts of the state a fresh register determines (presence as statuses, not timestamps; loaded messages aside). */
function comparable(state: State) {
  const counts = unreadCounts(state)
  return {
    presence: [...state.users.keys()].sort((a, b) => a - b).map((id) => [id, presenceStatus(state, id)]),
    users: [...state.users.values()].sort((a, b) => a.id - b.id),
    subscriptions: [...state.subscriptions.values()].sort((a, b) => a.stream_id - b.stream_id),
    unread: [...state.unread].sort((a, b) => a[0] - b[0]),
    mentions: [...state.mentions].sort((a, b) => a - b),
    counts: { total: counts.total, mentions: counts.mentions, byStream: [...counts.byStream].sort(), byTopic: [...counts.byTopic].sort(), byDm: [...counts.byDm].sort() },
    userStatus: [...state.userStatus].sort((a, b) => a[0] - b[0]),
    settings: state.settings,
    userTopics: [...state.userTopics].sort(),
    drafts: [...state.drafts.values()].sort((a, b) => a.id - b.id),
    alertWords: state.alertWords,
    recentDms: [...state.recentDms].sort(),
    scheduledMessages: [...state.scheduledMessages.values()].sort((a, b) => a.scheduled_message_id - b.scheduled_message_id),
    realmEmoji: [...state.realmEmoji].sort(),
    mutedUsers: [...state.mutedUsers].sort((a, b) => a[0] - b[0]),
    realm: { name: state.realmName, allowEditing: state.allowEditing, edit: state.editLimitSeconds, delete: state.deleteLimitSeconds, deleteOwn: state.canDeleteOwn, deleteAny: state.canDeleteAny },
    groups: [...state.groups].sort((a, b) => a[0] - b[0]),
  }
}

async function register(app: FastifyInstance, user: User): Promise<RegisterResponse> {
  return expectSuccess(t, await as(app, user).post('/register', REGISTER)) as unknown as RegisterResponse
}

/** Registers, runs fn, applies every event to the first state, and compares it with a fresh register's. */
async function checkState(t: Test, app: FastifyInstance, user: User, fn: () => Promise<unknown>, expectTypes: string[]): Promise<State> {
  const reg = await register(app, user)
  const state = fromRegister(reg)
  const lists: Lists = new Map([['#all', { ...emptyList({ kind: 'all' }), foundNewest: true, foundOldest: true }]])
  await fn()
  const client = as(app, user)
  const first = bodyOf(await client.get('/events', { queue_id: reg.queue_id, last_event_id: reg.last_event_id }))
  const last = (first.events as { id: number }[]).reduce((m, e) => Math.max(m, e.id), reg.last_event_id)
  const rest = bodyOf(await client.get('/events', { queue_id: reg.queue_id, last_event_id: last, dont_block: true }))
  const events = [...(first.events as AppEvent[]), ...(rest.events as AppEvent[])]
  checkEventSchemas(events as unknown as Record<string, unknown>[])
  const types = new Set(events.map((e) => e.type))
  for (const type of expectTypes) t.ok(types.has(type as AppEvent['type']), `received ${type}`)
  for (const event of events) apply(state, lists, event)
  t.equal(state.lastEventId, Math.max(reg.last_event_id, ...events.map((e) => (e as unknown as { id: number }).id)))
  const fresh = fromRegister(await register(app, user))
  t.same(comparable(state), comparable(fresh), 'state + events = fresh register')
  return state
}

t.test("a Web Push payload becomes the service worker's notification and the conversation its click opens", async (t) => {
  const base = { event: 'message', user_id: 5, sender_id: 7, sender_full_name: 'Ann', zulip_message_id: 42, content: 'hi <b>there</b>' }
  t.same(noticeFor({ ...base, recipient_type: 'stream', stream: 'general', stream_id: 3, topic: 'a/b' }), {
    tag: 'roost-42', messageId: 42, icon: undefined, title: '#general > a/b', body: 'Ann: hi <b>there</b>', hash: '#channel/3/topic/a%2Fb',
  })
  t.match(noticeFor({ ...base, recipient_type: 'private' }), { title: 'Ann', body: 'hi <b>there</b>', hash: '#dm/7' })
  t.match(noticeFor({ ...base, recipient_type: 'private', pm_users: '5,7,9' }), { title: 'Ann (group)', hash: '#dm/7,9' })
  t.equal(noticeFor({ ...base, recipient_type: 'stream', stream: 'g', stream_id: 3, topic: 'x y/ü' })!.hash, narrowToHash({ kind: 'topic', streamId: 3, topic: 'x y/ü' }), "the app's own address of a topic")
  t.equal(noticeFor({ ...base, recipient_type: 'private', pm_users: '9,5,7' })!.hash, narrowToHash({ kind: 'dm', userIds: [9, 7] }), 'and of a direct conversation')
  t.equal(noticeFor({ ...base, event: 'remove' }), undefined, 'a removal shows nothing')
  t.same(removedMessageIds({ event: 'remove', zulip_message_ids: '40,41,42', zulip_message_id: 40 }), [40, 41, 42])
  t.same(removedMessageIds(base), [], 'a message removes nothing')
})

t.test('which new message plays the notification sound (and which sound) and which notifies on the desktop', async (t) => {
  const me = 5
  const sub = (streamId: number, extra: Partial<WireSubscription> = {}) => ({ stream_id: streamId, name: `c${streamId}`, is_muted: false, audible_notifications: null, wildcard_mentions_notify: null, ...extra }) as WireSubscription
  const defaults = { notification_sound: 'ding', enable_sounds: true, enable_stream_audible_notifications: false, enable_followed_topic_audible_notifications: true, wildcard_mentions_notify: true, enable_followed_topic_wildcard_mentions_notify: true }
  const stateWith = (settings: Record<string, unknown> = {}, policies: [number, string, number][] = []) =>
    fromRegister({
      muted_users: settings.muted === true ? [{ id: 7, timestamp: 1 }] : [],
      queue_id: 'q', last_event_id: -1, user_id: me,
      subscriptions: [sub(1), sub(2, { audible_notifications: true }), sub(3, { is_muted: true, audible_notifications: true }), sub(4, { is_muted: true, wildcard_mentions_notify: true })],
      user_settings: { ...defaults, ...settings },
      user_topics: policies.map(([stream_id, topic_name, visibility_policy]) => ({ stream_id, topic_name, visibility_policy })),
    })
  const channel = (streamId: number, flags: string[] = [], topic = 't', sender = 7) =>
    ({ message: { id: 1, type: 'stream', stream_id: streamId, subject: topic, sender_id: sender, display_recipient: `c${streamId}` }, flags }) as unknown as Pick<MessageEvent, 'message' | 'flags'>
  const direct = (flags: string[] = [], sender = 7) =>
    ({ message: { id: 2, type: 'private', subject: '', sender_id: sender, display_recipient: [{ id: me }, { id: sender }] }, flags }) as unknown as Pick<MessageEvent, 'message' | 'flags'>
  const state = stateWith()
  const cases: [string, ReturnType<typeof stateWith>, Pick<MessageEvent, 'message' | 'flags'>, string | undefined][] = [
    ['a direct message', state, direct(), 'ding'],
    ['one of my own', state, direct([], me), undefined],
    ['one already read', state, direct(['read']), undefined],
    ['a mention in a channel without sounds', state, channel(1, ['mentioned']), 'ding'],
    ['a group mention', state, channel(1, ['group_mentioned']), 'ding'],
    ['an alert word', state, channel(1, ['has_alert_word']), 'ding'],
    ['a plain message in a channel without sounds', state, channel(1), undefined],
    ['a message in a channel whose sound is on', state, channel(2), 'ding'],
    ['a channel inheriting enable_stream_audible_notifications', stateWith({ enable_stream_audible_notifications: true }), channel(1), 'ding'],
    ['a channel whose own setting overrides the default', stateWith({ enable_stream_audible_notifications: true }), channel(2), 'ding'],
    ['a muted channel, even with its sound on', state, channel(3), undefined],
    ['a mention in a muted channel', state, channel(3, ['mentioned']), 'ding'],
    ['an unmuted topic of a muted channel', stateWith({}, [[3, 'T', VISIBILITY_UNMUTED]]), channel(3), 'ding'],
    ['a muted topic of a channel whose sound is on', stateWith({}, [[2, 't', 1]]), channel(2), undefined],
    ['@all in a muted channel that notifies of them', state, channel(4, ['stream_wildcard_mentioned']), 'ding'],
    ['@all in a channel (wildcard_mentions_notify inherited)', state, channel(1, ['stream_wildcard_mentioned']), 'ding'],
    ['@all in a channel with wildcard_mentions_notify off', stateWith({ wildcard_mentions_notify: false, enable_followed_topic_wildcard_mentions_notify: false }), channel(1, ['topic_wildcard_mentioned']), undefined],
    ['a followed topic', stateWith({}, [[1, 't', VISIBILITY_FOLLOWED]]), channel(1), 'ding'],
    ['a followed topic of a muted channel', stateWith({}, [[4, 't', VISIBILITY_FOLLOWED]]), channel(4), 'ding'],
    ['a followed topic without its sound', stateWith({ enable_followed_topic_audible_notifications: false }, [[1, 't', VISIBILITY_FOLLOWED]]), channel(1), undefined],
    ['a direct message with enable_sounds off', stateWith({ enable_sounds: false }), direct(), undefined],
    ['a mention with enable_sounds off', stateWith({ enable_sounds: false }), channel(1, ['mentioned']), undefined],
    ['a channel whose sound is on, with enable_sounds off', stateWith({ enable_sounds: false }), channel(2), 'ding'],
    ['a direct message with the sound none', stateWith({ notification_sound: 'none' }), direct(), undefined],
    ['a channel whose sound is on, with the sound none', stateWith({ notification_sound: 'none' }), channel(2), undefined],
    ['a direct message from a muted sender (even if it arrived unread)', stateWith({ muted: true }), direct(), undefined],
    ['the chosen sound', stateWith({ notification_sound: 'chime-bell' }), direct(), 'chime-bell'],
    ["upstream's default when the setting is missing", stateWith({ notification_sound: undefined }), direct(), 'zulip'],
  ]
  for (const [what, s, event, expected] of cases) t.equal(soundFor(s, event), expected, what)

  // Desktop notifications: the same decision, with the desktop settings.
  const desktopDefaults = { enable_desktop_notifications: true, enable_stream_desktop_notifications: false, enable_followed_topic_desktop_notifications: true, enable_stream_audible_notifications: true, enable_followed_topic_audible_notifications: false, enable_sounds: false }
  const desktopState = (settings: Record<string, unknown> = {}, policies: [number, string, number][] = []) => stateWith({ ...desktopDefaults, ...settings }, policies)
  const d = desktopState()
  const desktopCases: [string, ReturnType<typeof stateWith>, Pick<MessageEvent, 'message' | 'flags'>, boolean][] = [
    ['a direct message', d, direct(), true],
    ['a mention', d, channel(1, ['mentioned']), true],
    ['an alert word', d, channel(1, ['has_alert_word']), true],
    ['@all where the channel notifies of them', d, channel(1, ['stream_wildcard_mentioned']), true],
    ['a plain channel message (the sound settings aside)', d, channel(1), false],
    ['a direct message with enable_desktop_notifications off', desktopState({ enable_desktop_notifications: false }), direct(), false],
    ['a mention with enable_desktop_notifications off', desktopState({ enable_desktop_notifications: false }), channel(1, ['mentioned']), false],
    ['an alert word with enable_desktop_notifications off', desktopState({ enable_desktop_notifications: false }), channel(1, ['has_alert_word']), false],
    ['a channel inheriting enable_stream_desktop_notifications', desktopState({ enable_stream_desktop_notifications: true, enable_desktop_notifications: false }), channel(1), true],
    ['a channel whose own desktop setting is on', fromRegister({ queue_id: 'q', last_event_id: -1, user_id: me, subscriptions: [sub(1, { desktop_notifications: true })], user_settings: desktopDefaults }), channel(1), true],
    ['a muted channel whose desktop setting is on', desktopState({ enable_stream_desktop_notifications: true }), channel(3), false],
    ['a mention in a muted channel', d, channel(3, ['mentioned']), true],
    ['a muted topic', desktopState({}, [[1, 't', VISIBILITY_MUTED]]), channel(1, ['has_alert_word']), false],
    ['a followed topic', desktopState({}, [[1, 't', VISIBILITY_FOLLOWED]]), channel(1), true],
    ['a followed topic without enable_followed_topic_desktop_notifications', desktopState({ enable_followed_topic_desktop_notifications: false }, [[1, 't', VISIBILITY_FOLLOWED]]), channel(1), false],
    ['one of my own', d, direct([], me), false],
    ['one already read', d, direct(['read']), false],
  ]
  for (const [what, s, event, expected] of desktopCases) t.equal(alerts(s, event, 'desktop'), expected, `desktop: ${what}`)

  const names = ['zulip', 'ding', 'chime-bell']
  t.same(Object.keys(SOUND_NOTES).sort(), [...names].sort(), "every sound of register's available_notification_sounds but none")
  const signature = (name: string) => JSON.stringify(SOUND_NOTES[name]!.map((n) => [n.wave, n.frequency]))
  t.equal(new Set(names.map(signature)).size, names.length, 'each a distinct set of notes')
})

t.test("a message's time and date: the user's 12- or 24-hour clock, one formatter each", async (t) => {
  const at = Date.UTC(2026, 10, 29, 15, 7) / 1000
  t.equal(formatTime(at, true), new Date(at * 1000).toLocaleTimeString(undefined, { hour: 'numeric', minute: '2-digit', hour12: false }))
  t.equal(formatTime(at, false), new Date(at * 1000).toLocaleTimeString(undefined, { hour: 'numeric', minute: '2-digit', hour12: true }))
  t.not(formatTime(at, true), formatTime(at, false), 'the two clocks differ')
  t.equal(formatDate(at), new Date(at * 1000).toLocaleDateString(undefined, { weekday: 'short', year: 'numeric', month: 'short', day: 'numeric' }))
  const midnight = new Date(2026, 10, 29).getTime() / 1000
  t.ok(sameDay(midnight, midnight + 86399))
  t.notOk(sameDay(midnight - 1, midnight), 'a second before local midnight is the day before')
  t.notOk(sameDay(midnight, midnight + 365 * 86400), 'the same date a year later')
})

t.test('pages merge into a message list: joined at its ends, sorted only when they fall between loaded IDs', async (t) => {
  t.equal(lowerBound([], 5), 0)
  t.same([0, 9, 10, 11, 40, 41].map((id) => lowerBound([10, 20, 30, 40], id)), [0, 0, 0, 1, 3, 4])
  const state = { messages: new Map() } as unknown as State
  const message = (id: number) => ({ id, type: 'stream', stream_id: 1, subject: 't', sender_id: 2, display_recipient: 'general', flags: [] }) as never
  const page = (...ids: number[]) => ids.map(message)
  const list = emptyList({ kind: 'channel', streamId: 1 })
  mergePage(state, list, page(52, 50, 51), { foundNewest: true })
  t.same(list.ids, [50, 51, 52], 'the first page, sorted')
  t.same([list.foundOldest, list.foundNewest], [false, true])
  const before = list.ids
  // A page fetched by scrolling up holds its anchor (the oldest loaded) too.
  mergePage(state, list, page(47, 48, 49, 50), {})
  t.same(list.ids, [47, 48, 49, 50, 51, 52], 'an older page joins at the front, its anchor not twice')
  t.not(list.ids, before, 'as a new array')
  mergePage(state, list, page(52, 53, 54), {})
  t.same(list.ids, [47, 48, 49, 50, 51, 52, 53, 54], 'a newer page joins at the end')
  const same = list.ids
  mergePage(state, list, page(48, 50), {})
  t.equal(list.ids, same, 'a page of loaded IDs changes nothing')
  mergePage(state, list, page(45, 47), { foundOldest: true })
  t.same(list.ids, [45, 47, 48, 49, 50, 51, 52, 53, 54])
  t.ok(list.foundOldest)
  mergePage(state, list, page(46, 60), {})
  t.same(list.ids, [45, 46, 47, 48, 49, 50, 51, 52, 53, 54, 60], 'a page with an ID between loaded ones is merged in order')
  t.equal(state.messages.size, 11, 'every message is kept in the state, once')
  const lists: Lists = new Map([['c', list]])
  const held = list.ids
  addToLists(lists, message(61), 9)
  t.same(list.ids.slice(-2), [60, 61], 'a live message is appended')
  t.not(list.ids, held, 'as a new array: views compare IDs by identity')
})

/** Recent conversations with no filter: every channel, read or not, whoever wrote, muted ones left out. */
const ALL: RecentFilter = { channel: 'all', unreadOnly: false, participated: false, includeMuted: false }

t.test('recent conversations: the participated and include-muted filters, and rows after deletions', async (t) => {
  const SELF = 1, ANN = 2, BOB = 3
  const sub = (streamId: number, name: string, isMuted: boolean) => ({ stream_id: streamId, name, is_muted: isMuted, in_home_view: !isMuted }) as never
  const state = fromRegister({
    queue_id: 'q', last_event_id: -1, user_id: SELF,
    subscriptions: [sub(10, 'general', false), sub(20, 'quiet', true)],
    user_topics: [
      { stream_id: 10, topic_name: 'hushed', visibility_policy: VISIBILITY_MUTED },
      { stream_id: 20, topic_name: 'kept', visibility_policy: VISIBILITY_UNMUTED },
      { stream_id: 20, topic_name: 'followed', visibility_policy: VISIBILITY_FOLLOWED },
    ],
    // Only the newest ID of the conversation with Bob is known: none of its messages is loaded.
    recent_private_conversations: [{ max_message_id: 90, user_ids: [ANN] }, { max_message_id: 95, user_ids: [BOB] }],
  })
  const lists: Lists = new Map()
  const base = { flags: ['read'], content: '', timestamp: 0, reactions: [], avatar_url: null, sender_full_name: '', sender_email: '' }
  const load = (id: number, senderId: number, where: { streamId: number; topic: string } | { dmWith: number }) =>
    state.messages.set(id, 'streamId' in where
      ? { ...base, id, sender_id: senderId, type: 'stream', stream_id: where.streamId, subject: where.topic, display_recipient: 'x' }
      : { ...base, id, sender_id: senderId, type: 'private', subject: '', display_recipient: [{ id: SELF }, { id: where.dmWith }] })
  load(50, ANN, { streamId: 10, topic: 'plans' })
  load(60, SELF, { streamId: 10, topic: 'plans' })
  load(70, ANN, { streamId: 10, topic: 'plans' })
  load(51, ANN, { streamId: 10, topic: 'lunch' })
  load(52, SELF, { streamId: 10, topic: 'hushed' })
  load(53, ANN, { streamId: 20, topic: 'noise' })
  load(54, ANN, { streamId: 20, topic: 'kept' })
  load(55, SELF, { streamId: 20, topic: 'followed' })
  load(80, SELF, { dmWith: ANN })
  load(90, ANN, { dmWith: ANN })
  const keys = (filter: Partial<RecentFilter>) => recentConversations(state, { ...ALL, ...filter }).map((r) => r.key.slice(2))
  const row = (key: string) => recentConversations(state, { ...ALL, includeMuted: true }).find((r) => r.key.slice(2) === key)

  t.same(keys({}), [String(BOB), String(ANN), '10\0plans', '20\0followed', '20\0kept', '10\0lunch'],
    'muted topics and the other topics of a muted channel are left out; a topic unmuted or followed there is shown')
  t.same(keys({ participated: true }), [String(ANN), '10\0plans', '20\0followed'], 'participated: a loaded message of the user in the conversation')
  t.same(keys({ includeMuted: true }), [String(BOB), String(ANN), '10\0plans', '20\0followed', '20\0kept', '20\0noise', '10\0hushed', '10\0lunch'], 'include muted: all of them')
  t.same(keys({ includeMuted: true, participated: true }), [String(ANN), '10\0plans', '20\0followed', '10\0hushed'])
  t.same(keys({ channel: 20 }), ['20\0followed', '20\0kept', '20\0noise'], 'a muted channel chosen shows its topics')
  t.same(keys({ channel: 10 }), ['10\0plans', '10\0lunch'], 'but never a topic muted on its own, unless muted ones are included')
  t.same([row('10\0hushed')?.muted, row('20\0noise')?.muted, row('20\0kept')?.muted, row('20\0followed')?.muted, row('10\0plans')?.muted], [true, true, false, false, false], 'muted rows are marked')
  t.match(row('10\0plans'), { maxId: 70, senderIds: [ANN, SELF], participated: true })

  const remove = (ids: number[], where: { stream_id: number; topic: string } | 'private') =>
    apply(state, lists, where === 'private' ? { type: 'delete_message', message_type: 'private', message_ids: ids } : { type: 'delete_message', message_type: 'stream', message_ids: ids, ...where })
  remove([70], { stream_id: 10, topic: 'plans' })
  t.match(row('10\0plans'), { maxId: 60, senderIds: [SELF, ANN], participated: true }, "the topic's newest message deleted: the newest loaded one left takes its place")
  remove([60], { stream_id: 10, topic: 'plans' })
  t.match(row('10\0plans'), { maxId: 50, senderIds: [ANN], participated: false }, "and once the user's own message is gone, the user no longer took part")
  remove([50], { stream_id: 10, topic: 'plans' })
  t.equal(row('10\0plans'), undefined, 'with no loaded message left, the row goes')

  remove([90], 'private')
  t.match(row(String(ANN)), { maxId: 80, senderIds: [SELF], participated: true }, 'a direct conversation falls back to its newest loaded message')
  t.same([...state.emptiedDms], [], 'with no question to the server')
  remove([95], 'private')
  t.equal(row(String(BOB)), undefined, 'a conversation known only from recent_private_conversations goes when its newest message is deleted')
  t.same([...state.emptiedDms], [String(BOB)], 'and is marked for the server to say whether older messages remain')
  remove([80], 'private')
  t.equal(row(String(ANN)), undefined)
  t.same([...state.emptiedDms], [String(BOB), String(ANN)])
})

t.test('muted users: the list, direct conversations made only of them, and the muted_users event', async (t) => {
  const SELF = 1, ANN = 2, BOB = 3
  const state = fromRegister({
    queue_id: 'q', last_event_id: -1, user_id: SELF,
    realm_users: [ANN, BOB].map((id) => ({ user_id: id, full_name: id === ANN ? 'Ann' : 'Bob', email: `${id}@x`, avatar_url: null, is_bot: false, role: 400 }) as never),
    muted_users: [{ id: ANN, timestamp: 100 }],
    recent_private_conversations: [{ max_message_id: 10, user_ids: [ANN] }, { max_message_id: 11, user_ids: [ANN, BOB] }, { max_message_id: 12, user_ids: [BOB] }, { max_message_id: 13, user_ids: [] }],
  })
  state.unread.set(9, { kind: 'dm', key: String(ANN) })
  t.ok(isUserMuted(state, ANN))
  t.notOk(isUserMuted(state, BOB))
  t.same([isDmMuted(state, String(ANN)), isDmMuted(state, `${ANN},${BOB}`), isDmMuted(state, String(SELF))], [true, false, false], 'only a conversation whose other members are all muted; never one with oneself')
  t.same(dmConversations(state).map((c) => c.key), [String(SELF), String(BOB), `${ANN},${BOB}`], 'the unread direct message from a muted user does not list the conversation (the others come from recent_private_conversations)')
  const keys = (filter: Partial<RecentFilter>) => recentConversations(state, { ...ALL, ...filter }).map((r) => r.key.slice(2))
  t.same(keys({}), [String(SELF), String(BOB), `${ANN},${BOB}`], 'recent conversations leave out the one with only a muted user')
  t.same(keys({ includeMuted: true, channel: 'dm' }), [String(SELF), String(BOB), `${ANN},${BOB}`], 'muted conversations included or not')

  state.typing.set('d:2,3', new Set([ANN, BOB, SELF]))
  t.same(typingUsers(state, 'd:2,3'), [BOB], 'a muted user typing is not named, nor oneself')
  const dmFrom = (sender: number) => ({ message: { id: 20, type: 'private', subject: '', sender_id: sender, display_recipient: [{ id: SELF }, { id: sender }], content: '' }, flags: [] }) as unknown as Pick<MessageEvent, 'message' | 'flags'>
  t.same([alerts(state, dmFrom(BOB), 'desktop'), alerts(state, dmFrom(ANN), 'desktop'), alerts(state, dmFrom(SELF), 'desktop')], [true, false, false], "a desktop notification for a direct message, never a muted sender's or one's own")
  t.equal(soundFor({ ...state, settings: { enable_sounds: true } }, dmFrom(ANN)), undefined, "and no sound for a muted sender's")

  apply(state, new Map(), { type: 'muted_users', muted_users: [{ id: ANN, timestamp: 100 }, { id: BOB, timestamp: 200 }] })
  t.same(mutedUsersList(state), [{ id: BOB, name: 'Bob', timestamp: 200 }, { id: ANN, name: 'Ann', timestamp: 100 }], 'the whole list replaced, most recently muted first')
  t.same(keys({}), [String(SELF)], 'a group of muted users is left out too')
  apply(state, new Map(), { type: 'muted_users', muted_users: [] })
  t.same(keys({}), [String(SELF), String(BOB), `${ANN},${BOB}`, String(ANN)], 'unmuting brings the conversations back')
  t.same(dmConversations(state).map((c) => c.key), [String(SELF), String(BOB), `${ANN},${BOB}`, String(ANN)])
})

t.test("presence: upstream's active, idle and offline, judged at the server's time of the newest data", async (t) => {
  const ME = 1
  const state = fromRegister({
    queue_id: 'q', last_event_id: -1, user_id: ME, server_presence_offline_threshold_seconds: 200,
    presences: { 2: { active_timestamp: 1000, idle_timestamp: 1000 }, 3: { active_timestamp: 700, idle_timestamp: 1000 }, 4: { active_timestamp: 700, idle_timestamp: 750 } },
    server_timestamp: 1100, presence_last_update_id: 7,
  } as RegisterResponse)
  t.same([2, 3, 4, 5].map((id) => presenceStatus(state, id)), ['active', 'idle', 'offline', 'offline'], 'active report within 200 s; else an idle one; else offline; none is offline')
  t.equal(presenceStatus(state, ME), 'active', 'the user sees themself active')
  state.settings.presence_enabled = false
  t.equal(presenceStatus(state, ME), 'offline', 'and offline when not sharing presence')
  t.equal(state.presenceLastUpdateId, 7)
  // A later answer lists only what changed since last_update_id; the rest is judged again at its time.
  applyPresences(state, { presences: { 4: { active_timestamp: 1290, idle_timestamp: 1290 } }, server_timestamp: 1300, presence_last_update_id: 9 })
  t.same([2, 3, 4].map((id) => presenceStatus(state, id)), ['offline', 'offline', 'active'], 'not heard from in 200 s: offline')
  t.equal(state.presenceLastUpdateId, 9)
  applyPresences(state, { presence_last_update_id: 9 })
  t.equal(state.presenceServerTime, 1300, 'a ping-only answer changes nothing')
  t.equal(presenceStatus(fromRegister({ queue_id: 'q', last_event_id: -1, user_id: ME, presences: { 2: { website: { status: 'idle', timestamp: 990 } } }, server_timestamp: 1100 } as RegisterResponse), 2), 'idle', 'the legacy per-client form')
  t.same(timingOf({}), { presencePingSeconds: 60, presenceOfflineSeconds: 140, typingExpiryMs: 15_000, typingStartedWaitMs: 10_000, typingStoppedWaitMs: 5_000 }, "upstream's values for a server that sends none")
})

t.test('typing notifications: start at once and again each wait period, stop when idle, emptied, retargeted or closed', async (t) => {
  let now = 0
  const sent: string[] = []
  const timers = new Map<number, { at: number; fn: () => void }>()
  let nextTimer = 1
  const notifier = new TypingNotifier(
    {
      now: () => now,
      send: (to, op) => sent.push(`${op} ${to.type === 'stream' ? to.topic : to.userIds.join()}`),
      setTimer: (fn, ms) => (timers.set(nextTimer, { at: now + ms, fn }), nextTimer++),
      clearTimer: (id) => timers.delete(id as number),
    },
    () => ({ startedWaitMs: 10_000, stoppedWaitMs: 5_000 }),
  )
  const advance = (ms: number) => {
    now += ms
    for (const [id, timer] of [...timers]) if (timer.at <= now) (timers.delete(id), timer.fn())
  }
  const lunch: TypingRecipient = { type: 'stream', streamId: 1, topic: 'lunch' }
  notifier.update(lunch)
  for (let i = 0; i < 6; i++) (advance(2_000), notifier.update({ ...lunch, topic: 'Lunch' }))
  t.same(sent, ['start lunch', 'start lunch'], 'one start, another after 10 s of typing (topics without regard to case)')
  advance(4_999)
  t.equal(sent.length, 2)
  advance(1)
  t.same(sent.slice(2), ['stop lunch'], 'a stop 5 s after the last keystroke')
  notifier.update(lunch)
  notifier.update(null)
  t.same(sent.slice(3), ['start lunch', 'stop lunch'], 'emptying the text stops at once')
  notifier.update(lunch)
  notifier.update({ type: 'direct', userIds: [7, 3] })
  t.same(sent.slice(5), ['start lunch', 'stop lunch', 'start 7,3'], 'another conversation: a stop to the first, a start to it')
  notifier.recipientChanged({ type: 'direct', userIds: [3, 7] })
  t.equal(sent.length, 8, 'the same people in another order are the same conversation')
  notifier.recipientChanged(lunch)
  notifier.stop()
  t.same(sent.slice(8), ['stop 7,3'], 'a recipient changed outside the text: one stop, no start; closing sends nothing more')
  t.equal(timers.size, 0, 'no timer left')

  const state = fromRegister({ queue_id: 'q', last_event_id: -1, user_id: 1 })
  const key = typingKey({ type: 'direct', userIds: [1, 2] }, 1)
  t.equal(key, typingKey({ type: 'direct', userIds: [2] }, 1), 'a direct conversation is keyed by the others in it')
  addTypist(state, key, 2)
  addTypist(state, key, 3)
  removeTypist(state, key, 2)
  t.same([...state.typing.get(key)!], [3])
  removeTypist(state, key, 3)
  t.notOk(state.typing.has(key), 'the last typist gone, the conversation is gone')
})

t.test('state + events = fresh register', async (t) => {
  const { app, fx } = await buildTestApp(t)
  const member = await fx.user('member')
  const other = await fx.user('otherMember')
  const admin = await fx.user('admin')
  const general = fx.streams.general
  const send = (from: User, params: Record<string, unknown>) => as(app, from).post('/messages', params)
  const sent = async (from: User, params: Record<string, unknown>) => expectSuccess(t, await send(from, params)).id as number

  t.test('new messages: channel, mention, direct, own', async (t) => {
    const state = await checkState(t, app, member, async () => {
      await sent(other, { type: 'stream', to: general.id, topic: 'lunch', content: 'hello' })
      await sent(other, { type: 'stream', to: general.id, topic: 'lunch', content: `@**${member.fullName}** look` })
      await sent(other, { type: 'direct', to: JSON.stringify([member.id]), content: 'psst' })
      await sent(member, { type: 'stream', to: general.id, topic: 'mine', content: 'own' })
    }, ['message'])
    const counts = unreadCounts(state)
    t.ok(counts.byStream.get(general.id)! >= 2, 'channel unread counted')
    t.equal(counts.byDm.get(String(other.id)), 1)
    t.equal(state.recentDms.get(String(other.id)), Math.max(...[...state.messages.values()].filter((m) => m.type === 'private').map((m) => m.id)), 'the direct conversation is recent')
  })

  t.test('recent conversations: one row per topic and direct conversation, newest first, filtered', async (t) => {
    const group = await sent(other, { type: 'direct', to: JSON.stringify([member.id, admin.id]), content: 'three of us' })
    const topic = await sent(other, { type: 'stream', to: general.id, topic: 'Recent', content: 'a topic' })
    const state = fromRegister(await register(app, member))
    const rows = recentConversations(state, ALL)
    // Register's unread messages and recent direct conversations, no message loaded.
    t.match(rows.slice(0, 2), [
      { kind: 'topic', streamId: general.id, topic: 'Recent', maxId: topic, unread: 1 },
      { kind: 'dm', userIds: [admin.id, other.id].sort((a, b) => a - b), maxId: group, unread: 1 },
    ])
    t.same(new Set(rows.map((r) => r.key)).size, rows.length, 'one row each')
    t.ok(rows.every((r, i) => i === 0 || rows[i - 1]!.maxId >= r.maxId), 'newest first')
    t.ok(recentConversations(state, { ...ALL, channel: 'dm' }).every((r) => r.kind === 'dm'))
    t.ok(recentConversations(state, { ...ALL, channel: general.id, unreadOnly: true }).every((r) => r.kind === 'topic' && r.streamId === general.id && r.unread > 0))
    state.userTopics.set(topicKey(general.id, 'recent'), VISIBILITY_MUTED)
    t.notOk(recentConversations(state, ALL).some((r) => r.kind === 'topic' && r.topic === 'Recent'), 'a muted topic is left out')
  })

  t.test("the navigation's direct conversations include recent_private_conversations, none of whose messages is loaded", async (t) => {
    const old = await sent(admin, { type: 'direct', to: JSON.stringify([member.id]), content: 'an old conversation' })
    expectSuccess(t, await as(app, member).post('/messages/flags', { messages: JSON.stringify([old]), op: 'add', flag: 'read' }))
    const state = fromRegister(await register(app, member))
    t.equal(state.messages.size, 0, 'no message loaded')
    t.match(dmConversations(state).find((d) => d.key === String(admin.id)), { maxId: old })
  })

  t.test("a channel's topics: the server's list + events = a fresh list", async (t) => {
    const channel = fx.streams.general
    const oldTopic = await sent(other, { type: 'stream', to: channel.id, topic: 'Long ago', content: 'old' })
    expectSuccess(t, await as(app, member).post('/messages/flags', { messages: JSON.stringify([oldTopic]), op: 'add', flag: 'read' }))
    const moved = await sent(other, { type: 'stream', to: channel.id, topic: 'to move', content: 'x' })
    const doomed = await sent(other, { type: 'stream', to: channel.id, topic: 'doomed', content: 'y' })
    const reg = await register(app, member)
    const state = fromRegister(reg)
    const fetch = async () => (expectSuccess(t, await as(app, member).get(`/users/me/${channel.id}/topics`)).topics as { name: string; max_id: number }[])
    t.notOk(topicsOf(state, channel.id).some((tp) => tp.topic === 'Long ago'), 'an old topic is unknown before the fetch')
    state.streamTopics.set(channel.id, new Map((await fetch()).map((tp) => [tp.name.toLowerCase(), { topic: tp.name, maxId: tp.max_id }])))
    t.match(topicsOf(state, channel.id).find((tp) => tp.topic === 'Long ago'), { maxId: oldTopic }, "and listed from the server's list")
    const fresh = await sent(other, { type: 'stream', to: channel.id, topic: 'new one', content: 'z' })
    expectSuccess(t, await as(app, other).patch(`/messages/${moved}`, { topic: 'moved here', propagate_mode: 'change_all' }))
    expectSuccess(t, await as(app, admin).delete(`/messages/${doomed}`))
    const events = bodyOf(await as(app, member).get('/events', { queue_id: reg.queue_id, last_event_id: reg.last_event_id, dont_block: true })).events as AppEvent[]
    for (const event of events) apply(state, new Map(), event)
    t.same([...state.staleTopics], [channel.id], "a deleted topic's newest message, none loaded: the channel is fetched again")
    const listed = (topics: { topic: string; maxId: number }[]) => topics.map((tp) => [tp.topic, tp.maxId]).sort()
    t.same(listed([...state.streamTopics.get(channel.id)!.values()]), listed((await fetch()).map((tp) => ({ topic: tp.name, maxId: tp.max_id }))), 'state + events = a fresh list')
    t.same(topicsOf(state, channel.id).slice(0, 2).map((tp) => tp.topic), ['moved here', 'new one'], 'newest first (the move notice is the newest message)')
    t.match(topicsOf(state, channel.id)[1], { maxId: fresh })
  })

  t.test('presence: another user comes online', async (t) => {
    const state = await checkState(t, app, member, async () => {
      expectSuccess(t, await as(app, other).post('/users/me/presence', { status: 'active', ping_only: true }))
    }, ['presence'])
    t.equal(presenceStatus(state, other.id), 'active')
    t.equal(state.timing.presencePingSeconds, 60, 'the intervals come with register')
    const before = state.presenceLastUpdateId
    const answer = expectSuccess(t, await as(app, member).post('/users/me/presence', { status: 'idle', last_update_id: before, new_user_input: false }))
    applyPresences(state, answer)
    t.ok(state.presenceLastUpdateId > before, 'a report with last_update_id moves it on')
    t.same(Object.keys(answer.presences as object).sort(), [String(member.id), String(other.id)].sort(), 'listing only the users reported since')
  })

  t.test('custom emoji: realm_emoji updates; the deactivated one not offered, kept for its reactions', async (t) => {
    const upload = (name: string) => sendMultipart(app, admin, 'POST', `/realm/emoji/${name}`, [{ name: 'f', fileName: `${name}.png`, contentType: 'image/png', data: TINY_PNG }])
    const state = await checkState(t, app, member, async () => {
      expectSuccess(t, await upload('roost_party'))
      expectSuccess(t, await upload('gone_bird'))
      expectSuccess(t, await as(app, admin).delete('/realm/emoji/gone_bird'))
    }, ['realm_emoji'])
    t.same(customEmoji(state).map((e) => [e.name, e.type]), [['roost_party', 'realm_emoji']], 'only the active one is offered')
    const party = customEmoji(state)[0]!
    t.equal(party.url, state.realmEmoji.get(party.code)!.source_url, 'with its image')
    t.ok([...state.realmEmoji.values()].some((e) => e.name === 'gone_bird' && e.deactivated), 'the deactivated one is still known')
  })

  t.test('reading, unreading, starring', async (t) => {
    const id = await sent(other, { type: 'stream', to: general.id, topic: 'flags', content: 'read me' })
    await checkState(t, app, member, async () => {
      expectSuccess(t, await as(app, member).post('/messages/flags', { messages: JSON.stringify([id]), op: 'add', flag: 'read' }))
      expectSuccess(t, await as(app, member).post('/messages/flags', { messages: JSON.stringify([id]), op: 'remove', flag: 'read' }))
      expectSuccess(t, await as(app, member).post('/messages/flags', { messages: JSON.stringify([id]), op: 'add', flag: 'starred' }))
    }, ['update_message_flags'])
  })

  t.test('edits, moves and deletes', async (t) => {
    const a = await sent(other, { type: 'stream', to: general.id, topic: 'before', content: 'one' })
    const b = await sent(other, { type: 'stream', to: general.id, topic: 'before', content: 'two' })
    await checkState(t, app, member, async () => {
      expectSuccess(t, await as(app, other).patch(`/messages/${a}`, { content: 'one, edited' }))
      expectSuccess(t, await as(app, other).patch(`/messages/${a}`, { topic: 'after', propagate_mode: 'change_all' }))
      expectSuccess(t, await as(app, other).delete(`/messages/${b}`))
    }, ['update_message'])
  })

  t.test('scheduled messages: scheduled, edited, rescheduled, cancelled', async (t) => {
    const at = Math.floor(Date.now() / 1000) + 3600
    const schedule = async (content: string) => expectSuccess(t, await as(app, member).post('/scheduled_messages', { type: 'stream', to: general.id, topic: 'later', content, scheduled_delivery_timestamp: at })).scheduled_message_id as number
    const kept = await schedule('kept')
    const state = await checkState(t, app, member, async () => {
      const gone = await schedule('gone')
      expectSuccess(t, await as(app, member).post('/scheduled_messages', { type: 'direct', to: JSON.stringify([other.id]), content: 'psst, later', scheduled_delivery_timestamp: at + 60 }))
      expectSuccess(t, await as(app, member).patch(`/scheduled_messages/${kept}`, { content: 'kept, edited', topic: 'moved', scheduled_delivery_timestamp: at + 120 }))
      expectSuccess(t, await as(app, member).delete(`/scheduled_messages/${gone}`))
    }, ['scheduled_messages'])
    t.match(state.scheduledMessages.get(kept), { content: 'kept, edited', topic: 'moved', scheduled_delivery_timestamp: at + 120 }, 'the edit applied')
    t.equal(state.scheduledMessages.size, 2, 'the cancelled one removed')
  })

  t.test('reactions, status, topics, settings, drafts, alert words', async (t) => {
    const id = await sent(other, { type: 'stream', to: general.id, topic: 'misc', content: 'react' })
    await checkState(t, app, member, async () => {
      expectSuccess(t, await as(app, member).post(`/messages/${id}/reactions`, { emoji_name: 'smile' }))
      expectSuccess(t, await as(app, other).post('/users/me/status', { status_text: 'on a <b>break</b>', emoji_name: 'coffee' }))
      expectSuccess(t, await as(app, member).post('/user_topics', { stream_id: general.id, topic: 'misc', visibility_policy: 1 }))
      expectSuccess(t, await as(app, member).patch('/settings', { twenty_four_hour_time: true }))
      expectSuccess(t, await as(app, member).post('/drafts', { drafts: JSON.stringify([{ type: 'stream', to: [general.id], topic: 't', content: 'later', timestamp: 1700000000 }]) }))
      expectSuccess(t, await as(app, member).post('/users/me/alert_words', { alert_words: JSON.stringify(['roost']) }))
      expectSuccess(t, await as(app, member).post('/users/me/subscriptions/properties', { subscription_data: JSON.stringify([{ stream_id: general.id, property: 'pin_to_top', value: true }]) }))
    }, ['reaction', 'user_status', 'user_topic', 'user_settings', 'drafts', 'alert_words', 'subscription'])
  })

  t.test('muting and unmuting users', async (t) => {
    await sent(admin, { type: 'direct', to: JSON.stringify([member.id]), content: 'from someone about to be muted' })
    const state = await checkState(t, app, member, async () => {
      expectSuccess(t, await as(app, member).post(`/users/me/muted_users/${admin.id}`))
      expectSuccess(t, await as(app, member).post(`/users/me/muted_users/${other.id}`))
      expectSuccess(t, await as(app, member).delete(`/users/me/muted_users/${other.id}`))
      await sent(admin, { type: 'direct', to: JSON.stringify([member.id]), content: 'from a muted sender' })
    }, ['muted_users', 'update_message_flags', 'message'])
    t.same([...state.mutedUsers.keys()], [admin.id], 'the list as the last event gave it')
    t.equal(unreadCounts(state).byDm.get(String(admin.id)), undefined, "the muted sender's messages are read, the new one included")
    t.notOk(dmConversations(state).some((c) => c.key === String(admin.id)), 'and the conversation is out of the direct message list')
    expectSuccess(t, await as(app, member).delete(`/users/me/muted_users/${admin.id}`))
  })

  t.test('organization settings: name, edit and delete limits, who may delete', async (t) => {
    const state = await checkState(t, app, member, async () => {
      expectSuccess(t, await as(app, admin).patch('/realm', { name: 'Renamed org', message_content_edit_limit_seconds: 120, message_content_delete_limit_seconds: 60 }))
      expectSuccess(t, await as(app, admin).patch('/realm', { allow_message_editing: false }))
      expectSuccess(t, await as(app, admin).patch('/realm', { can_delete_own_message_group: JSON.stringify({ new: { direct_members: [other.id], direct_subgroups: [] } }) }))
    }, ['realm'])
    t.equal(state.realmName, 'Renamed org')
    const now = Date.now() / 1000
    const own = { sender_id: member.id, timestamp: now - 30 }
    t.notOk(canEditMessage(state, own, now), 'editing is off')
    t.notOk(canDeleteMessage(state, own, now), 'the member may not delete their own messages any more')
    state.canDeleteOwn = { direct_members: [member.id], direct_subgroups: [] }
    t.ok(canDeleteMessage(state, own, now), 'within the delete limit')
    t.notOk(canDeleteMessage(state, { ...own, timestamp: now - 61 }, now), 'past the delete limit')
    state.allowEditing = true
    t.ok(canEditMessage(state, own, now))
    t.notOk(canEditMessage(state, { ...own, timestamp: now - 121 }, now), 'past the edit limit')
    t.notOk(canEditMessage(state, { ...own, sender_id: other.id }, now), "another's message")
    expectSuccess(t, await as(app, admin).patch('/realm', { allow_message_editing: true, message_content_edit_limit_seconds: 'unlimited', message_content_delete_limit_seconds: 'unlimited' }))
  })

  t.test('people: added, deactivated before register, reactivated; roles move system groups', async (t) => {
    const early = await fx.newUser({ fullName: 'Early Leaver' })
    expectSuccess(t, await as(app, admin).delete(`/users/${early.id}`))
    const before = fromRegister(await register(app, admin))
    t.equal(before.users.get(early.id)?.isActive, false, 'a user deactivated before register is listed, inactive')
    const state = await checkState(t, app, admin, async () => {
      expectSuccess(t, await as(app, admin).post(`/users/${early.id}/reactivate`))
      expectSuccess(t, await as(app, admin).delete(`/users/${other.id}`))
      expectSuccess(t, await as(app, admin).post(`/users/${other.id}/reactivate`))
      expectSuccess(t, await as(app, admin).patch(`/users/${member.id}`, { role: 200 }))
      expectSuccess(t, await as(app, admin).post('/users', { email: `newcomer@${fx.host}`, password: 'a long enough password', full_name: 'Newcomer' }))
    }, ['realm_user', 'user_group'])
    t.equal(state.users.get(early.id)?.isActive, true)
    t.ok(holdsGroupSetting(state, state.canDeleteAny, member.id), 'the new administrator may delete any message')
  })
})
