import t from 'tap'
import type { Test } from 'tap'
import { buildTestApp } from '../support/app.js'
import { realmSetter } from '../support/realm-settings.js'
import { as } from '../support/client.js'
import { expectError, expectSuccess, type Body } from '../support/expect.js'
import { capture, messageAs, ofType, sendTo } from './conversation-support.js'
import type { User } from '../../src/db/index.js'

t.test('PATCH /messages/{id}: topics and channels', async (t) => {
  const { app, fx, services } = await buildTestApp(t)
  const { owner, admin, moderator, member, otherMember, guest } = fx.users
  const { general, design, secret } = fx.streams
  const prisma = services.prisma
  const bot = fx.notificationBot
  const setRealm = realmSetter(app, owner, prisma, fx.realm.id)
  const age = (ids: number[], seconds: number) =>
    prisma.message.updateMany({ where: { id: { in: ids } }, data: { dateSent: new Date(Date.now() - seconds * 1000) } })
  const topicOf = async (id: number) => (await prisma.message.findUniqueOrThrow({ where: { id } })).topic
  const where = async (id: number) => {
    const m = await prisma.message.findUniqueOrThrow({ where: { id } })
    return { streamId: m.streamId, topic: m.topic }
  }
  /** Notification Bot messages in a topic, oldest first. */
  const notices = async (streamId: number, topic: string) =>
    (await prisma.message.findMany({ where: { streamId, topic, senderId: bot.id }, orderBy: { id: 'asc' } })).map((m) => m.content)
  const thread = async (t: Test, user: User, stream: string, topic: string, n: number) => {
    const ids: number[] = []
    for (let i = 0; i < n; i++) ids.push(await sendTo(t, app, user, stream, topic, `${topic} ${i}`))
    return ids
  }
  const mention = (u: User) => `@_**${u.fullName}|${u.id}**`

  t.test('propagate modes: change_one, change_later, change_all', async (t) => {
    const [a, b, c] = await thread(t, member, 'general', 'modes', 3)
    expectSuccess(t, await as(app, member).patch(`/messages/${b}`, { topic: 'one', send_notification_to_new_thread: false }))
    t.same([await topicOf(a!), await topicOf(b!), await topicOf(c!)], ['modes', 'one', 'modes'])
    expectSuccess(t, await as(app, member).patch(`/messages/${a}`, { topic: 'later', propagate_mode: 'change_later', send_notification_to_new_thread: false }))
    t.same([await topicOf(a!), await topicOf(b!), await topicOf(c!)], ['later', 'one', 'later'])
    expectSuccess(t, await as(app, member).patch(`/messages/${c}`, { subject: 'all', propagate_mode: 'change_all', send_notification_to_new_thread: false }))
    t.same([await topicOf(a!), await topicOf(c!)], ['all', 'all'])
    const m = await messageAs(t, app, otherMember, a!)
    t.match(m.edit_history[0], { user_id: member.id, prev_topic: 'later', topic: 'all' })
    t.notOk('prev_content' in m.edit_history[0])
  })

  t.test('topic changes publish update_message with the move fields', async (t) => {
    const [a, b] = await thread(t, member, 'general', 'evt', 2)
    const events = await capture(t, app, [member, otherMember], () =>
      as(app, member).patch(`/messages/${a}`, { topic: 'evt2', propagate_mode: 'change_all', send_notification_to_new_thread: false }),
    )
    const [e] = ofType(events.get(otherMember.id), 'update_message')
    t.match(e, {
      type: 'update_message',
      user_id: member.id,
      message_id: a,
      message_ids: [a, b],
      rendering_only: false,
      stream_name: 'general',
      stream_id: general.id,
      propagate_mode: 'change_all',
      orig_subject: 'evt',
      subject: 'evt2',
      topic_links: [],
      flags: [],
    })
    t.notOk('orig_content' in e!)
    t.notOk('new_stream_id' in e!)
  })

  t.test('topic edits: stripped, equal means nothing to change, too long refused', async (t) => {
    const [a] = await thread(t, member, 'general', 'strip', 1)
    expectError(t, await as(app, member).patch(`/messages/${a}`, { topic: '  strip  ' }), { code: 'BAD_REQUEST', msg: 'Nothing to change' })
    expectError(t, await as(app, member).patch(`/messages/${a}`, { topic: 'x'.repeat(61) }), {
      code: 'BAD_REQUEST',
      msg: 'topic is too long (limit: 60 characters)',
    })
    expectSuccess(t, await as(app, member).patch(`/messages/${a}`, { topic: '  stripped  ', send_notification_to_new_thread: false }))
    t.equal(await topicOf(a!), 'stripped')
  })

  t.test('edit_topic_policy decides who may retitle; everyone may retitle (no topic)', async (t) => {
    const [a] = await thread(t, member, 'general', 'policy', 1)
    const cases: [number, User[], User[]][] = [
      [5, [guest, member], []], // everyone
      [1, [member], [guest]], // members
      [4, [moderator], [member]], // moderators
      [2, [admin], [moderator]], // admins
      [6, [], [owner]], // nobody
    ]
    // Owners only: no policy value names them; the group setting does (level 316).
    const owners = (await prisma.userGroup.findFirstOrThrow({ where: { realmId: fx.realm.id, name: 'role:owners' } })).id
    let n = 0
    for (const [policy, allowed, refused] of [...cases, ['owners', [owner], [admin]] as const]) {
      if (policy === 'owners') expectSuccess(t, await as(app, owner).patch('/realm', { can_move_messages_between_topics_group: JSON.stringify({ new: owners }) }))
      else await setRealm({ editTopicPolicy: policy })
      for (const u of allowed) {
        expectSuccess(t, await as(app, u).patch(`/messages/${a}`, { topic: `p${n++}`, send_notification_to_new_thread: false }))
      }
      for (const u of refused) {
        expectError(t, await as(app, u).patch(`/messages/${a}`, { topic: `p${n++}` }), {
          code: 'BAD_REQUEST',
          msg: "You don't have permission to edit this message",
        })
      }
    }
    const [loose] = await thread(t, member, 'general', '(no topic)', 1)
    expectSuccess(t, await as(app, otherMember).patch(`/messages/${loose}`, { topic: 'found a home', send_notification_to_new_thread: false }))
    await setRealm({ editTopicPolicy: 5 })
  })

  t.test('the topic time limit binds members, not moderators or administrators', async (t) => {
    const [a] = await thread(t, member, 'general', 'old', 1)
    await age([a!], 604800 + 25)
    expectError(t, await as(app, member).patch(`/messages/${a}`, { topic: 'new' }), {
      code: 'BAD_REQUEST',
      msg: "The time limit for editing this message's topic has passed.",
    })
    expectSuccess(t, await as(app, moderator).patch(`/messages/${a}`, { topic: 'new', send_notification_to_new_thread: false }))
    expectSuccess(t, await as(app, admin).patch(`/messages/${a}`, { topic: 'newer', send_notification_to_new_thread: false }))
    await setRealm({ moveMessagesWithinStreamLimitSeconds: null })
    expectSuccess(t, await as(app, member).patch(`/messages/${a}`, { topic: 'newest', send_notification_to_new_thread: false }))
    await setRealm({ moveMessagesWithinStreamLimitSeconds: 604800 })
  })

  t.test('change_all past the limit: MOVE_MESSAGES_TIME_LIMIT_EXCEEDED, then change_later from the first allowed id', async (t) => {
    const ids = await thread(t, member, 'general', 'window', 4)
    await age(ids.slice(0, 2), 604800 + 100)
    const body = expectError(t, await as(app, member).patch(`/messages/${ids[3]}`, { topic: 'moved', propagate_mode: 'change_all' }), {
      code: 'MOVE_MESSAGES_TIME_LIMIT_EXCEEDED',
      msg: 'You only have permission to move the 2/4 most recent messages in this topic.',
    })
    t.equal(body.first_message_id_allowed_to_move, ids[2])
    t.equal(body.total_messages_in_topic, 4)
    t.equal(body.total_messages_allowed_to_move, 2)
    t.equal(await topicOf(ids[3]!), 'window', 'nothing moved')
    expectSuccess(t, await as(app, member).patch(`/messages/${body.first_message_id_allowed_to_move}`, {
      topic: 'moved',
      propagate_mode: 'change_later',
      send_notification_to_new_thread: false,
    }))
    t.same(await Promise.all(ids.map(topicOf)), ['window', 'window', 'moved', 'moved'])
    // Moderators are exempt.
    expectSuccess(t, await as(app, moderator).patch(`/messages/${ids[0]}`, { topic: 'moved', propagate_mode: 'change_all', send_notification_to_new_thread: false }))
  })

  t.test('first_message_id_allowed_to_move is null when nothing may move', async (t) => {
    const ids = await thread(t, member, 'general', 'allold', 2)
    await age(ids.slice(0, 1), 604800 + 100)
    await setRealm({ moveMessagesBetweenStreamsLimitSeconds: 3600 })
    await age(ids.slice(1), 4000)
    const body = expectError(t, await as(app, member).patch(`/messages/${ids[1]}`, { topic: 'x', propagate_mode: 'change_all' }), {
      code: 'MOVE_MESSAGES_TIME_LIMIT_EXCEEDED',
    })
    t.equal(body.total_messages_allowed_to_move, 1, 'only the topic limit applies to a topic move')
    const both = expectError(t, await as(app, member).patch(`/messages/${ids[1]}`, { stream_id: design.id, topic: 'x', propagate_mode: 'change_all' }), {
      code: 'BAD_REQUEST',
      msg: "The time limit for editing this message's channel has passed",
    })
    t.notOk('first_message_id_allowed_to_move' in both)
    await setRealm({ moveMessagesBetweenStreamsLimitSeconds: 604800 })
    await age(ids, 604800 + 100)
    await setRealm({ moveMessagesWithinStreamLimitSeconds: 604800 * 2 })
    await age(ids.slice(0, 1), 604800 * 3)
    const none = expectError(t, await as(app, member).patch(`/messages/${ids[1]}`, { stream_id: design.id, propagate_mode: 'change_all', topic: 'y' }), {
      code: 'BAD_REQUEST',
    })
    t.equal(none.msg, "The time limit for editing this message's channel has passed")
    await setRealm({ moveMessagesWithinStreamLimitSeconds: 604800 })
  })

  t.test('resolving and unresolving a topic, with the notices upstream posts', async (t) => {
    const [a, b] = await thread(t, member, 'general', 'bug', 2)
    await sendTo(t, app, otherMember, 'general', 'elsewhere', 'x')
    const events = await capture(t, app, [member], () => as(app, owner).patch(`/messages/${a}`, { topic: '✔ bug', propagate_mode: 'change_all' }))
    t.same(await Promise.all([a!, b!].map(topicOf)), ['✔ bug', '✔ bug'])
    t.same(await notices(general.id, '✔ bug'), [`${mention(owner)} has marked this topic as resolved.`], 'no new-thread breadcrumb')
    const [notice] = ofType(events.get(member.id), 'message')
    t.match(notice, { message: { sender_id: bot.id, subject: '✔ bug' }, flags: [] }, 'unread for a participant')
    const forOwner = await prisma.userMessage.findFirstOrThrow({ where: { userId: otherMember.id, message: { topic: '✔ bug', senderId: bot.id } } })
    t.equal(forOwner.flags & 1, 1, 'read for a channel member who never took part')

    // Unresolving within the grace period takes the notice back.
    const del = await capture(t, app, [member], () => as(app, owner).patch(`/messages/${a}`, { topic: 'bug', propagate_mode: 'change_all' }))
    t.same(await notices(general.id, 'bug'), [])
    t.match(ofType(del.get(member.id), 'delete_message'), [{ message_type: 'stream', stream_id: general.id, topic: 'bug' }])

    // Later, unresolving posts its own notice.
    expectSuccess(t, await as(app, owner).patch(`/messages/${a}`, { topic: '✔ bug', propagate_mode: 'change_all' }))
    await prisma.message.updateMany({ where: { senderId: bot.id, topic: '✔ bug' }, data: { dateSent: new Date(Date.now() - 120_000) } })
    expectSuccess(t, await as(app, member).patch(`/messages/${b}`, { topic: 'bug', propagate_mode: 'change_all' }))
    t.same(await notices(general.id, 'bug'), [
      `${mention(owner)} has marked this topic as resolved.`,
      `${mention(member)} has marked this topic as unresolved.`,
    ])
  })

  t.test('last_moved_timestamp and last_edit_timestamp (level 365): moves and content edits apart, resolving alone is neither', async (t) => {
    const [a] = await thread(t, member, 'general', 'stamps', 1)
    expectSuccess(t, await as(app, member).patch(`/messages/${a}`, { topic: '✔ stamps' }))
    const resolved = await messageAs(t, app, otherMember, a!)
    t.notOk('last_moved_timestamp' in resolved, 'resolving is not a move')
    t.notOk('last_edit_timestamp' in resolved, 'nor a content edit')
    t.equal(resolved.edit_history.length, 1)
    expectSuccess(t, await as(app, member).patch(`/messages/${a}`, { topic: 'stamps' }))
    t.notOk('last_moved_timestamp' in (await messageAs(t, app, otherMember, a!)), 'nor is unresolving')

    expectSuccess(t, await as(app, member).patch(`/messages/${a}`, { topic: 'stamped' }))
    const renamed = await messageAs(t, app, otherMember, a!)
    t.equal(renamed.last_moved_timestamp, renamed.edit_history[0].timestamp)
    t.notOk('last_edit_timestamp' in renamed, 'a move is not a content edit')
    const listed = expectSuccess(t, await as(app, otherMember).get('/messages', { anchor: String(a), num_before: 0, num_after: 0 })).messages[0]
    t.equal(listed.last_moved_timestamp, renamed.last_moved_timestamp, 'GET /messages too')

    await setRealm({ moveMessagesBetweenStreamsPolicy: 1 })
    expectSuccess(t, await as(app, member).patch(`/messages/${a}`, { stream_id: design.id }))
    const moved = await messageAs(t, app, member, a!)
    t.same(Object.keys(moved.edit_history[0]).sort(), ['prev_stream', 'stream', 'timestamp', 'user_id'])
    t.equal(moved.last_moved_timestamp, moved.edit_history[0].timestamp, 'a channel move')
    t.notOk('last_edit_timestamp' in moved)

    expectSuccess(t, await as(app, member).patch(`/messages/${a}`, { content: 'changed' }))
    const edited = await messageAs(t, app, member, a!)
    t.equal(edited.last_edit_timestamp, edited.edit_history[0].timestamp)
    t.equal(edited.last_moved_timestamp, edited.edit_history[1].timestamp)
  })

  t.test('a rename that is not a resolve gets breadcrumbs; old thread only when asked', async (t) => {
    const [a, b, c] = await thread(t, member, 'general', 'crumbs', 3)
    expectSuccess(t, await as(app, member).patch(`/messages/${a}`, { topic: 'crumbs2', propagate_mode: 'change_all', send_notification_to_old_thread: true }))
    t.same(await notices(general.id, 'crumbs2'), [`This topic was moved here from #**general>crumbs** by ${mention(member)}.`])
    t.same(await notices(general.id, 'crumbs'), [`This topic was moved to #**general>crumbs2** by ${mention(member)}.`])

    expectSuccess(t, await as(app, member).patch(`/messages/${b}`, { topic: 'crumbs3', send_notification_to_old_thread: true }))
    const [newNotice] = await notices(general.id, 'crumbs3')
    t.match(newNotice, /^\[A message\]\(.+\) was moved here from #\*\*general>crumbs2\*\* by /)
    t.ok(newNotice?.includes(`/#narrow/channel/${general.id}-general/topic/crumbs3/near/${b})`), newNotice ?? '')
    t.same((await notices(general.id, 'crumbs2')).slice(1), [`A message was moved from this topic to #**general>crumbs3** by ${mention(member)}.`])

    const [d] = await thread(t, member, 'general', 'crumbs3', 1)
    expectSuccess(t, await as(app, member).patch(`/messages/${c}`, { topic: 'crumbs3', propagate_mode: 'change_later', send_notification_to_old_thread: false }))
    const arrived = await notices(general.id, 'crumbs3')
    t.match(arrived[arrived.length - 1], /^3 messages were moved here from #\*\*general>crumbs2\*\* by /, 'c and the two notices after it')
    void d
    expectSuccess(t, await as(app, member).patch(`/messages/${d}`, { topic: 'quiet', send_notification_to_new_thread: false }))
    t.same(await notices(general.id, 'quiet'), [])
  })

  t.test('channel moves: policy, destination access, copies and events', async (t) => {
    const [a, b] = await thread(t, owner, 'general', 'tochannel', 2)
    await setRealm({ moveMessagesBetweenStreamsPolicy: 2 })
    expectError(t, await as(app, member).patch(`/messages/${a}`, { stream_id: design.id }), {
      code: 'BAD_REQUEST',
      msg: "You don't have permission to move this message",
    })
    await setRealm({ moveMessagesBetweenStreamsPolicy: 1 })
    expectError(t, await as(app, guest).patch(`/messages/${a}`, { stream_id: design.id }), {
      code: 'BAD_REQUEST',
      msg: "You don't have permission to move this message",
    })
    expectError(t, await as(app, otherMember).patch(`/messages/${a}`, { stream_id: secret.id }), { code: 'BAD_REQUEST', msg: 'Invalid channel ID' })
    expectError(t, await as(app, otherMember).patch(`/messages/${a}`, { stream_id: 999999 }), { code: 'BAD_REQUEST', msg: 'Invalid channel ID' })

    const queues = await capture(t, app, [owner, member, otherMember], () =>
      as(app, member).patch(`/messages/${a}`, { stream_id: secret.id, propagate_mode: 'change_all', send_notification_to_old_thread: true }),
    )
    t.same(await where(a!), { streamId: secret.id, topic: 'tochannel' })
    t.same(await where(b!), { streamId: secret.id, topic: 'tochannel' })
    const [upd] = ofType(queues.get(member.id), 'update_message')
    t.match(upd, { message_ids: [a, b], stream_id: general.id, stream_name: 'general', new_stream_id: secret.id, orig_subject: 'tochannel', propagate_mode: 'change_all' })
    t.notOk('subject' in upd!)
    t.same(ofType(queues.get(otherMember.id), 'update_message'), [], 'losing access means delete_message instead')
    t.match(ofType(queues.get(otherMember.id), 'delete_message'), [
      { type: 'delete_message', message_ids: [a, b], message_type: 'stream', stream_id: general.id, topic: 'tochannel' },
    ])
    t.equal(await prisma.userMessage.count({ where: { userId: otherMember.id, messageId: { in: [a!, b!] } } }), 0)
    expectError(t, await as(app, otherMember).get(`/messages/${a}`), { code: 'BAD_REQUEST', msg: 'Invalid message(s)' })
    t.same(await notices(secret.id, 'tochannel'), [`This topic was moved here from #**general>tochannel** by ${mention(member)}.`])
    t.same(await notices(general.id, 'tochannel'), [`This topic was moved to #**secret>tochannel** by ${mention(member)}.`])
    const m = await messageAs(t, app, member, a!)
    t.match(m.edit_history[0], { prev_stream: general.id, stream: secret.id })
  })

  t.test("moves keep first_message_id true in both channels, with the stream update event deletions send", async (t) => {
    const empty = await prisma.stream.create({ data: { realmId: fx.realm.id, name: 'empty-dest', canRemoveSubscribersGroupId: general.canRemoveSubscribersGroupId } })
    const from = await prisma.stream.create({ data: { realmId: fx.realm.id, name: 'move-from', canRemoveSubscribersGroupId: general.canRemoveSubscribersGroupId } })
    await prisma.subscription.createMany({ data: [{ userId: member.id, streamId: from.id, color: '#111111' }, { userId: member.id, streamId: empty.id, color: '#222222' }] })
    const [first, second] = await thread(t, member, 'move-from', 'go', 2)
    const stays = await sendTo(t, app, member, 'move-from', 'stay', 'stays')
    // otherMember is subscribed to neither channel, and sees both (public): told too.
    const queues = await capture(t, app, [member, otherMember], () =>
      as(app, member).patch(`/messages/${first}`, { stream_id: empty.id, propagate_mode: 'change_all', send_notification_to_new_thread: false }),
    )
    const expected = [
      { type: 'stream', op: 'update', property: 'first_message_id', value: stays, stream_id: from.id, name: 'move-from' },
      { type: 'stream', op: 'update', property: 'first_message_id', value: first, stream_id: empty.id, name: 'empty-dest' },
    ]
    for (const user of [member, otherMember]) t.same(ofType(queues.get(user.id), 'stream').map(({ id: _id, ...e }) => e), expected)
    const firstOf = async (id: number) => (await prisma.stream.findUniqueOrThrow({ where: { id } })).firstMessageId
    t.same([await firstOf(from.id), await firstOf(empty.id)], [stays, first])
    t.equal((await where(second!)).streamId, empty.id)
    // A move that leaves both channels' first messages alone sends no stream event.
    const late = await sendTo(t, app, member, 'empty-dest', 'late', 'late')
    const quiet = await capture(t, app, [member], () => as(app, member).patch(`/messages/${late}`, { stream_id: from.id, send_notification_to_old_thread: false, send_notification_to_new_thread: false }))
    t.same(ofType(quiet.get(member.id), 'stream'), [])
  })

  t.test('protected history: only the messages the mover received move', async (t) => {
    const early = await sendTo(t, app, owner, 'secret', 'private', 'before otto')
    await prisma.subscription.create({ data: { userId: otherMember.id, streamId: secret.id, color: '#000000' } })
    const late = await sendTo(t, app, owner, 'secret', 'private', 'after otto')
    expectSuccess(t, await as(app, otherMember).patch(`/messages/${late}`, { topic: 'renamed', propagate_mode: 'change_all', send_notification_to_new_thread: false }))
    t.equal(await topicOf(early), 'private', 'not visible to the mover, not moved')
    t.equal(await topicOf(late), 'renamed')
  })

  t.test('topic visibility follows a whole topic, merged with the destination', async (t) => {
    const [a] = await thread(t, member, 'general', 'muted here', 1)
    expectSuccess(t, await as(app, otherMember).post('/user_topics', { stream_id: general.id, topic: 'muted here', visibility_policy: 1 }))
    expectSuccess(t, await as(app, owner).post('/user_topics', { stream_id: general.id, topic: 'muted here', visibility_policy: 3 }))
    expectSuccess(t, await as(app, owner).post('/user_topics', { stream_id: general.id, topic: 'landing', visibility_policy: 1 }))
    const events = await capture(t, app, [otherMember], () =>
      as(app, member).patch(`/messages/${a}`, { topic: 'landing', propagate_mode: 'change_all', send_notification_to_new_thread: false }),
    )
    const policies = async (u: User) =>
      (await prisma.userTopic.findMany({ where: { userId: u.id, streamId: general.id }, orderBy: { topicName: 'asc' } })).map((r) => [r.topicName, r.visibilityPolicy])
    t.same(await policies(otherMember), [['landing', 1]])
    t.same(await policies(owner), [['landing', 3]], 'followed wins the merge')
    t.match(ofType(events.get(otherMember.id), 'user_topic'), [
      { stream_id: general.id, topic_name: 'muted here', visibility_policy: 0 },
      { stream_id: general.id, topic_name: 'landing', visibility_policy: 1 },
    ])
  })

  void ({} as Body)
})
