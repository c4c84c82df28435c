// Mobile push through upstream's push bouncer, against a local bouncer
// (test/support/bouncer-peer.ts) that checks the server's Basic credentials
// and the request formats and answers as upstream's bouncer does: device
// registration and removal, push/notify with upstream's APNs and FCM payloads,
// removal notices, tokens the bouncer no longer has, failures retried; and
// the startup checks of PUSH_BOUNCER_*.
import t from 'tap'
import { buildTestApp } from '../support/app.js'
import { as } from '../support/client.js'
import { expectError, expectSuccess } from '../support/expect.js'
import { startBouncerPeer, type BouncerNotification } from '../support/bouncer-peer.js'
import { loadConfig } from '../../src/config.js'
import { deliverPushNotifications } from '../../src/notifications/push-delivery.js'
import { pushSendersFor } from '../../src/notifications/push-senders.js'
import { realmUuid, userUuid } from '../../src/notifications/push-bouncer.js'
import type { User } from '../../src/db/index.js'

const ORG_ID = '6cde5f7a-1f7e-4978-9716-49f69ebfc9fe'
const KEY = 'k'.repeat(64)

t.test('PUSH_BOUNCER_* are checked at startup', async (t) => {
  t.same(loadConfig({ PUSH_BOUNCER_URL: 'https://push.example.com/', PUSH_BOUNCER_ORG_ID: ORG_ID, PUSH_BOUNCER_ORG_KEY: KEY }).pushBouncer, { url: 'https://push.example.com', orgId: ORG_ID, orgKey: KEY })
  t.equal(loadConfig({}).pushBouncer, undefined)
  t.throws(() => loadConfig({ PUSH_BOUNCER_URL: 'ftp://x', PUSH_BOUNCER_ORG_ID: ORG_ID, PUSH_BOUNCER_ORG_KEY: KEY }), { name: 'ConfigError', message: /^PUSH_BOUNCER_URL must use one of/ })
  t.throws(() => loadConfig({ PUSH_BOUNCER_ORG_ID: ORG_ID, PUSH_BOUNCER_ORG_KEY: KEY }), { message: /^PUSH_BOUNCER_URL must be set/ })
  t.throws(() => loadConfig({ PUSH_BOUNCER_URL: 'https://x', PUSH_BOUNCER_ORG_KEY: KEY }), { message: /^PUSH_BOUNCER_ORG_ID must be/ })
  t.throws(() => loadConfig({ PUSH_BOUNCER_URL: 'https://x', PUSH_BOUNCER_ORG_ID: 'not-a-uuid', PUSH_BOUNCER_ORG_KEY: KEY }), { message: /^PUSH_BOUNCER_ORG_ID must be .*not-a-uuid/ })
  t.throws(() => loadConfig({ PUSH_BOUNCER_URL: 'https://x', PUSH_BOUNCER_ORG_ID: ORG_ID }), { message: /^PUSH_BOUNCER_ORG_KEY must be/ })
  t.throws(() => loadConfig({ PUSH_BOUNCER_URL: 'https://x', PUSH_BOUNCER_ORG_ID: ORG_ID, PUSH_BOUNCER_ORG_KEY: 'short' }), { message: /^PUSH_BOUNCER_ORG_KEY must be/ })
})

