import t from 'tap'
import { buildTestApp } from '../support/app.js'
import { realmSetter } from '../support/realm-settings.js'
import { as } from '../support/client.js'
import { expectError, expectSuccess, type Body } from '../support/expect.js'
import type { CapturedBusItem as BusItem } from '../support/events.js'
import type { User } from '../../src/db/index.js'
import { ROLE } from '../../src/domain/roles.js'

t.test('POST /messages', async (t) => {
  const { app, fx, services } = await buildTestApp(t)
  const { owner, admin, moderator, member, otherMember, guest, bot } = fx.users
  const { general, design, secret } = fx.streams

  const send = async (user: User, params: Record<string, unknown>): Promise<number> => {
    const body = expectSuccess(t, await as(app, user).post('/messages', params))
    return body.id as number
  }
  /** The viewer's copy of one message, as GET /messages/{id} shows it. */
  const messageAs = async (user: User, id: number): Promise<Body> =>
    expectSuccess(t, await as(app, user).get(`/messages/${id}`)).message
  const streamIdOf = async (name: string): Promise<number> => (await services.prisma.stream.findFirstOrThrow({ where: { realmId: fx.realm.id, name } })).id
  const flagsOf = async (user: User, id: number): Promise<string[]> => (await messageAs(user, id)).flags
  /** Runs fn and returns the message bus items it published. */
  const captureBus = async (fn: () => Promise<unknown>): Promise<BusItem[]> => {
    const items: BusItem[] = []
    const stop = services.bus.subscribe((item) => {
      if (item.event.type === 'message') items.push(item)
    })
    try {
      await fn()
      await new Promise((resolve) => setImmediate(resolve))
    } finally {
      stop()
    }
    return items
  }

  t.test('sends to a channel by name and by id, with topic or its alias subject', async (t) => {
    const id1 = await send(member, { type: 'stream', to: 'general', topic: 'hello', content: 'first' })
    const id2 = await send(member, { type: 'channel', to: String(general.id), subject: 'hello', content: 'second' })
    const id3 = await send(member, { type: 'channel', to: JSON.stringify([general.id]), topic: 'hello', content: 'third' })
    const id4 = await send(member, { type: 'channel', to: JSON.stringify('General'), topic: 'hello', content: 'fourth' })
    t.ok(id1 < id2 && id2 < id3 && id3 < id4)
    const m = await messageAs(otherMember, id2)
    t.match(m, {
      id: id2,
      sender_id: member.id,
      content: '<p>second</p>',
      type: 'stream',
      stream_id: general.id,
      display_recipient: 'general',
      subject: 'hello',
      sender_full_name: 'Mia Member',
      sender_email: member.email,
      sender_realm_str: fx.realm.stringId,
      is_me_message: false,
      reactions: [],
      submessages: [],
      topic_links: [],
      content_type: 'text/html',
      recipient_id: general.id,
    })
    t.equal(typeof m.timestamp, 'number')
    const stream = await services.prisma.stream.findUniqueOrThrow({ where: { id: general.id } })
    t.ok(stream.firstMessageId !== null && stream.firstMessageId <= id1)
  })

  t.test('topic and channel errors', async (t) => {
    expectError(t, await as(app, member).post('/messages', { type: 'stream', to: 'general', content: 'x' }), { code: 'BAD_REQUEST', msg: 'Missing topic' })
    expectError(t, await as(app, member).post('/messages', { type: 'stream', to: 'general', topic: 't', content: ' \n ' }), {
      code: 'BAD_REQUEST',
      msg: 'Message must not be empty',
    })
    expectError(t, await as(app, member).post('/messages', { type: 'stream', to: JSON.stringify(['general', 'design']), topic: 't', content: 'x' }), {
      code: 'BAD_REQUEST',
      msg: 'Cannot send to multiple channels',
    })
    const byName = expectError(t, await as(app, member).post('/messages', { type: 'stream', to: 'nowhere', topic: 't', content: 'x' }), {
      code: 'STREAM_DOES_NOT_EXIST',
      msg: "Channel 'nowhere' does not exist",
    })
    t.equal(byName.stream, 'nowhere')
    const byId = expectError(t, await as(app, member).post('/messages', { type: 'stream', to: '999999', topic: 't', content: 'x' }), {
      code: 'STREAM_DOES_NOT_EXIST',
      msg: "Channel with ID '999999' does not exist",
    })
    t.equal(byId.stream_id, 999999)
    await services.prisma.realm.update({ where: { id: fx.realm.id }, data: { mandatoryTopics: true } })
    expectError(t, await as(app, member).post('/messages', { type: 'stream', to: 'general', topic: '(no topic)', content: 'x' }), {
      code: 'BAD_REQUEST',
      msg: 'Topics are required in this organization',
    })
    await services.prisma.realm.update({ where: { id: fx.realm.id }, data: { mandatoryTopics: false } })
    await send(member, { type: 'stream', to: 'general', topic: '(no topic)', content: 'fine now' })
    expectError(t, await as(app, member).post('/messages', { type: 'carrier-pigeon', to: 'general', topic: 't', content: 'x' }), {
      code: 'BAD_REQUEST',
      msg: 'Invalid message type',
    })
    expectError(t, await as(app, member).post('/messages', { type: 'stream', to: 'general', topic: 't', subject: 't', content: 'x' }), {
      code: 'REQUEST_CONFUSING_VAR',
    })
  })

  t.test('private channels need a subscription; guests need access', async (t) => {
    expectError(t, await as(app, otherMember).post('/messages', { type: 'stream', to: 'secret', topic: 't', content: 'x' }), {
      code: 'BAD_REQUEST',
      msg: "Not authorized to send to channel 'secret'",
    })
    expectError(t, await as(app, admin).post('/messages', { type: 'stream', to: secret.id, topic: 't', content: 'x' }), {
      code: 'BAD_REQUEST',
      msg: "Not authorized to send to channel 'secret'",
    })
    await send(member, { type: 'stream', to: 'secret', topic: 't', content: 'inside' })
    // Public channel, not subscribed: fine for members, not for guests.
    await send(otherMember, { type: 'stream', to: 'design', topic: 't', content: 'drive-by' })
    expectError(t, await as(app, guest).post('/messages', { type: 'stream', to: 'design', topic: 't', content: 'x' }), {
      code: 'BAD_REQUEST',
      msg: "Not authorized to send to channel 'design'",
    })
    await send(guest, { type: 'stream', to: 'general', topic: 't', content: 'guest in general' })
  })

  t.test('bots may post where their owner may', async (t) => {
    // The bot's owner (member) is subscribed to secret; the bot is not.
    await send(bot, { type: 'stream', to: 'secret', topic: 'bot', content: 'beep' })
  })

  t.test('can_send_message_group (level 333), set through stream_post_policy and as a group', async (t) => {
    const systemGroup = async (name: string) => (await services.prisma.userGroup.findFirstOrThrow({ where: { realmId: fx.realm.id, name } })).id
    const mk = async (name: string, setting: Record<string, unknown>) => {
      expectSuccess(t, await as(app, admin).post('/users/me/subscriptions', { subscriptions: [{ name }], principals: [guest.id, member.id], ...setting }))
    }
    await mk('admins-only', { stream_post_policy: 2 })
    await mk('new-members-restricted', { stream_post_policy: 3 })
    await mk('moderators-only', { can_send_message_group: await systemGroup('role:moderators') })
    await mk('two-people', { can_send_message_group: { direct_members: [otherMember.id], direct_subgroups: [await systemGroup('role:moderators')] } })
    await mk('nobody', { can_send_message_group: await systemGroup('role:nobody') })
    const err = async (user: User, to: string) =>
      expectError(t, await as(app, user).post('/messages', { type: 'stream', to, topic: 't', content: 'x' }), {
        code: 'BAD_REQUEST',
        msg: 'You do not have permission to post in this channel.',
      })
    await err(member, 'admins-only')
    await err(moderator, 'admins-only')
    await send(admin, { type: 'stream', to: 'admins-only', topic: 't', content: 'ok' })
    await err(member, 'moderators-only')
    await send(moderator, { type: 'stream', to: 'moderators-only', topic: 't', content: 'ok' })
    await send(admin, { type: 'stream', to: 'moderators-only', topic: 't', content: 'ok' })
    await err(guest, 'new-members-restricted')
    await send(member, { type: 'stream', to: 'new-members-restricted', topic: 't', content: 'ok' })
    await send(otherMember, { type: 'stream', to: 'two-people', topic: 't', content: 'ok' })
    await send(moderator, { type: 'stream', to: 'two-people', topic: 't', content: 'ok' })
    await err(member, 'two-people')
    // role:nobody: not even organization administrators (upstream has no exception for them).
    await err(admin, 'nobody')
    await services.prisma.realm.update({ where: { id: fx.realm.id }, data: { waitingPeriodThreshold: 3 } })
    t.teardown(() => services.prisma.realm.update({ where: { id: fx.realm.id }, data: { waitingPeriodThreshold: 0 } }))
    await err(member, 'new-members-restricted')
    await send(owner, { type: 'stream', to: 'new-members-restricted', topic: 't', content: 'ok' })
    // A bot whose owner may post is let through.
    const ownersBot = await fx.newUser({ isBot: true, botOwnerId: admin.id, fullName: 'Admin Bot' })
    await send(ownersBot, { type: 'stream', to: 'admins-only', topic: 't', content: 'ok' })
    // Scheduling and moving into the channel check the same setting.
    const at = Math.floor(Date.now() / 1000) + 3600
    expectError(t, await as(app, member).post('/scheduled_messages', { type: 'stream', to: JSON.stringify(await streamIdOf('admins-only')), topic: 't', content: 'x', scheduled_delivery_timestamp: at }), {
      code: 'BAD_REQUEST',
      msg: 'You do not have permission to post in this channel.',
    })
    const moved = await send(member, { type: 'stream', to: 'general', topic: 'to move', content: 'm' })
    expectError(t, await as(app, member).patch(`/messages/${moved}`, { stream_id: await streamIdOf('admins-only'), topic: 'to move' }), {
      code: 'BAD_REQUEST',
      msg: 'You do not have permission to post in this channel.',
    })
  })

  t.test('direct messages: recipients by id, email list or comma string', async (t) => {
    const a = await send(member, { type: 'direct', to: JSON.stringify([otherMember.id]), content: 'hi by id' })
    const b = await send(member, { type: 'private', to: JSON.stringify([otherMember.deliveryEmail]), content: 'hi by email' })
    const c = await send(member, { type: 'private', to: `${otherMember.deliveryEmail}, ${admin.deliveryEmail}`, content: 'group hi' })
    const m = await messageAs(otherMember, a)
    t.match(m, { type: 'private', content: '<p>hi by id</p>' })
    t.notOk('stream_id' in m)
    t.same(
      m.display_recipient,
      [member, otherMember]
        .sort((x, y) => x.id - y.id)
        .map((u) => ({ id: u.id, email: u.email, full_name: u.fullName, is_mirror_dummy: false })),
    )
    t.equal((await messageAs(otherMember, b)).recipient_id, m.recipient_id)
    // Level 327: an incoming 1:1 message has the recipient_id of the outgoing ones of its conversation, for either side.
    const reply = await send(otherMember, { type: 'direct', to: JSON.stringify([member.id]), content: 'hi back' })
    t.equal((await messageAs(otherMember, reply)).recipient_id, m.recipient_id)
    t.equal((await messageAs(member, reply)).recipient_id, (await messageAs(member, a)).recipient_id)
    const elsewhere = await send(admin, { type: 'direct', to: JSON.stringify([otherMember.id]), content: 'another conversation' })
    t.not((await messageAs(otherMember, elsewhere)).recipient_id, m.recipient_id, 'incoming 1:1 messages of other conversations differ')
    const group = await messageAs(admin, c)
    t.equal(group.display_recipient.length, 3)
    t.not(group.recipient_id, m.recipient_id)
    t.same(await flagsOf(otherMember, a), [])
    expectError(t, await as(app, owner).get(`/messages/${a}`), { code: 'BAD_REQUEST', msg: 'Invalid message(s)' })
  })

  t.test('direct message to oneself', async (t) => {
    const id = await send(member, { type: 'direct', to: JSON.stringify([member.id]), content: 'note to self' })
    const m = await messageAs(member, id)
    t.same(m.display_recipient.map((u: Body) => u.id), [member.id])
  })

  t.test('direct message errors', async (t) => {
    expectError(t, await as(app, member).post('/messages', { type: 'direct', to: '[]', content: 'x' }), { code: 'BAD_REQUEST', msg: 'Message must have recipients' })
    expectError(t, await as(app, member).post('/messages', { type: 'direct', content: 'x' }), { code: 'BAD_REQUEST', msg: 'Message must have recipients' })
    expectError(t, await as(app, member).post('/messages', { type: 'direct', to: '[424242]', content: 'x' }), { code: 'BAD_REQUEST', msg: 'Invalid user ID 424242' })
    expectError(t, await as(app, member).post('/messages', { type: 'direct', to: '["nobody@example.org"]', content: 'x' }), {
      code: 'BAD_REQUEST',
      msg: "Invalid email 'nobody@example.org'",
    })
    const gone = await fx.newUser({ fullName: 'Gone Person' })
    await services.prisma.user.update({ where: { id: gone.id }, data: { isActive: false } })
    expectError(t, await as(app, member).post('/messages', { type: 'direct', to: JSON.stringify([gone.id]), content: 'x' }), {
      code: 'BAD_REQUEST',
      msg: `'${gone.email}' is no longer using Roost.`,
    })
  })

  t.test('long content and topics are truncated, not rejected', async (t) => {
    const id = await send(member, { type: 'stream', to: 'general', topic: 'x'.repeat(70), content: 'y'.repeat(10050) })
    const raw = expectSuccess(t, await as(app, member).get(`/messages/${id}`))
    t.equal(raw.raw_content.length, 10000)
    t.ok(raw.raw_content.endsWith('\n[message truncated]'))
    t.equal(raw.message.subject, 'x'.repeat(57) + '...')
  })

  t.test('the sender copy starts read for interactive clients or when asked', async (t) => {
    const api = await send(member, { type: 'stream', to: 'general', topic: 'read', content: 'from the API' })
    t.same(await flagsOf(member, api), [])
    const asked = await send(member, { type: 'stream', to: 'general', topic: 'read', content: 'asked', read_by_sender: true })
    t.same(await flagsOf(member, asked), ['read'])
    const web = await as(app, member).request('POST', '/messages', { type: 'stream', to: 'general', topic: 'read', content: 'web' }, {
      headers: { 'user-agent': 'ZulipMobile/27.200 (Android 14)' },
    })
    const webId = expectSuccess(t, web).id as number
    t.same(await flagsOf(member, webId), ['read'])
    t.equal((await messageAs(member, webId)).client, 'ZulipMobile')
    const notRead = await send(member, { type: 'stream', to: 'general', topic: 'read', content: 'x', read_by_sender: false, client: 'website' })
    t.same(await flagsOf(member, notRead), [])
    t.same(await flagsOf(otherMember, asked), [])
  })

  t.test('mentions become flags for each recipient', async (t) => {
    const id = await send(member, {
      type: 'stream',
      to: 'general',
      topic: 'mentions',
      content: '@**Otto Other** and @_**Adam Admin** hello',
    })
    const m = await messageAs(otherMember, id)
    t.match(m.content, /class="user-mention" data-user-id="\d+">@Otto Other<\/span>/)
    t.same(await flagsOf(otherMember, id), ['mentioned'])
    t.same(await flagsOf(admin, id), [])
    t.same(await flagsOf(moderator, id), [])
  })

  t.test('group mentions reach members of the group and of its subgroups', async (t) => {
    const outer = await services.prisma.userGroup.create({ data: { realmId: fx.realm.id, name: 'designers' } })
    const inner = await services.prisma.userGroup.create({ data: { realmId: fx.realm.id, name: 'illustrators' } })
    await services.prisma.userGroupMember.create({ data: { groupId: outer.id, userId: admin.id } })
    await services.prisma.userGroupMember.create({ data: { groupId: inner.id, userId: moderator.id } })
    await services.prisma.userGroupSubgroup.create({ data: { supergroupId: outer.id, subgroupId: inner.id } })
    const id = await send(member, { type: 'stream', to: 'general', topic: 'groups', content: 'ping @*designers*' })
    t.same(await flagsOf(admin, id), ['mentioned'])
    t.same(await flagsOf(moderator, id), ['mentioned'])
    t.same(await flagsOf(otherMember, id), [])
  })

  t.test('wildcards: channel wildcard for everyone, topic wildcard for participants', async (t) => {
    await send(admin, { type: 'stream', to: 'general', topic: 'party', content: 'I was here' })
    const all = await send(member, { type: 'stream', to: 'general', topic: 'party', content: '@**all** cake' })
    for (const u of [owner, admin, otherMember, guest]) {
      t.same(await flagsOf(u, all), ['stream_wildcard_mentioned', 'wildcard_mentioned'], `flags of ${u.fullName}`)
    }
    const topic = await send(member, { type: 'stream', to: 'general', topic: 'party', content: '@**topic** more cake' })
    t.same(await flagsOf(admin, topic), ['topic_wildcard_mentioned', 'wildcard_mentioned'])
    t.same(await flagsOf(member, topic), ['topic_wildcard_mentioned', 'wildcard_mentioned'])
    t.same(await flagsOf(otherMember, topic), [])
  })

  t.test('wildcard mention policy applies in large channels and topics', async (t) => {
    const big = await services.prisma.stream.create({
      data: { realmId: fx.realm.id, name: 'big', canRemoveSubscribersGroupId: general.canRemoveSubscribersGroupId },
    })
    const crowd: User[] = []
    for (let i = 0; i < 16; i++) crowd.push(await fx.newUser({ fullName: `Crowd ${i}` }))
    await services.prisma.subscription.createMany({ data: crowd.map((u) => ({ userId: u.id, streamId: big.id, color: '#ffffff' })) })
    await services.prisma.subscription.create({ data: { userId: member.id, streamId: big.id, color: '#ffffff' } })
    await realmSetter(app, owner, services.prisma, fx.realm.id)({ wildcardMentionPolicy: 5 })
    t.teardown(() => realmSetter(app, owner, services.prisma, fx.realm.id)({ wildcardMentionPolicy: 5 }))
    expectError(t, await as(app, member).post('/messages', { type: 'stream', to: 'big', topic: 't', content: '@**everyone** hi' }), {
      code: 'STREAM_WILDCARD_MENTION_NOT_ALLOWED',
      status: 400,
      msg: 'You do not have permission to use channel wildcard mentions in this channel.',
    })
    await send(admin, { type: 'stream', to: 'big', topic: 't', content: '@**everyone** hi' })
    // Small channel: anyone.
    await send(member, { type: 'stream', to: 'design', topic: 't', content: '@**channel** hi' })
    // Topic with 16 participants.
    for (const u of crowd) await send(u, { type: 'stream', to: 'big', topic: 'busy', content: 'me too' })
    expectError(t, await as(app, member).post('/messages', { type: 'stream', to: 'big', topic: 'busy', content: '@**topic** hi' }), {
      code: 'TOPIC_WILDCARD_MENTION_NOT_ALLOWED',
      status: 400,
      msg: 'You do not have permission to use topic wildcard mentions in this topic.',
    })
    await send(member, { type: 'stream', to: 'big', topic: 'quiet', content: '@**topic** hi' })
  })

  t.test('alert words match whole words, case-insensitively', async (t) => {
    await services.prisma.alertWord.create({ data: { userId: otherMember.id, word: 'Deploy' } })
    const hit = await send(member, { type: 'stream', to: 'general', topic: 'alerts', content: 'time to deploy!' })
    const miss = await send(member, { type: 'stream', to: 'general', topic: 'alerts', content: 'redeployment later' })
    t.same(await flagsOf(otherMember, hit), ['has_alert_word'])
    t.same(await flagsOf(otherMember, miss), [])
    t.same(await flagsOf(admin, hit), [])
  })

  t.test('publishes one message event with per-recipient flags', async (t) => {
    const items = await captureBus(() =>
      as(app, member).post('/messages', { type: 'stream', to: 'design', topic: 'events', content: 'hey @**Olivia Owner**', queue_id: 'q1', local_id: '7.01' }),
    )
    t.equal(items.length, 1)
    const item = items[0] as BusItem
    t.same([...item.userIds].sort((a, b) => a - b), [owner.id, member.id].sort((a, b) => a - b))
    t.equal(item.publicStreamId, design.id)
    t.match(item.event, {
      type: 'message',
      message: {
        sender_id: member.id,
        type: 'stream',
        stream_id: design.id,
        display_recipient: 'design',
        subject: 'events',
        content_type: 'text/html',
        raw_content: 'hey @**Olivia Owner**',
      },
    })
    t.match((item.event.message as Body).content, /user-mention/)
    t.same(item.perUser?.[owner.id], { flags: ['mentioned'] })
    t.same(item.perUser?.[member.id], { flags: [], local_message_id: '7.01', sender_queue_id: 'q1' })

    const dm = await captureBus(() => as(app, member).post('/messages', { type: 'direct', to: JSON.stringify([guest.id]), content: 'psst' }))
    t.equal(dm[0]?.publicStreamId, undefined)
    t.same(dm[0]?.perUser?.[guest.id], { flags: [] })
    t.equal(((dm[0]?.event.message as Body).display_recipient as Body[]).length, 2)

    const priv = await captureBus(() => as(app, member).post('/messages', { type: 'stream', to: 'secret', topic: 't', content: 'hush' }))
    t.equal(priv[0]?.publicStreamId, undefined)
  })

  t.test('event queues receive the message in their own rendering, local_message_id only on the sending queue', async (t) => {
    const register = async (user: User, params: Record<string, unknown>) =>
      expectSuccess(t, await as(app, user).post('/register', { event_types: ['message'], ...params })).queue_id as string
    const poll = async (user: User, queueId: string) =>
      expectSuccess(t, await as(app, user).get('/events', { queue_id: queueId, last_event_id: -1, dont_block: true })).events as Body[]
    const senderQueue = await register(member, { apply_markdown: true })
    const otherSenderQueue = await register(member, {})
    const markdownQueue = await register(otherMember, { apply_markdown: false })
    const id = await send(member, { type: 'stream', to: 'general', topic: 'queues', content: '**hi** @**Otto Other**', queue_id: senderQueue, local_id: '1.5' })
    const [own] = await poll(member, senderQueue)
    t.match(own, { type: 'message', local_message_id: '1.5', flags: [], message: { id, content_type: 'text/html' } })
    t.notOk('raw_content' in own.message)
    t.notOk('sender_queue_id' in own)
    const [twin] = await poll(member, otherSenderQueue)
    t.notOk('local_message_id' in twin)
    const [other] = await poll(otherMember, markdownQueue)
    t.match(other, { type: 'message', flags: ['mentioned'], message: { id, content: '**hi** @**Otto Other**', content_type: 'text/x-markdown' } })
  })

  t.test('guests and new users get rows only where they are recipients', async (t) => {
    const late = await fx.newUser({ role: ROLE.MEMBER, fullName: 'Late Comer' })
    const id = await send(member, { type: 'stream', to: 'secret', topic: 'old', content: 'before you came' })
    expectError(t, await as(app, late).get(`/messages/${id}`), { code: 'BAD_REQUEST', msg: 'Invalid message(s)' })
    expectError(t, await as(app, guest).get(`/messages/${id}`), { code: 'BAD_REQUEST', msg: 'Invalid message(s)' })
  })
})
