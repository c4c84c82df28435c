// eventsFanOut computes each distinct outcome of eventsForQueue once per item:
// for every queue it must give exactly what eventsForQueue gives that queue.
import t from 'tap'
import type { BusItem } from '../../src/events/bus.js'
import { eventsFanOut, eventsForQueue, INACCESSIBLE_USER_FIELD } from '../../src/events/queues/filter.js'
import { NO_CAPABILITIES, type QueueDescriptor } from '../../src/events/queues/types.js'
import { inaccessibleUserDict } from '../../src/present/user.js'

let nextQueue = 0
function queue(userId: number, options: Partial<QueueDescriptor> = {}): QueueDescriptor {
  return {
    queueId: `q${nextQueue++}`,
    userId,
    userEmail: `user${userId}@example.com`,
    realmId: 1,
    eventTypes: null,
    narrow: [],
    allPublicStreams: false,
    capabilities: { ...NO_CAPABILITIES },
    applyMarkdown: false,
    clientExtavatar: false,
    slimPresence: false,
    lifespanSecs: 600,
    createdAt: 0,
    ...options,
  }
}

/** Queues that differ in every field eventsForQueue reads, for users 1–4 (and 9, who is never a recipient). */
function variedQueues(): QueueDescriptor[] {
  const out: QueueDescriptor[] = []
  for (const userId of [1, 2, 3, 4, 9]) {
    out.push(
      queue(userId),
      queue(userId),
      queue(userId, { applyMarkdown: true }),
      queue(userId, { clientExtavatar: true, applyMarkdown: true }),
      queue(userId, { allPublicStreams: true }),
      queue(userId, { eventTypes: ['message'] }),
      queue(userId, { eventTypes: ['subscription', 'realm_user'] }),
      queue(userId, { narrow: [{ operator: 'is', operand: 'starred', negated: false }] }),
      queue(userId, { narrow: [{ operator: 'channel', operand: 'general', negated: false }] }),
      queue(userId, { slimPresence: true }),
      queue(userId, { realmId: 2 }),
      queue(userId, { capabilities: { ...NO_CAPABILITIES, user_settings_object: true, bulk_message_deletion: true } }),
      queue(userId, { capabilities: { ...NO_CAPABILITIES, user_list_incomplete: true, stream_typing_notifications: true, notification_settings_null: true } }),
    )
  }
  return out
}

const message = {
  id: 10,
  type: 'stream',
  stream_id: 5,
  display_recipient: 'general',
  subject: 'fan-out',
  sender_id: 1,
  sender_email: 'user1@example.com',
  avatar_url: 'https://example.com/avatar.png',
  content: '<p>hi</p>',
  raw_content: 'hi',
}
const unread = { flags: [] as string[] }
const starred = { flags: ['starred'] }

const items: Record<string, BusItem> = {
  'a channel message with shared flag entries and the sender’s local ID': {
    realmId: 1,
    userIds: [1, 2, 3, 4],
    event: { type: 'message', message },
    perUser: { 1: { flags: ['read'], local_message_id: '7.01', sender_queue_id: 'q0' }, 2: unread, 3: starred, 4: unread },
    publicStreamId: 5,
    origin: 'node',
    xid: '123',
  },
  'a settings change (legacy events name their user)': {
    realmId: 1,
    userIds: [2],
    event: { type: 'user_settings', op: 'update', property: 'twenty_four_hour_time', value: true },
    origin: 'node',
  },
  'a bulk deletion': { realmId: 1, userIds: [1, 2, 3], event: { type: 'delete_message', message_ids: [1, 2], message_type: 'stream', stream_id: 5, topic: 't' }, origin: 'node' },
  'a user the recipients cannot access': {
    realmId: 1,
    userIds: [1, 2, 3, 4],
    event: { type: 'realm_user', op: 'add', person: inaccessibleUserDict(8, 'example.com'), [INACCESSIBLE_USER_FIELD]: true },
    origin: 'node',
  },
  'channel typing': { realmId: 1, userIds: [1, 2, 3, 4], event: { type: 'typing', op: 'start', message_type: 'stream', sender: { user_id: 1, email: 'user1@example.com' }, stream_id: 5, topic: 't' }, origin: 'node' },
  presence: { realmId: 1, userIds: [1, 2, 3, 4], event: { type: 'presence', user_id: 1, email: 'user1@example.com', server_timestamp: 1, presence: {} }, origin: 'node' },
}

for (const [name, item] of Object.entries(items)) {
  t.test(`${name}: every queue gets what eventsForQueue gives it`, async (t) => {
    const queues = variedQueues()
    const fanOut = eventsFanOut(item, (events) => events)
    for (const desc of queues) t.same(fanOut(desc), eventsForQueue(desc, item), `${desc.queueId} (user ${desc.userId})`)
  })
}

t.test('a message to 1,000 recipients with the same client options is filtered once per distinct flags entry', async (t) => {
  const userIds = Array.from({ length: 1000 }, (_, i) => i + 1)
  const perUser: Record<number, Record<string, unknown>> = {}
  for (const id of userIds) perUser[id] = id % 10 === 0 ? starred : unread
  perUser[1] = { flags: ['read'], local_message_id: '1', sender_queue_id: 'sender-queue' }
  const item: BusItem = { realmId: 1, userIds, event: { type: 'message', message }, perUser, origin: 'node' }
  let computed = 0
  const fanOut = eventsFanOut(item, (events) => {
    computed++
    return events
  })
  const queues = userIds.map((id) => queue(id))
  for (const desc of queues) fanOut(desc)
  t.equal(computed, 3, 'unread, starred, and the sender’s own')
  t.same(fanOut(queues[0] as QueueDescriptor), eventsForQueue(queues[0] as QueueDescriptor, item))
  t.same(fanOut(queues[9] as QueueDescriptor)[0]?.flags, ['starred'])
})
