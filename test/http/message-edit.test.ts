import t from 'tap'
import { buildTestApp } from '../support/app.js'
import { realmSetter } from '../support/realm-settings.js'
import { as } from '../support/client.js'
import { expectError, expectSuccess } from '../support/expect.js'
import { capture, messageAs, ofType, send, sendTo } from './conversation-support.js'
import { pickStreamColor } from '../../src/actions/user-rows.js'
import { MAX_EDIT_HISTORY_BYTES, MAX_EDIT_HISTORY_ENTRIES } from '../../src/domain/limits.js'

t.test('PATCH /messages/{id}: content edits', async (t) => {
  const { app, fx, services } = await buildTestApp(t)
  const { owner, admin, member, otherMember, guest } = fx.users
  const prisma = services.prisma
  const setRealm = realmSetter(app, owner, prisma, fx.realm.id)
  const age = (id: number, seconds: number) => prisma.message.update({ where: { id }, data: { dateSent: new Date(Date.now() - seconds * 1000) } })

  t.test('the sender edits; the copy shows the new rendering, last_edit_timestamp and edit_history', async (t) => {
    const id = await sendTo(t, app, member, 'general', 'edits', 'first *draft*')
    const res = await as(app, member).patch(`/messages/${id}`, { content: 'second **take**' })
    t.same(expectSuccess(t, res), { result: 'success', msg: '', detached_uploads: [] })
    const m = await messageAs(t, app, otherMember, id)
    t.equal(m.content, '<p>second <strong>take</strong></p>')
    t.type(m.last_edit_timestamp, 'number')
    t.notOk('last_moved_timestamp' in m, 'a content edit is not a move (level 365)')
    // No prev_rendered_content_version (level 284).
    t.same(m.edit_history, [
      { user_id: member.id, timestamp: m.last_edit_timestamp, prev_content: 'first *draft*', prev_rendered_content: '<p>first <em>draft</em></p>' },
    ])
    const raw = expectSuccess(t, await as(app, member).get(`/messages/${id}`, { apply_markdown: false })).message
    t.equal(raw.content, 'second **take**')
  })

  t.test('publishes update_message to every recipient with their flags', async (t) => {
    const id = await sendTo(t, app, member, 'general', 'events', 'hello')
    const events = await capture(t, app, [member, otherMember, guest], () =>
      as(app, member).patch(`/messages/${id}`, { content: 'hello @**Otto Other**' }),
    )
    const [forOther] = ofType(events.get(otherMember.id), 'update_message')
    t.match(forOther, {
      type: 'update_message',
      user_id: member.id,
      message_id: id,
      message_ids: [id],
      rendering_only: false,
      stream_name: 'general',
      stream_id: fx.streams.general.id,
      orig_content: 'hello',
      orig_rendered_content: '<p>hello</p>',
      content: 'hello @**Otto Other**',
      is_me_message: false,
      flags: ['mentioned'],
    })
    t.match(forOther.rendered_content, /user-mention/)
    t.type(forOther.edit_timestamp, 'number')
    t.notOk('propagate_mode' in forOther, 'no move fields on a content edit')
    t.notOk('prev_rendered_content_version' in forOther, 'removed at level 284')
    t.notOk('subject' in forOther)
    t.same(ofType(events.get(member.id), 'update_message')[0]?.flags, [])
    t.same(ofType(events.get(guest.id), 'update_message')[0]?.flags, [], 'every recipient hears, with their own flags')
    const inDesign = await sendTo(t, app, member, 'design', 'events', 'hello')
    const outside = await capture(t, app, [owner, otherMember], () => as(app, member).patch(`/messages/${inDesign}`, { content: 'bye' }))
    t.equal(ofType(outside.get(owner.id), 'update_message').length, 1)
    t.equal(ofType(outside.get(otherMember.id), 'update_message').length, 0, 'users outside the channel hear nothing')
  })

  t.test('adds and removes mention, wildcard and alert-word flags', async (t) => {
    await prisma.alertWord.create({ data: { userId: otherMember.id, word: 'pineapple' } })
    const id = await sendTo(t, app, member, 'general', 'flags', 'plain')
    const flags = async () => (await messageAs(t, app, otherMember, id)).flags as string[]
    t.same(await flags(), [])
    expectSuccess(t, await as(app, member).patch(`/messages/${id}`, { content: '@**Otto Other** likes pineapple' }))
    t.same(await flags(), ['mentioned', 'has_alert_word'])
    expectSuccess(t, await as(app, member).patch(`/messages/${id}`, { content: '@**all** look' }))
    t.same(await flags(), ['stream_wildcard_mentioned', 'wildcard_mentioned'])
    expectSuccess(t, await as(app, member).patch(`/messages/${id}`, { content: 'nothing now' }))
    t.same(await flags(), [])
    // Read and starred survive an edit.
    expectSuccess(t, await as(app, otherMember).post('/messages/flags', { messages: [id], op: 'add', flag: 'starred' }))
    expectSuccess(t, await as(app, member).patch(`/messages/${id}`, { content: '@**Otto Other**' }))
    t.same(await flags(), ['starred', 'mentioned'])
  })

  t.test('topic wildcards flag only the topic participants', async (t) => {
    await sendTo(t, app, otherMember, 'general', 'topicwild', 'I was here')
    const id = await sendTo(t, app, member, 'general', 'topicwild', 'plain')
    expectSuccess(t, await as(app, member).patch(`/messages/${id}`, { content: '@**topic** heads up' }))
    t.same((await messageAs(t, app, otherMember, id)).flags, ['topic_wildcard_mentioned', 'wildcard_mentioned'])
    t.same((await messageAs(t, app, owner, id)).flags, [])
  })

  t.test('empty content becomes (deleted); too long content is refused', async (t) => {
    const id = await sendTo(t, app, member, 'general', 'empty', 'soon gone')
    expectSuccess(t, await as(app, member).patch(`/messages/${id}`, { content: '   ' }))
    t.equal((await messageAs(t, app, member, id)).content, '<p>(deleted)</p>')
    expectError(t, await as(app, member).patch(`/messages/${id}`, { content: 'x'.repeat(10001) }), {
      code: 'BAD_REQUEST',
      msg: 'content is too long (limit: 10000 characters)',
    })
  })

  t.test('only the sender edits content, even administrators may not', async (t) => {
    const id = await sendTo(t, app, member, 'general', 'perm', 'mine')
    for (const user of [admin, owner, otherMember]) {
      expectError(t, await as(app, user).patch(`/messages/${id}`, { content: 'theirs' }), {
        code: 'BAD_REQUEST',
        msg: "You don't have permission to edit this message",
      })
    }
    t.equal((await messageAs(t, app, member, id)).content, '<p>mine</p>', 'unchanged')
  })

  t.test('allow_message_editing off refuses every content edit', async (t) => {
    const id = await sendTo(t, app, member, 'general', 'off', 'x')
    await setRealm({ allowMessageEditing: false })
    t.teardown(() => setRealm({ allowMessageEditing: true }))
    expectError(t, await as(app, member).patch(`/messages/${id}`, { content: 'y' }), {
      code: 'BAD_REQUEST',
      msg: 'Your organization has turned off message editing',
    })
  })

  t.test('message_content_edit_limit_seconds with 20 seconds of grace; null is unlimited', async (t) => {
    const id = await sendTo(t, app, member, 'general', 'limit', 'x')
    await age(id, 600 + 15)
    expectSuccess(t, await as(app, member).patch(`/messages/${id}`, { content: 'within grace' }))
    await age(id, 600 + 25)
    expectError(t, await as(app, member).patch(`/messages/${id}`, { content: 'too late' }), {
      code: 'BAD_REQUEST',
      msg: 'The time limit for editing this message has passed',
    })
    await setRealm({ messageContentEditLimitSeconds: null })
    t.teardown(() => setRealm({ messageContentEditLimitSeconds: 600 }))
    await age(id, 86400 * 365)
    expectSuccess(t, await as(app, member).patch(`/messages/${id}`, { content: 'no limit' }))
  })

  t.test('payload errors', async (t) => {
    const id = await sendTo(t, app, member, 'general', 'payload', 'x')
    expectError(t, await as(app, member).patch(`/messages/${id}`, {}), { code: 'BAD_REQUEST', msg: 'Nothing to change' })
    expectError(t, await as(app, member).patch(`/messages/${id}`, { topic: 'payload' }), { code: 'BAD_REQUEST', msg: 'Nothing to change' })
    expectError(t, await as(app, member).patch(`/messages/${id}`, { content: 'y', stream_id: fx.streams.design.id }), {
      code: 'BAD_REQUEST',
      msg: 'Cannot change message content while changing channel',
    })
    expectError(t, await as(app, member).patch(`/messages/${id}`, { content: 'y', propagate_mode: 'change_all' }), {
      code: 'BAD_REQUEST',
      msg: 'Invalid propagate_mode without topic edit',
    })
    expectError(t, await as(app, member).patch(`/messages/${id}`, { topic: 'a', propagate_mode: 'sideways' }), { code: 'BAD_REQUEST' })
    expectError(t, await as(app, member).patch(`/messages/${id}`, { topic: 'a', subject: 'b' }), { code: 'REQUEST_CONFUSING_VAR' })
    const dm = await send(t, app, member, { type: 'direct', to: JSON.stringify([otherMember.id]), content: 'psst' })
    expectError(t, await as(app, member).patch(`/messages/${dm}`, { topic: 'x' }), { code: 'BAD_REQUEST', msg: 'Direct messages cannot have topics.' })
    expectError(t, await as(app, member).patch(`/messages/${dm}`, { stream_id: fx.streams.general.id }), {
      code: 'BAD_REQUEST',
      msg: 'Direct messages cannot be moved to channels.',
    })
    expectSuccess(t, await as(app, member).patch(`/messages/${dm}`, { content: 'psst, edited' }))
    t.equal((await messageAs(t, app, otherMember, dm)).content, '<p>psst, edited</p>')
    t.same(expectSuccess(t, await as(app, member).patch(`/messages/${id}`, { content: 'z', colour: 'red' })).ignored_parameters_unsupported, ['colour'])
  })

  t.test('unknown or inaccessible messages are Invalid message(s), never a leak', async (t) => {
    const secret = await sendTo(t, app, member, 'secret', 'hidden', 'x')
    expectError(t, await as(app, otherMember).patch(`/messages/${secret}`, { content: 'y' }), { code: 'BAD_REQUEST', msg: 'Invalid message(s)' })
    expectError(t, await as(app, otherMember).patch('/messages/999999999', { content: 'y' }), { code: 'BAD_REQUEST', msg: 'Invalid message(s)' })
    expectError(t, await as(app, otherMember).patch('/messages/abc', { content: 'y' }), { code: 'BAD_REQUEST', msg: 'message_id is not an integer' })
  })

  t.test('wildcard_mention_policy applies to edited content in large channels and topics', async (t) => {
    const crowd = await prisma.stream.create({
      data: { realmId: fx.realm.id, name: 'crowd', canRemoveSubscribersGroupId: fx.streams.general.canRemoveSubscribersGroupId },
    })
    const people = [member, otherMember]
    for (let i = 0; i < 15; i++) people.push(await fx.newUser())
    await prisma.subscription.createMany({ data: people.map((u) => ({ userId: u.id, streamId: crowd.id, color: pickStreamColor(0) })) })
    for (const u of people) await sendTo(t, app, u, 'crowd', 'busy', `hi from ${u.fullName}`)
    const id = await sendTo(t, app, member, 'crowd', 'busy', 'plain')
    await setRealm({ wildcardMentionPolicy: 6 })
    t.teardown(() => setRealm({ wildcardMentionPolicy: 5 }))
    expectError(t, await as(app, member).patch(`/messages/${id}`, { content: '@**all** hi' }), {
      code: 'STREAM_WILDCARD_MENTION_NOT_ALLOWED',
      msg: 'You do not have permission to use channel wildcard mentions in this channel.',
    })
    expectError(t, await as(app, member).patch(`/messages/${id}`, { content: '@**topic** hi' }), {
      code: 'TOPIC_WILDCARD_MENTION_NOT_ALLOWED',
      msg: 'You do not have permission to use topic wildcard mentions in this topic.',
    })
    t.equal((await messageAs(t, app, member, id)).content, '<p>plain</p>', 'a refused edit changes nothing')
    await setRealm({ wildcardMentionPolicy: 2 })
    expectSuccess(t, await as(app, member).patch(`/messages/${id}`, { content: '@**all** hi' }))
  })
})

