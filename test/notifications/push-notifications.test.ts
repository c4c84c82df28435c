// Push notifications through the HTTP API, delivered by the Web Push sender to
// a real Web Push service on loopback that checks VAPID and decrypts the
// RFC 8291 payload: the subscription endpoint, upstream's push triggers and
// settings, mutes and idle detection, read messages, token pruning on 410 and
// retries on a failing service.
import t from 'tap'
import webpush from 'web-push'
import { buildTestApp } from '../support/app.js'
import { as } from '../support/client.js'
import { expectError, expectSuccess } from '../support/expect.js'
import { startWebPushPeer, type ReceivedPush } from '../support/web-push-peer.js'
import { deliverPushNotifications, PUSH_REMOVE_MAX_IDS } from '../../src/notifications/push-delivery.js'
import { pushSendersFor } from '../../src/notifications/push-senders.js'
import type { User } from '../../src/db/index.js'

t.test('push notifications', async (t) => {
  const peer = await startWebPushPeer()
  t.teardown(() => peer.close())
  const vapid = webpush.generateVAPIDKeys()
  const webPush = { publicKey: vapid.publicKey, privateKey: vapid.privateKey, subject: 'mailto:admin@example.com' }
  const { app, fx, services, config } = await buildTestApp(t, { config: { webPush } })
  const realmId = fx.realm.id
  const owner = await fx.user('owner')
  const senders = pushSendersFor(config, { ca: [peer.ca] })

  /** Makes every pending row of the realm due, runs delivery until nothing is left, returns the pushes received meanwhile. */
  const flush = async (onFailure?: () => void): Promise<ReceivedPush[]> => {
    const before = peer.received.length
    await services.prisma.$executeRaw`UPDATE missed_push_notification SET due_at = now() - interval '1 minute' WHERE realm_id = ${realmId} AND attempts = 0`
    while ((await deliverPushNotifications(services, { log: app.log, realmIds: [realmId], retryBaseMs: 60_000, ...(onFailure ? { onFailure } : {}) }, senders)) > 0) {
      // until nothing is due
    }
    return peer.received.slice(before)
  }
  const pending = async (userId: number) => services.prisma.missedPushNotification.count({ where: { userId } })
  const dm = async (from: User, to: User, content: string): Promise<number> =>
    expectSuccess(t, await as(app, from).post('/messages', { type: 'direct', to: [to.id], content })).id as number
  const say = async (from: User, topic: string, content: string): Promise<number> =>
    expectSuccess(t, await as(app, from).post('/messages', { type: 'channel', to: fx.streams.general.id, topic, content })).id as number
  /** A user subscribed to the general channel, with one browser subscribed to Web Push. */
  const recipient = async (name: string) => {
    const user = await fx.newUser({ fullName: name })
    expectSuccess(t, await as(app, user).post('/users/me/subscriptions', { subscriptions: [{ name: fx.streams.general.name }] }))
    const browser = peer.subscribe()
    expectSuccess(t, await as(app, user).post('/users/me/webpush_subscription', browser))
    const mine = (pushes: ReceivedPush[]) => pushes.filter((p) => p.endpoint === browser.endpoint)
    return { user, browser, mine }
  }

  t.test('/server_settings reports push as enabled when a sender is configured, with the VAPID public key', async (t) => {
    const settings = expectSuccess(t, await app.inject({ method: 'GET', url: '/api/v1/server_settings', headers: { host: fx.host } }))
    t.equal(settings.push_notifications_enabled, true)
    t.equal(settings.webpush_vapid_public_key, vapid.publicKey, 'the key browsers subscribe with')
    const plain = await buildTestApp(t)
    t.equal(expectSuccess(t, await plain.app.inject({ method: 'GET', url: '/api/v1/server_settings', headers: { host: plain.fx.host } })).push_notifications_enabled, false)
  })

  t.test('the Web Push subscription endpoint checks its parameters', async (t) => {
    const bob = await fx.newUser({ fullName: 'Bob Params' })
    const good = peer.subscribe()
    expectError(t, await as(app, bob).post('/users/me/webpush_subscription', { ...good, endpoint: 'http://insecure.example/x' }), { code: 'BAD_REQUEST', status: 400 })
    expectError(t, await as(app, bob).post('/users/me/webpush_subscription', { ...good, p256dh: 'AAAA' }), { code: 'BAD_REQUEST', status: 400 })
    expectError(t, await as(app, bob).post('/users/me/webpush_subscription', { ...good, auth: 'not base64!' }), { code: 'BAD_REQUEST', status: 400 })
    expectError(t, await as(app, bob).post('/users/me/webpush_subscription', { endpoint: good.endpoint }), { code: 'REQUEST_VARIABLE_MISSING', status: 400, msg: "Missing 'p256dh' argument" })
    expectSuccess(t, await as(app, bob).post('/users/me/webpush_subscription', good))
    expectSuccess(t, await as(app, bob).post('/users/me/webpush_subscription', good)) // subscribing twice is fine
    t.equal(await services.prisma.webPushSubscription.count({ where: { userId: bob.id } }), 1)
    expectSuccess(t, await as(app, bob).delete('/users/me/webpush_subscription', { endpoint: good.endpoint }))
    expectError(t, await as(app, bob).delete('/users/me/webpush_subscription', { endpoint: good.endpoint }), { code: 'BAD_REQUEST', status: 400 })
  })

  t.test('a direct message reaches the browser once, encrypted, with upstream’s payload keys and a VAPID signature', async (t) => {
    const { user: bob, mine } = await recipient('Bob Push')
    const id = await dm(owner, bob, 'Lunch at noon?')
    t.equal(await pending(bob.id), 1)
    const pushes = mine(await flush())
    t.equal(pushes.length, 1)
    const push = pushes[0]!
    t.match(push.payload, {
      event: 'message',
      server: new URL(config.externalUrl).host,
      realm_id: realmId,
      realm_url: String,
      realm_uri: String,
      user_id: bob.id,
      sender_id: owner.id,
      sender_email: owner.email,
      sender_full_name: owner.fullName,
      recipient_type: 'private',
      zulip_message_id: id,
      content: 'Lunch at noon?',
      content_truncated: false,
    })
    t.equal(push.vapid.publicKey, vapid.publicKey)
    t.equal(push.vapid.sub, webPush.subject)
    t.ok(push.vapid.exp > Date.now() / 1000)
    t.ok(Number(push.ttl) > 0)
    t.equal(await pending(bob.id), 0, 'sent rows are gone')
    t.same(mine(await flush()), [], 'and never sent again')
  })

  t.test('mentions push with enable_offline_push_notifications, not without', async (t) => {
    const { user: bob, mine } = await recipient('Bob Mention')
    const id = await say(owner, 'plans', `@**Bob Mention** look`)
    const [push] = mine(await flush())
    t.match(push?.payload, { zulip_message_id: id, recipient_type: 'stream', stream: fx.streams.general.name, stream_id: fx.streams.general.id, topic: 'plans' })
    expectSuccess(t, await as(app, bob).patch('/settings', { enable_offline_push_notifications: false }))
    await say(owner, 'plans', `@**Bob Mention** again`)
    await dm(owner, bob, 'and a direct one')
    t.equal(await pending(bob.id), 0)
  })

  t.test('channel messages push per the subscription’s push_notifications, else enable_stream_push_notifications', async (t) => {
    const { user: bob } = await recipient('Bob Stream Push')
    const { user: carol } = await recipient('Carol Stream Push')
    const { user: dave } = await recipient('Dave No Stream Push')
    expectSuccess(t, await as(app, bob).patch('/settings', { enable_stream_push_notifications: true }))
    expectSuccess(t, await as(app, carol).post('/users/me/subscriptions/properties', {
      subscription_data: [{ stream_id: fx.streams.general.id, property: 'push_notifications', value: true }],
    }))
    await say(owner, 'news', 'for everyone who wants a push')
    t.equal(await pending(bob.id), 1)
    t.equal(await pending(carol.id), 1)
    t.equal(await pending(dave.id), 0, 'off by default')
    await flush()
  })

  t.test('a muted sender or a muted topic does not push', async (t) => {
    const { user: bob } = await recipient('Bob Mutes')
    expectSuccess(t, await as(app, bob).patch('/settings', { enable_stream_push_notifications: true }))
    expectSuccess(t, await as(app, bob).post('/user_topics', { stream_id: fx.streams.general.id, topic: 'noise', visibility_policy: 1 }))
    await say(owner, 'noise', 'muted topic')
    t.equal(await pending(bob.id), 0)
    expectSuccess(t, await as(app, bob).post(`/users/me/muted_users/${owner.id}`))
    await dm(owner, bob, 'muted sender')
    t.equal(await pending(bob.id), 0)
  })

  t.test('an active user gets a push only with enable_online_push_notifications', async (t) => {
    const { user: bob } = await recipient('Bob Online')
    expectSuccess(t, await as(app, bob).post('/register', { event_types: ['message'] }))
    expectSuccess(t, await as(app, bob).post('/users/me/presence', { status: 'active' }))
    await dm(owner, bob, 'online, default on')
    t.equal(await pending(bob.id), 1)
    await flush()
    expectSuccess(t, await as(app, bob).patch('/settings', { enable_online_push_notifications: false }))
    await dm(owner, bob, 'online, setting off')
    t.equal(await pending(bob.id), 0)
  })

  t.test('a message read before the push goes out is not pushed', async (t) => {
    const { user: bob, mine } = await recipient('Bob Read')
    const id = await dm(owner, bob, 'read elsewhere')
    expectSuccess(t, await as(app, bob).post('/messages/flags', { messages: [id], op: 'add', flag: 'read' }))
    t.same(mine(await flush()), [])
    t.equal(await pending(bob.id), 0)
  })

  t.test('reading a pushed message elsewhere sends upstream’s remove notice, once', async (t) => {
    const { user: bob, mine } = await recipient('Bob Removal')
    const first = await dm(owner, bob, 'read me on the desktop')
    const second = await dm(owner, bob, 'and me with mark-all-read')
    t.equal(mine(await flush()).length, 2)
    expectSuccess(t, await as(app, bob).post('/messages/flags', { messages: [first], op: 'add', flag: 'read' }))
    const [removal, ...more] = mine(await flush())
    t.equal(more.length, 0)
    t.match(removal?.payload, { event: 'remove', zulip_message_ids: String(first), zulip_message_id: first, user_id: bob.id, realm_id: realmId, server: String })
    expectSuccess(t, await as(app, bob).post('/mark_all_as_read'))
    t.match(mine(await flush()).map((p) => p.payload), [{ event: 'remove', zulip_message_ids: String(second) }])
    expectSuccess(t, await as(app, bob).post('/messages/flags', { messages: [first], op: 'remove', flag: 'read' }))
    expectSuccess(t, await as(app, bob).post('/messages/flags', { messages: [first], op: 'add', flag: 'read' }))
    t.same(mine(await flush()), [], 'no second removal')
  })

  t.test('marking many pushed messages read sends one removal notice listing them all', async (t) => {
    const { user: bob, mine } = await recipient('Bob Batch')
    const ids: number[] = []
    for (let i = 0; i < 3; i++) ids.push(await dm(owner, bob, `batch ${i}`))
    ids.push(await say(owner, 'batch topic', `@**${bob.fullName}** look`))
    t.equal(mine(await flush()).length, 4)
    expectSuccess(t, await as(app, bob).post('/mark_all_as_read'))
    t.equal(await pending(bob.id), 4, 'one removal row per message until delivery')
    const removals = mine(await flush())
    t.equal(removals.length, 1, 'one notice')
    t.match(removals[0]?.payload, { event: 'remove', zulip_message_ids: ids.join(','), zulip_message_id: ids[0] })
    t.equal(await pending(bob.id), 0)
  })

  t.test(`removal notices carry at most ${PUSH_REMOVE_MAX_IDS} message IDs each; none is dropped`, async (t) => {
    // The pushes go out before the browser subscribes (no device: nothing to encrypt), which keeps the test quick.
    const bob = await fx.newUser({ fullName: 'Bob Many' })
    const ids: number[] = []
    for (let i = 0; i <= PUSH_REMOVE_MAX_IDS; i++) ids.push(await dm(owner, bob, `many ${i}`))
    await flush()
    const browser = peer.subscribe()
    expectSuccess(t, await as(app, bob).post('/users/me/webpush_subscription', browser))
    const mine = (pushes: ReceivedPush[]) => pushes.filter((p) => p.endpoint === browser.endpoint)
    expectSuccess(t, await as(app, bob).post('/mark_all_as_read'))
    const removals = mine(await flush()).map((p) => String(p.payload.zulip_message_ids).split(',').map(Number))
    t.same(removals.map((r) => r.length), [PUSH_REMOVE_MAX_IDS, 1])
    t.same(removals.flat(), ids)
  })

  t.test('deleting a pushed message sends a removal notice; deleting one not yet pushed drops its push', async (t) => {
    const { user: bob, mine } = await recipient('Bob Deleted')
    const pushed = await dm(owner, bob, 'oops, wrong person')
    t.equal(mine(await flush()).length, 1)
    expectSuccess(t, await as(app, owner).delete(`/messages/${pushed}`))
    t.equal(await pending(bob.id), 1)
    t.match(mine(await flush()).map((p) => p.payload), [{ event: 'remove', zulip_message_ids: String(pushed), user_id: bob.id }])
    const unsent = await dm(owner, bob, 'never mind')
    t.equal(await pending(bob.id), 1)
    expectSuccess(t, await as(app, owner).delete(`/messages/${unsent}`))
    t.equal(await pending(bob.id), 0, 'the pending push went with the message')
    t.same(mine(await flush()), [])
  })

  t.test('a group mention names the smallest mentioned group of the user, as upstream’s payload does; a personal mention names none', async (t) => {
    const { user: bob, mine } = await recipient('Bob Grouped')
    const admin = await fx.user('admin')
    const group = async (name: string, members: number[]) =>
      expectSuccess(t, await as(app, owner).post('/user_groups/create', { name, description: 'push test', members })).group_id as number
    const big = await group(`big-${realmId}`, [bob.id, admin.id, owner.id])
    const small = await group(`small-${realmId}`, [bob.id, admin.id])
    const byGroupId = await say(owner, 'groups', `@*big-${realmId}* and @*small-${realmId}*, please look`)
    const personalId = await say(owner, 'groups', `@**${bob.fullName}** and @*small-${realmId}*`)
    // Pushes of different messages may leave in either order.
    const payloads = mine(await flush()).map((p) => p.payload)
    t.equal(payloads.length, 2)
    const byGroup = payloads.find((p) => p.zulip_message_id === byGroupId)
    const personal = payloads.find((p) => p.zulip_message_id === personalId)
    t.match(byGroup, { event: 'message', mentioned_user_group_id: small, mentioned_user_group_name: `small-${realmId}` })
    t.not(small, big)
    t.equal(personal?.mentioned_user_group_id, undefined)
    t.equal(personal?.mentioned_user_group_name, undefined)
  })

  t.test('a subscription the push service reports gone (410) is pruned', async (t) => {
    const { user: bob, browser } = await recipient('Bob Gone')
    peer.failWith(browser.endpoint, 410)
    await dm(owner, bob, 'nobody there')
    await flush()
    t.equal(await services.prisma.webPushSubscription.count({ where: { userId: bob.id } }), 0)
    t.equal(await pending(bob.id), 0)
  })

  t.test('after one of two browsers fails, the retry goes only to that one: no device gets a push twice', async (t) => {
    const { user: bob, browser: first, mine: onFirst } = await recipient('Bob Two Browsers')
    const second = peer.subscribe()
    expectSuccess(t, await as(app, bob).post('/users/me/webpush_subscription', second))
    const onSecond = (pushes: ReceivedPush[]) => pushes.filter((p) => p.endpoint === second.endpoint)
    peer.failWith(second.endpoint, 500)
    await dm(owner, bob, 'to both browsers')
    let failures = 0
    const firstRound = await flush(() => failures++)
    t.equal(failures, 1)
    t.equal(onFirst(firstRound).length, 1, 'the working browser has it')
    t.equal(onSecond(firstRound).length, 0)
    const row = await services.prisma.missedPushNotification.findFirst({ where: { userId: bob.id } })
    t.same(row?.deliveredTo.length, 1, 'the row remembers the browser it reached')
    // The service recovers; the row is due again.
    peer.recover(second.endpoint)
    await services.prisma.$executeRaw`UPDATE missed_push_notification SET due_at = now() - interval '1 minute' WHERE user_id = ${bob.id}`
    await services.prisma.$executeRaw`UPDATE web_push_subscription SET retry_at = now() - interval '1 minute' WHERE user_id = ${bob.id}`
    const retry = await flush()
    t.equal(onSecond(retry).length, 1, 'the failed browser gets it on the retry')
    t.equal(onFirst(retry).length, 0, 'the other browser does not get it again')
    t.equal(await pending(bob.id), 0)
    t.not(first.endpoint, second.endpoint)
  })

  t.test('a failing push service keeps the notification for a retry and counts the failure', async (t) => {
    const { user: bob, browser } = await recipient('Bob Retry')
    peer.failWith(browser.endpoint, 500)
    await dm(owner, bob, 'try again')
    let failures = 0
    await flush(() => failures++)
    t.equal(failures, 1)
    const row = await services.prisma.missedPushNotification.findFirst({ where: { userId: bob.id } })
    t.equal(row?.attempts, 1)
    t.ok(row && row.dueAt.getTime() > Date.now(), 'due again later')
    t.equal(await services.prisma.webPushSubscription.count({ where: { userId: bob.id } }), 1, 'not pruned')
  })

  t.test('a restricted guest is not told the name of a sender it may not access', async (t) => {
    const before = (await services.prisma.realm.findUniqueOrThrow({ where: { id: realmId } })).canAccessAllUsersGroupId
    const members = await services.prisma.userGroup.findFirstOrThrow({ where: { realmId, name: 'role:members' } })
    await services.prisma.realm.update({ where: { id: realmId }, data: { canAccessAllUsersGroupId: members.id } })
    t.teardown(() => services.prisma.realm.update({ where: { id: realmId }, data: { canAccessAllUsersGroupId: before } }))
    const guest = await fx.newUser({ fullName: 'Gail Push Guest', role: 600 })
    const sender = await fx.newUser({ fullName: 'Secret Pusher' })
    await services.prisma.subscription.deleteMany({ where: { userId: { in: [guest.id, sender.id] } } })
    expectSuccess(t, await as(app, owner).post('/users/me/subscriptions', { subscriptions: [{ name: fx.streams.general.name }], principals: [guest.id] }))
    const browser = peer.subscribe()
    expectSuccess(t, await as(app, guest).post('/users/me/webpush_subscription', browser))
    await say(sender, 'hidden pusher', `@**${guest.fullName}** hello`)
    const [push] = (await flush()).filter((p) => p.endpoint === browser.endpoint)
    t.match(push?.payload, { sender_id: sender.id, sender_full_name: 'Unknown user' })
    t.notMatch(JSON.stringify(push?.payload), 'Secret Pusher')
  })
})