t.test('push notifications through the bouncer', async (t) => {
  const peer = await startBouncerPeer()
  t.teardown(() => peer.close())
  const pushBouncer = { url: peer.url, orgId: peer.orgId, orgKey: peer.orgKey }
  const { app, fx, services, config } = await buildTestApp(t, { config: { pushBouncer } })
  const realmId = fx.realm.id
  const owner = await fx.user('owner')
  const senders = pushSendersFor(config)
  t.same([...senders.keys()], ['bouncer'])

  const flush = async (onFailure?: () => void): Promise<BouncerNotification[]> => {
    const before = peer.notifications.length
    await services.prisma.$executeRaw`UPDATE missed_push_notification SET due_at = now() - interval '1 minute' WHERE realm_id = ${realmId} AND attempts = 0`
    while ((await deliverPushNotifications(services, { log: app.log, realmIds: [realmId], retryBaseMs: 60_000, ...(onFailure ? { onFailure } : {}) }, senders)) > 0) {
      // until nothing is due
    }
    return peer.notifications.slice(before)
  }
  const dm = async (from: User, to: User, content: string): Promise<number> =>
    expectSuccess(t, await as(app, from).post('/messages', { type: 'direct', to: [to.id], content })).id as number
  let n = 0
  /** A user with an Android and an iPhone, both registered. */
  const phones = async (name: string) => {
    const user = await fx.newUser({ fullName: name })
    n++
    const android = `fcm-${realmId}-${n}`
    const apple = `abcdef${String(realmId).padStart(4, '0')}${String(n).padStart(4, '0')}`
    expectSuccess(t, await as(app, user).post('/users/me/android_gcm_reg_id', { token: android }))
    expectSuccess(t, await as(app, user).post('/users/me/apns_device_token', { token: apple, appid: 'org.zulip.Zulip' }))
    const mine = (ns: BouncerNotification[]) => ns.filter((x) => x.user_id === user.id)
    return { user, android, apple, mine }
  }

  t.test('/server_settings reports push as enabled', async (t) => {
    t.equal(expectSuccess(t, await app.inject({ method: 'GET', url: '/api/v1/server_settings', headers: { host: fx.host } })).push_notifications_enabled, true)
  })

  t.test('adding and removing device tokens registers them with the bouncer', async (t) => {
    const { user, android, apple } = await phones('Bob Registers')
    const uuid = userUuid(pushBouncer, user.id)
    t.match(peer.registrations.filter((r) => r.userUuid === uuid), [
      { token: android, kind: 2, userId: String(user.id), realmUuid: realmUuid(pushBouncer, realmId), iosAppId: undefined },
      { token: apple, kind: 1, iosAppId: 'org.zulip.Zulip' },
    ])
    t.not(userUuid(pushBouncer, user.id), userUuid(pushBouncer, owner.id))
    expectSuccess(t, await as(app, user).delete('/users/me/android_gcm_reg_id', { token: android }))
    t.same(peer.registrations.filter((r) => r.userUuid === uuid).map((r) => r.token), [apple])
    expectError(t, await as(app, user).delete('/users/me/android_gcm_reg_id', { token: android }), { code: 'BAD_REQUEST', status: 400, msg: 'Token does not exist' })
  })

  t.test('a direct message is one push/notify with upstream’s FCM and APNs payloads for all the user’s devices', async (t) => {
    const { user, android, apple, mine } = await phones('Bob Phones')
    const id = await dm(owner, user, 'hello phones')
    const sent = mine(await flush())
    t.equal(sent.length, 1)
    t.match(sent[0], {
      user_uuid: userUuid(pushBouncer, user.id),
      realm_uuid: realmUuid(pushBouncer, realmId),
      android_devices: [android],
      apple_devices: [apple],
      delivered: { android: [android], apple: [apple] },
      gcm_options: { priority: 'high' },
      gcm_payload: { event: 'message', zulip_message_id: id, user_id: user.id, realm_id: realmId, sender_email: owner.email, recipient_type: 'private', content: 'hello phones' },
      apns_payload: { alert: { title: owner.fullName, body: 'hello phones' }, sound: 'default', custom: { zulip: { event: 'message', message_ids: [id], zulip_message_id: id } } },
    })
    t.equal(await services.prisma.missedPushNotification.count({ where: { userId: user.id } }), 0)

    expectSuccess(t, await as(app, user).post('/messages/flags', { messages: [id], op: 'add', flag: 'read' }))
    const [removal, ...more] = mine(await flush())
    t.equal(more.length, 0)
    t.match(removal, { gcm_options: { priority: 'normal' }, gcm_payload: { event: 'remove', zulip_message_ids: String(id) }, apns_payload: { custom: { zulip: { event: 'remove', zulip_message_ids: String(id) } } } })
  })

  t.test('tokens the bouncer no longer has are deleted, as its answer asks', async (t) => {
    const { user, android, apple, mine } = await phones('Bob Forgotten')
    peer.registrations = peer.registrations.filter((r) => r.token !== android)
    await dm(owner, user, 'still there?')
    t.equal(mine(await flush()).length, 1)
    t.same((await services.prisma.pushDevice.findMany({ where: { userId: user.id } })).map((d) => d.token), [apple])
  })

  t.test('a failing bouncer keeps the notification for a retry and counts the failure', async (t) => {
    const { user } = await phones('Bob Bouncer Down')
    peer.failWith = 503
    t.teardown(() => (peer.failWith = undefined))
    await dm(owner, user, 'later')
    let failures = 0
    await flush(() => failures++)
    t.equal(failures, 1)
    const row = await services.prisma.missedPushNotification.findFirst({ where: { userId: user.id } })
    t.equal(row?.attempts, 1)
    t.match(row?.lastError, /Received 503 from the push notification bouncer/)
    t.ok(row && row.dueAt.getTime() > Date.now(), 'due again later')
    t.equal(await services.prisma.pushDevice.count({ where: { userId: user.id } }), 2, 'not pruned')
  })

  t.test('wrong credentials: registration answers 502 and notifications are retried', async (t) => {
    const wrong = { ...pushBouncer, orgKey: 'x'.repeat(64) }
    const other = await buildTestApp(t, { config: { pushBouncer: wrong } })
    const user = await other.fx.newUser({ fullName: 'Bob Wrong Key' })
    const before = peer.authFailures
    expectError(t, await as(other.app, user).post('/users/me/android_gcm_reg_id', { token: 'fcm-wrong-key' }), { code: 'BAD_REQUEST', status: 502, msg: /auth failure/ })
    t.equal(peer.authFailures, before + 1)
    t.equal(await other.services.prisma.pushDevice.count({ where: { userId: user.id } }), 1, 'the local token stays; the app registers again')
    const sent = await dm(await other.fx.user('owner'), user, 'wrong key')
    await other.services.prisma.$executeRaw`UPDATE missed_push_notification SET due_at = now() - interval '1 minute' WHERE user_id = ${user.id}`
    await deliverPushNotifications(other.services, { log: other.app.log, realmIds: [other.fx.realm.id] }, pushSendersFor(other.config))
    const row = await other.services.prisma.missedPushNotification.findFirst({ where: { userId: user.id, messageId: sent } })
    t.equal(row?.attempts, 1)
    t.match(row?.lastError, /auth failure/)
  })
})