t.test('a message keeps a bounded edit history: the newest entries, by count and by bytes', async (t) => {
  const { app, fx } = await buildTestApp(t)
  const { member, otherMember } = fx.users
  const history = async (id: number) => (await messageAs(t, app, otherMember, id)).edit_history as Record<string, unknown>[]
  const bytes = (entries: unknown[]) => entries.reduce<number>((sum, e) => sum + Buffer.byteLength(JSON.stringify(e)), 0)

  t.test(`${MAX_EDIT_HISTORY_ENTRIES} entries, the oldest dropped; moves are never refused`, async (t) => {
    const id = await sendTo(t, app, member, 'general', 'many edits', 'v0')
    const edits = MAX_EDIT_HISTORY_ENTRIES + 5
    for (let i = 1; i <= edits; i++) expectSuccess(t, await as(app, member).patch(`/messages/${id}`, { content: `v${i}` }))
    const kept = await history(id)
    t.equal(kept.length, MAX_EDIT_HISTORY_ENTRIES)
    t.same(kept.map((e) => e.prev_content), Array.from({ length: MAX_EDIT_HISTORY_ENTRIES }, (_, i) => `v${edits - 1 - i}`), 'newest first, the oldest 5 gone')
    const snapshots = expectSuccess(t, await as(app, otherMember).get(`/messages/${id}/history`)).message_history as { content: string }[]
    t.equal(snapshots.length, MAX_EDIT_HISTORY_ENTRIES + 1)
    t.equal(snapshots[0]?.content, `v${edits - MAX_EDIT_HISTORY_ENTRIES}`, 'the first version shown is the one before the oldest kept edit')
    t.equal(snapshots.at(-1)?.content, `v${edits}`)
    expectSuccess(t, await as(app, member).patch(`/messages/${id}`, { topic: 'moved once', propagate_mode: 'change_one' }))
    const moved = await history(id)
    t.equal(moved.length, MAX_EDIT_HISTORY_ENTRIES)
    t.match(moved[0], { prev_topic: 'many edits', topic: 'moved once' })
    t.equal(moved.at(-1)?.prev_content, `v${edits - MAX_EDIT_HISTORY_ENTRIES + 1}`)
  })

  t.test(`at most ${MAX_EDIT_HISTORY_BYTES} bytes of entries, the newest always kept`, async (t) => {
    // Each content edit keeps the previous source and its rendering (here about 240 KB).
    const large = (mark: string) => `${mark} ${'⁉'.repeat(2200)}`
    const id = await sendTo(t, app, member, 'general', 'large edits', large('a0'))
    const edits = 8
    for (let i = 1; i <= edits; i++) expectSuccess(t, await as(app, member).patch(`/messages/${id}`, { content: large(`a${i}`) }))
    const kept = await history(id)
    t.ok(kept.length >= 2 && kept.length < edits, `${kept.length} of ${edits} entries kept`)
    t.ok(bytes(kept) <= MAX_EDIT_HISTORY_BYTES, `${bytes(kept)} bytes kept`)
    t.ok(bytes(kept) + bytes([kept.at(-1)]) > MAX_EDIT_HISTORY_BYTES, 'one more entry of the same size would not fit')
    t.same(kept.map((e) => String(e.prev_content).split(' ')[0]), Array.from({ length: kept.length }, (_, i) => `a${edits - 1 - i}`), 'the newest entries')
    const snapshots = expectSuccess(t, await as(app, otherMember).get(`/messages/${id}/history`)).message_history as unknown[]
    t.equal(snapshots.length, kept.length + 1)
  })
})
