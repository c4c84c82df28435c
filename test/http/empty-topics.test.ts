// The empty topic (upstream levels 334, 370, 372): "" is a topic; "(no topic)"
// names it when sending, scheduling and typing; clients that do not declare
// the empty_topic_name capability, or fetch without allow_empty_topic_name,
// see it as realm_empty_topic_display_name ("general chat"), and naming it so
// names the empty topic.
import t from 'tap'
import { buildTestApp } from '../support/app.js'
import { as } from '../support/client.js'
import { expectError, expectSuccess, type Body } from '../support/expect.js'
import { checkStateAfter } from '../support/state-check.js'
import { eventsUntil, ofType, register, sentinel, sentinelArrived } from '../support/queues.js'
import type { User } from '../../src/db/index.js'

t.test('empty topics', async (t) => {
  const { app, fx } = await buildTestApp(t)
  const { owner, member, otherMember } = fx.users
  const { general } = fx.streams

  const send = async (user: User, topic: string, content = 'x'): Promise<number> =>
    expectSuccess(t, await as(app, user).post('/messages', { type: 'stream', to: String(general.id), topic, content })).id as number
  const subjectOf = async (id: number, params: Record<string, unknown> = {}): Promise<string> =>
    expectSuccess(t, await as(app, otherMember).get(`/messages/${id}`, params)).message.subject as string

  t.test('"", blanks, "(no topic)" and "general chat" all send to the empty topic', async (t) => {
    for (const topic of ['', '   ', '(no topic)', ' (no topic) ', 'general chat']) {
      const id = await send(member, topic)
      t.equal(await subjectOf(id, { allow_empty_topic_name: true }), '', `${JSON.stringify(topic)} is stored as ""`)
      t.equal(await subjectOf(id), 'general chat', `${JSON.stringify(topic)} is shown by the display name without allow_empty_topic_name`)
    }
    // A direct message keeps its "" topic whatever the client accepts.
    const dm = expectSuccess(t, await as(app, member).post('/messages', { type: 'direct', to: JSON.stringify([otherMember.id]), content: 'dm' })).id
    t.equal(await subjectOf(dm as number), '')
  })

  t.test('register: realm_empty_topic_display_name, and the empty topic of unreads and topic policies by capability', async (t) => {
    const id = await send(member, '', 'unread here')
    expectSuccess(t, await as(app, otherMember).post('/user_topics', { stream_id: general.id, topic: 'general chat', visibility_policy: 3 }))
    const state = (capabilities: Record<string, boolean>) =>
      as(app, otherMember).post('/register', { client_capabilities: capabilities, fetch_event_types: ['realm', 'message', 'update_message_flags', 'user_topic'] })
    const modern = expectSuccess(t, await state({ empty_topic_name: true }))
    const legacy = expectSuccess(t, await state({}))
    t.equal(modern.realm_empty_topic_display_name, 'general chat')
    t.equal(legacy.realm_empty_topic_display_name, 'general chat')
    const unreadTopic = (s: Body) => (s.unread_msgs.streams as Body[]).find((e) => (e.unread_message_ids as number[]).includes(id))?.topic
    t.equal(unreadTopic(modern), '')
    t.equal(unreadTopic(legacy), 'general chat')
    t.match(modern.user_topics, [{ stream_id: general.id, topic_name: '', visibility_policy: 3 }])
    t.match(legacy.user_topics, [{ stream_id: general.id, topic_name: 'general chat', visibility_policy: 3 }])
    expectSuccess(t, await as(app, otherMember).post('/user_topics', { stream_id: general.id, topic: '', visibility_policy: 0 }))
  })

  t.test('GET /messages: allow_empty_topic_name, and a topic narrow naming the display name', async (t) => {
    const id = await send(member, '(no topic)', 'narrowed')
    for (const operand of ['', 'general chat']) {
      const narrow = JSON.stringify([{ operator: 'channel', operand: general.id }, { operator: 'topic', operand }])
      const shown = expectSuccess(t, await as(app, otherMember).get('/messages', { anchor: 'newest', num_before: 5, num_after: 0, narrow }))
      const allowed = expectSuccess(t, await as(app, otherMember).get('/messages', { anchor: 'newest', num_before: 5, num_after: 0, narrow, allow_empty_topic_name: true }))
      t.equal((shown.messages as Body[]).at(-1)?.id, id, `topic ${JSON.stringify(operand)} finds the empty topic`)
      t.ok((shown.messages as Body[]).every((m) => m.subject === 'general chat'))
      t.ok((allowed.messages as Body[]).every((m) => m.subject === ''))
    }
    const byId = expectSuccess(t, await as(app, otherMember).get('/messages', { message_ids: JSON.stringify([id]) }))
    t.equal((byId.messages as Body[])[0]?.subject, 'general chat')
  })

  t.test('GET /users/me/{stream_id}/topics names the empty topic by allow_empty_topic_name', async (t) => {
    const id = await send(member, '', 'latest')
    const shown = expectSuccess(t, await as(app, otherMember).get(`/users/me/${general.id}/topics`))
    const allowed = expectSuccess(t, await as(app, otherMember).get(`/users/me/${general.id}/topics`, { allow_empty_topic_name: true }))
    t.same(shown.topics[0], { name: 'general chat', max_id: id })
    t.same(allowed.topics[0], { name: '', max_id: id })
  })

  t.test('GET /messages/{id}/history names the empty topic by allow_empty_topic_name', async (t) => {
    const id = await send(member, 'before')
    expectSuccess(t, await as(app, member).patch(`/messages/${id}`, { topic: 'general chat', send_notification_to_old_thread: false, send_notification_to_new_thread: false }))
    t.equal(await subjectOf(id, { allow_empty_topic_name: true }), '')
    const shown = expectSuccess(t, await as(app, member).get(`/messages/${id}/history`)).message_history as Body[]
    const allowed = expectSuccess(t, await as(app, member).get(`/messages/${id}/history`, { allow_empty_topic_name: true })).message_history as Body[]
    t.match(shown, [{ topic: 'before' }, { topic: 'general chat', prev_topic: 'before' }])
    t.match(allowed, [{ topic: 'before' }, { topic: '', prev_topic: 'before' }])
  })

  t.test('events carry "" to clients with empty_topic_name and the display name to others', async (t) => {
    const modern = await register(t, app, otherMember, { empty_topic_name: true, stream_typing_notifications: true })
    const legacy = await register(t, app, otherMember, { stream_typing_notifications: true })
    const id = await send(member, '(no topic)', 'evented')
    // Level 372: typing to "(no topic)" is typing in the empty topic.
    expectSuccess(t, await as(app, member).post('/typing', { type: 'channel', op: 'start', stream_id: general.id, topic: '(no topic)' }))
    expectSuccess(t, await as(app, otherMember).post('/user_topics', { stream_id: general.id, topic: '', visibility_policy: 2 }))
    expectSuccess(t, await as(app, member).patch(`/messages/${id}`, { topic: 'moved away', send_notification_to_old_thread: false, send_notification_to_new_thread: false }))
    await sentinel(t, app, otherMember, true)
    const check = async (q: typeof modern, topic: string) => {
      const events = await eventsUntil(t, app, q, sentinelArrived)
      t.equal(ofType(events, 'message')[0]?.message.subject, topic)
      t.match(ofType(events, 'typing'), [{ op: 'start', stream_id: general.id, topic }])
      t.match(ofType(events, 'user_topic'), [{ stream_id: general.id, topic_name: topic, visibility_policy: 2 }])
      t.match(ofType(events, 'update_message'), [{ orig_subject: topic, subject: 'moved away' }])
    }
    await check(modern, '')
    await check(legacy, 'general chat')
    expectSuccess(t, await as(app, otherMember).post('/user_topics', { stream_id: general.id, topic: '', visibility_policy: 0 }))
  })

  t.test('state check: messages to, into, out of and deleted from the empty topic, unread again, its topic policy', async (t) => {
    let id = 0
    await checkStateAfter(t, app, otherMember, async () => {
      id = await send(member, '', 'state')
    }, { expectTypes: ['message'] })
    await checkStateAfter(t, app, otherMember, () => as(app, otherMember).post('/messages/flags', { messages: JSON.stringify([id]), op: 'remove', flag: 'read' }), {
      expectTypes: ['update_message_flags/remove'],
    })
    await checkStateAfter(t, app, otherMember, () => as(app, otherMember).post('/user_topics', { stream_id: general.id, topic: '', visibility_policy: 1 }), {
      expectTypes: ['user_topic'],
    })
    await checkStateAfter(
      t,
      app,
      otherMember,
      () => as(app, member).patch(`/messages/${id}`, { topic: 'out', send_notification_to_old_thread: false, send_notification_to_new_thread: false }),
      { expectTypes: ['update_message'] },
    )
    await checkStateAfter(
      t,
      app,
      otherMember,
      () => as(app, member).patch(`/messages/${id}`, { topic: '', send_notification_to_old_thread: false, send_notification_to_new_thread: false }),
      { expectTypes: ['update_message'] },
    )
    // Not the newest message: no event lowers max_message_id (upstream neither).
    await send(member, 'later')
    await checkStateAfter(t, app, otherMember, () => as(app, owner).delete(`/messages/${id}`), { expectTypes: ['delete_message'] })
  })

  t.test('links to the empty topic and its messages (level 346)', async (t) => {
    const target = await send(member, '', 'linked')
    const id = await send(member, 'links', `#**general>** and #**general>@${target}**`)
    const html = expectSuccess(t, await as(app, otherMember).get(`/messages/${id}`)).message.content as string
    const topicUrl = `/#narrow/channel/${general.id}-general/topic/`
    t.match(html, new RegExp(`<a class="stream-topic" data-stream-id="${general.id}" href="${topicUrl.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}/with/\\d+">#general &gt; <em>general chat</em></a>`))
    t.ok(html.includes(`<a class="message-link" href="${topicUrl}/near/${target}">#general &gt; <em>general chat</em> @ 💬</a>`), html)
  })

  t.test('scheduled messages: "(no topic)" is the empty topic', async (t) => {
    const at = Math.floor(Date.now() / 1000) + 3600
    const created = expectSuccess(t, await as(app, member).post('/scheduled_messages', { type: 'stream', to: general.id, topic: '(no topic)', content: 'later', scheduled_delivery_timestamp: at }))
    const listed = expectSuccess(t, await as(app, member).get('/scheduled_messages')).scheduled_messages as Body[]
    t.equal(listed.find((m) => m.scheduled_message_id === created.scheduled_message_id)?.topic, '')
    expectSuccess(t, await as(app, member).patch(`/scheduled_messages/${created.scheduled_message_id}`, { topic: 'named' }))
    expectSuccess(t, await as(app, member).patch(`/scheduled_messages/${created.scheduled_message_id}`, { topic: '(no topic)' }))
    const again = expectSuccess(t, await as(app, member).get('/scheduled_messages')).scheduled_messages as Body[]
    t.equal(again.find((m) => m.scheduled_message_id === created.scheduled_message_id)?.topic, '')
    expectSuccess(t, await as(app, member).delete(`/scheduled_messages/${created.scheduled_message_id}`))
  })

  t.test('mandatory_topics refuses the empty topic however it is named', async (t) => {
    expectSuccess(t, await as(app, owner).patch('/realm', { mandatory_topics: true }))
    for (const topic of ['', '  ', '(no topic)', 'general chat']) {
      expectError(t, await as(app, member).post('/messages', { type: 'stream', to: String(general.id), topic, content: 'x' }), {
        code: 'BAD_REQUEST',
        status: 400,
        msg: 'Topics are required in this organization',
      })
    }
    const at = Math.floor(Date.now() / 1000) + 3600
    expectError(t, await as(app, member).post('/scheduled_messages', { type: 'stream', to: general.id, topic: '(no topic)', content: 'x', scheduled_delivery_timestamp: at }), {
      code: 'BAD_REQUEST',
      status: 400,
      msg: 'Topics are required in this organization',
    })
    t.ok(await send(member, 'a real topic'))
    expectSuccess(t, await as(app, owner).patch('/realm', { mandatory_topics: false }))
  })
})
