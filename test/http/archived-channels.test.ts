// Archived channels as upstream 10.0 has them (levels 315, 360, 362) with the
// events of level 378: DELETE /streams/{id} keeps the channel's name and
// subscribers; clients with the archived_channels capability get stream
// update {is_archived: true} and keep the channel in their lists, the others
// get stream delete and never see it. Its history stays readable; sending,
// editing, deleting and reacting are refused; subscriptions and privacy stay
// editable.
import t from 'tap'
import type { FastifyInstance } from 'fastify'
import type { User } from '../../src/db/index.js'
import { buildTestApp } from '../support/app.js'
import { as } from '../support/client.js'
import { bodyOf, expectError, expectSuccess, type Body } from '../support/expect.js'
import { checkEventSchemas, MODERN_CAPABILITIES, type CapturedEvent } from '../support/events.js'
import { checkStateAfter } from '../support/state-check.js'

type Person = Pick<User, 'id' | 'deliveryEmail' | 'apiKey'>

/** The events one change gives a queue with and a queue without archived_channels. */
async function bothQueues(app: FastifyInstance, user: Person, fn: () => Promise<unknown>): Promise<{ modern: CapturedEvent[]; legacy: CapturedEvent[] }> {
  const register = async (caps: Record<string, boolean>) => bodyOf(await as(app, user).post('/register', { client_capabilities: caps, fetch_event_types: [] }))
  const queues = [await register(MODERN_CAPABILITIES), await register({ ...MODERN_CAPABILITIES, archived_channels: false })]
  await fn()
  await new Promise((resolve) => setImmediate(resolve))
  const [modern, legacy] = await Promise.all(
    queues.map(async (q) => {
      const events = bodyOf(await as(app, user).get('/events', { queue_id: q.queue_id, last_event_id: q.last_event_id, dont_block: true })).events as CapturedEvent[]
      await as(app, user).delete('/events', { queue_id: q.queue_id })
      checkEventSchemas(events)
      return events.filter((e) => e.type !== 'heartbeat')
    }),
  )
  return { modern: modern ?? [], legacy: legacy ?? [] }
}

const NOTICE = (name: string) => `Channel #**${name}** has been archived.`

t.test('archiving a channel', async (t) => {
  const { app, fx, services } = await buildTestApp(t)
  const { owner, admin, member, otherMember } = fx.users
  const { general, design, secret } = fx.streams
  const sent = expectSuccess(t, await as(app, member).post('/messages', { type: 'stream', to: general.id, topic: 'plans', content: 'before the archive' })).id as number
  const activeSubscribers = await services.prisma.subscription.count({ where: { streamId: general.id, active: true } })

  t.test('tells each client in the form it understands', async (t) => {
    const { modern, legacy } = await bothQueues(app, member, () => as(app, admin).delete(`/streams/${general.id}`))
    const notice = { type: 'message', message: { display_recipient: 'general', subject: 'channel events', content: /has been archived/ }, flags: ['read'] }
    // general is also the organization's announcements channel: that setting goes back to none.
    const announcements = { type: 'realm', op: 'update_dict', property: 'default', data: { new_stream_announcements_stream_id: -1, signup_announcements_stream_id: -1 } }
    t.match(modern, [
      { type: 'default_streams', default_streams: [] },
      announcements,
      { type: 'stream', op: 'update', stream_id: general.id, name: 'general', property: 'is_archived', value: true },
      notice,
    ])
    t.equal(modern.length, 4, 'no stream delete for a client that keeps archived channels')
    t.match(legacy, [
      { type: 'default_streams', default_streams: [] },
      announcements,
      { type: 'stream', op: 'delete', streams: [{ stream_id: general.id, name: 'general', is_archived: true }], stream_ids: [general.id] },
      notice,
    ])
    t.equal(legacy.length, 4, 'no is_archived update for a client that drops the channel')
    t.notOk('__for_archiving' in (legacy[2] ?? {}), 'the internal marker is not delivered')
  })

  t.test('keeps the name, the privacy and every subscription; leaves the default channels', async (t) => {
    const row = await services.prisma.stream.findUniqueOrThrow({ where: { id: general.id } })
    t.match(row, { name: 'general', deactivated: true, inviteOnly: false })
    t.equal(await services.prisma.subscription.count({ where: { streamId: general.id, active: true } }), activeSubscribers)
    t.same(expectSuccess(t, await as(app, owner).get('/default_streams')).default_streams, [])
    const notice = await services.prisma.message.findFirstOrThrow({ where: { streamId: general.id }, orderBy: { id: 'desc' } })
    t.equal(notice.content, NOTICE('general'))
    t.equal(notice.senderId, fx.notificationBot.id)
  })

  t.test('a second archive is refused', async (t) => {
    expectError(t, await as(app, admin).delete(`/streams/${general.id}`), { code: 'BAD_REQUEST', msg: 'Channel is already deactivated' })
    // Those who do not administer the channel are still refused as such first (level 325).
    expectError(t, await as(app, member).delete(`/streams/${general.id}`), { code: 'BAD_REQUEST', msg: 'You do not have permission to administer this channel.' })
  })

  t.test('register lists it only for clients with archived_channels', async (t) => {
    const register = async (caps: Record<string, boolean>) =>
      expectSuccess(t, await as(app, member).post('/register', { client_capabilities: caps, fetch_event_types: ['subscription', 'stream'] }))
    const find = (state: Body, key: string) => (state[key] as Body[]).find((s) => s.stream_id === general.id)
    const modern = await register({ archived_channels: true })
    t.match(find(modern, 'subscriptions'), { name: 'general', is_archived: true })
    t.match(find(modern, 'streams'), { name: 'general', is_archived: true })
    const legacy = await register({})
    t.equal(find(legacy, 'subscriptions'), undefined)
    t.equal(find(legacy, 'streams'), undefined)
    // A non-subscriber who may see it has it in never_subscribed (level 362).
    expectSuccess(t, await as(app, admin).delete('/users/me/subscriptions', { subscriptions: JSON.stringify(['general']) }))
    const bystander = expectSuccess(t, await as(app, otherMember).post('/register', { client_capabilities: { archived_channels: true }, fetch_event_types: ['subscription'] }))
    t.ok((bystander.subscriptions as Body[]).some((s) => s.stream_id === general.id), 'still subscribed')
    const adminState = expectSuccess(t, await as(app, admin).post('/register', { client_capabilities: { archived_channels: true }, fetch_event_types: ['subscription'] }))
    t.match((adminState.unsubscribed as Body[]).find((s) => s.stream_id === general.id), { is_archived: true })
    // GET /users/me/subscriptions leaves archived channels out, as upstream's gather_subscriptions.
    t.notOk((expectSuccess(t, await as(app, member).get('/users/me/subscriptions')).subscriptions as Body[]).some((s) => s.stream_id === general.id))
  })

  t.test('takes no messages, by ID or by name, now or scheduled', async (t) => {
    const refused = { code: 'BAD_REQUEST', msg: "Not authorized to send to channel 'general'" }
    expectError(t, await as(app, member).post('/messages', { type: 'stream', to: general.id, topic: 't', content: 'x' }), refused)
    expectError(t, await as(app, member).post('/messages', { type: 'stream', to: 'general', topic: 't', content: 'x' }), refused)
    const at = Math.floor(Date.now() / 1000) + 3600
    expectError(t, await as(app, member).post('/scheduled_messages', { type: 'stream', to: general.id, topic: 't', content: 'x', scheduled_delivery_timestamp: at }), refused)
  })

  t.test('its history stays readable (level 360)', async (t) => {
    const narrow = JSON.stringify([{ operator: 'channel', operand: general.id }])
    const page = expectSuccess(t, await as(app, otherMember).get('/messages', { anchor: 'oldest', num_before: 0, num_after: 10, narrow }))
    t.ok((page.messages as Body[]).some((m) => m.id === sent), 'the channel narrow finds its messages')
    t.match(expectSuccess(t, await as(app, otherMember).get(`/messages/${sent}`)).message, { id: sent, stream_id: general.id })
    t.ok(Array.isArray(expectSuccess(t, await as(app, otherMember).get(`/messages/${sent}/read_receipts`)).user_ids))
  })

  t.test('its messages cannot be edited, moved, deleted or reacted to', async (t) => {
    const invalid = { code: 'BAD_REQUEST', msg: 'Invalid message(s)' }
    expectError(t, await as(app, member).patch(`/messages/${sent}`, { content: 'edited' }), invalid)
    expectError(t, await as(app, member).patch(`/messages/${sent}`, { topic: 'moved' }), invalid)
    expectError(t, await as(app, member).patch(`/messages/${sent}`, { stream_id: design.id }), invalid)
    expectError(t, await as(app, member).post(`/messages/${sent}/reactions`, { emoji_name: 'smile' }), invalid)
    expectError(t, await as(app, member).delete(`/messages/${sent}/reactions`, { emoji_name: 'smile' }), invalid)
    expectError(t, await as(app, owner).delete(`/messages/${sent}`), invalid)
    t.equal((await services.prisma.message.findUniqueOrThrow({ where: { id: sent } })).content, 'before the archive')
  })

  t.test('subscription properties are refused as upstream refuses them (access_stream_by_id)', async (t) => {
    const data = JSON.stringify([{ stream_id: general.id, property: 'pin_to_top', value: true }])
    expectError(t, await as(app, member).post('/users/me/subscriptions/properties', { subscription_data: data }), { code: 'BAD_REQUEST', msg: 'Invalid channel ID' })
  })

  t.test('subscribing and unsubscribing go on (level 362), under the state check', async (t) => {
    await checkStateAfter(t, app, member, () => as(app, member).delete('/users/me/subscriptions', { subscriptions: JSON.stringify(['general']) }), {
      expectTypes: ['subscription/remove'],
    })
    await checkStateAfter(t, app, member, async () => {
      const body = expectSuccess(t, await as(app, member).post('/users/me/subscriptions', { subscriptions: JSON.stringify([{ name: 'general' }]) }))
      t.same(body.subscribed, { [String(member.id)]: ['general'] }, 'the archived channel, not a new one')
    }, { expectTypes: ['subscription/add'] })
    t.equal(await services.prisma.stream.count({ where: { realmId: fx.realm.id, name: 'general' } }), 1)
    // The other subscribers see the member leave (with the capability; without it they know no such channel).
    await checkStateAfter(t, app, otherMember, () => as(app, member).delete('/users/me/subscriptions', { subscriptions: JSON.stringify(['general']) }), {
      expectTypes: ['subscription/peer_remove'],
    })
  })

  t.test('its privacy can change (level 362); the notice goes to the archived channel', async (t) => {
    await checkStateAfter(t, app, otherMember, () => as(app, owner).patch(`/streams/${general.id}`, { is_private: true }), { expectTypes: ['stream/update'] })
    const row = await services.prisma.stream.findUniqueOrThrow({ where: { id: general.id } })
    t.match(row, { inviteOnly: true, deactivated: true })
    const last = await services.prisma.message.findFirstOrThrow({ where: { streamId: general.id }, orderBy: { id: 'desc' } })
    t.match(last.content, /access permissions/)
  })

  t.test('under the state check: a subscriber and a bystander, with and without the capability', async (t) => {
    // The organization's settings naming an archived channel go back to none (upstream maybe_set_moderation_or_announcement_channels_none).
    expectSuccess(t, await as(app, owner).patch('/realm', { new_stream_announcements_stream_id: design.id, signup_announcements_stream_id: design.id, moderation_request_channel_id: secret.id }))
    const archiving = await checkStateAfter(t, app, member, () => as(app, admin).delete(`/streams/${design.id}`), { expectTypes: ['stream/update', 'message', 'realm/update_dict'] })
    t.match(archiving.filter((e) => e.type === 'realm'), [{ op: 'update_dict', property: 'default', data: { new_stream_announcements_stream_id: -1, signup_announcements_stream_id: -1 } }])
    await checkStateAfter(t, app, admin, () => as(app, owner).delete(`/streams/${secret.id}`), { expectTypes: ['stream/update', 'realm/update_dict'] })
    t.match(await services.prisma.realm.findUniqueOrThrow({ where: { id: fx.realm.id } }), {
      newStreamAnnouncementsStreamId: null,
      signupAnnouncementsStreamId: null,
      moderationRequestChannelId: null,
    })
    const events = await checkStateAfter(t, app, otherMember, () => as(app, owner).post('/users/me/subscriptions', { subscriptions: JSON.stringify([{ name: 'design' }]), principals: JSON.stringify([otherMember.id]) }), {
      expectTypes: ['subscription/add'],
    })
    t.match(events.find((e) => e.type === 'subscription' && e.op === 'add')?.subscriptions, [{ name: 'design', is_archived: true }])
  })
})
