// The outbound policy as a client sees it (docs/outbound-requests.md): Web
// Push endpoints that would reach this machine, the private network or odd
// ports are refused at subscription time (400 naming `endpoint`) and again at
// send time, with real listeners on loopback (IPv4 and IPv6) that must see no
// connection; OUTBOUND_ALLOW lets a configured gateway through; the per-user
// caps on subscriptions and push tokens; a failing endpoint's backoff and
// drop.
import t from 'tap'
import { createServer, type Server } from 'node:net'
import type { AddressInfo } from 'node:net'
import webpush from 'web-push'
import { buildTestApp } from '../support/app.js'
import { as } from '../support/client.js'
import { expectError, expectSuccess } from '../support/expect.js'
import { startWebPushPeer } from '../support/web-push-peer.js'
import { parseAllowEntry } from '../../src/outbound/index.js'
import { MAX_WEB_PUSH_SUBSCRIPTIONS_PER_USER } from '../../src/actions/web-push-subscriptions.js'
import { MAX_PUSH_DEVICES_PER_USER } from '../../src/actions/push-devices.js'
import { deliverPushNotifications, PUSH_MAX_ATTEMPTS, PUSH_TARGET_MAX_FAILURES } from '../../src/notifications/push-delivery.js'
import { pushSendersFor } from '../../src/notifications/push-senders.js'

/** A TCP listener that counts the connections it gets (none may arrive). */
async function listener(host: string): Promise<{ port: number; connections: () => number; close: () => Promise<void> }> {
  let connections = 0
  const server: Server = createServer((socket) => {
    connections++
    socket.destroy()
  })
  await new Promise<void>((resolve) => server.listen(0, host, resolve))
  return { port: (server.address() as AddressInfo).port, connections: () => connections, close: () => new Promise<void>((resolve) => server.close(() => resolve())) }
}

const vapid = webpush.generateVAPIDKeys()
const webPush = { publicKey: vapid.publicKey, privateKey: vapid.privateKey, subject: 'mailto:admin@example.com' }

t.test('outbound requests', async (t) => {
  const v4 = await listener('127.0.0.1')
  const v6 = await listener('::1')
  const peer = await startWebPushPeer()
  t.teardown(async () => {
    await v4.close()
    await v6.close()
    await peer.close()
  })
  // No allow-list: the policy as a deployment without OUTBOUND_ALLOW has it.
  const { app, fx, services, config } = await buildTestApp(t, { config: { webPush, outboundAllow: [] } })
  const owner = await fx.user('owner')
  const browser = peer.subscribe()
  const keys = { p256dh: browser.p256dh, auth: browser.auth }

  t.test('Web Push endpoints that reach loopback, private, link-local or odd ports are refused with 400 naming the endpoint', async (t) => {
    const bob = await fx.newUser({ fullName: 'Bob Forger' })
    const refused = [
      `https://127.0.0.1:${v4.port}/push`,
      `https://[::1]:${v6.port}/push`,
      'https://127.0.0.1/push',
      'https://[::1]/push',
      `https://localhost:${v4.port}/push`,
      'https://localhost/push',
      'https://2130706433/push', // 127.0.0.1 as one number
      'https://169.254.169.254/latest/meta-data/',
      'https://10.0.0.1/push',
      'https://172.16.5.4/push',
      'https://192.168.1.1/push',
      'https://100.64.0.1/push',
      'https://0.0.0.0/push',
      'https://224.0.0.1/push',
      'https://255.255.255.255/push',
      'https://[fc00::1]/push',
      'https://[fd12:3456::1]/push',
      'https://[fe80::1]/push',
      'https://[::]/push',
      'https://[ff02::1]/push',
      'https://[::ffff:127.0.0.1]/push',
      'https://[::ffff:169.254.169.254]/push',
      'https://[::127.0.0.1]/push', // IPv4-compatible
      'https://[64:ff9b::a9fe:a9fe]/push', // NAT64 of 169.254.169.254
      'https://[2002:7f00:1::]/push', // 6to4 of 127.0.0.1
      'https://user:secret@push.example.com/push',
      'https://8.8.8.8:8443/push',
      'https://8.8.8.8:6379/push',
    ]
    for (const endpoint of refused) {
      expectError(t, await as(app, bob).post('/users/me/webpush_subscription', { endpoint, ...keys }), { code: 'BAD_REQUEST', status: 400, msg: /^Invalid endpoint: / })
    }
    t.equal(await services.prisma.webPushSubscription.count({ where: { userId: bob.id } }), 0)
    t.equal(v4.connections(), 0, 'nothing connected to 127.0.0.1')
    t.equal(v6.connections(), 0, 'nothing connected to ::1')
    expectSuccess(t, await as(app, bob).post('/users/me/webpush_subscription', { endpoint: 'https://8.8.8.8/push/abc', ...keys }))
  })

  t.test('at send time a stored endpoint is checked again: refused, it gets no connection and is deleted', async (t) => {
    const bob = await fx.newUser({ fullName: 'Bob Stale' })
    await services.prisma.webPushSubscription.create({ data: { userId: bob.id, endpoint: `https://127.0.0.1:${v4.port}/push`, ...keys } })
    await services.prisma.webPushSubscription.create({ data: { userId: bob.id, endpoint: `https://[::1]:${v6.port}/push`, ...keys } })
    expectSuccess(t, await as(app, owner).post('/messages', { type: 'direct', to: [bob.id], content: 'to nowhere' }))
    await services.prisma.$executeRaw`UPDATE missed_push_notification SET due_at = now() - interval '1 minute' WHERE user_id = ${bob.id}`
    await deliverPushNotifications(services, { log: app.log, realmIds: [fx.realm.id] }, pushSendersFor(config))
    t.equal(v4.connections() + v6.connections(), 0)
    t.equal(await services.prisma.webPushSubscription.count({ where: { userId: bob.id } }), 0, 'pruned')
  })

  t.test(`a user has at most ${MAX_WEB_PUSH_SUBSCRIPTIONS_PER_USER} Web Push subscriptions`, async (t) => {
    const bob = await fx.newUser({ fullName: 'Bob Many Browsers' })
    for (let i = 0; i < MAX_WEB_PUSH_SUBSCRIPTIONS_PER_USER; i++) {
      expectSuccess(t, await as(app, bob).post('/users/me/webpush_subscription', { endpoint: `https://8.8.8.8/push/${i}`, ...keys }))
    }
    expectError(t, await as(app, bob).post('/users/me/webpush_subscription', { endpoint: 'https://8.8.8.8/push/one-more', ...keys }), {
      code: 'BAD_REQUEST',
      status: 400,
      msg: `Invalid endpoint: a user may have at most ${MAX_WEB_PUSH_SUBSCRIPTIONS_PER_USER} Web Push subscriptions`,
    })
    expectSuccess(t, await as(app, bob).post('/users/me/webpush_subscription', { endpoint: 'https://8.8.8.8/push/0', ...keys }))
    t.equal(await services.prisma.webPushSubscription.count({ where: { userId: bob.id } }), MAX_WEB_PUSH_SUBSCRIPTIONS_PER_USER)
  })

  t.test(`a user has at most ${MAX_PUSH_DEVICES_PER_USER} push tokens, APNs and FCM together`, async (t) => {
    const bob = await fx.newUser({ fullName: 'Bob Many Phones' })
    for (let i = 0; i < MAX_PUSH_DEVICES_PER_USER / 2; i++) {
      expectSuccess(t, await as(app, bob).post('/users/me/android_gcm_reg_id', { token: `fcm-${i}` }))
      expectSuccess(t, await as(app, bob).post('/users/me/apns_device_token', { token: `${i}`.padStart(2, '0').repeat(16), appid: 'org.zulip.Zulip' }))
    }
    const tooMany = { code: 'BAD_REQUEST', status: 400, msg: `Invalid token: a user may have at most ${MAX_PUSH_DEVICES_PER_USER} push notification tokens` }
    expectError(t, await as(app, bob).post('/users/me/android_gcm_reg_id', { token: 'fcm-one-more' }), tooMany)
    expectError(t, await as(app, bob).post('/users/me/apns_device_token', { token: 'ff'.repeat(32), appid: 'org.zulip.Zulip' }), tooMany)
    expectSuccess(t, await as(app, bob).post('/users/me/android_gcm_reg_id', { token: 'fcm-0' }))
    t.equal(await services.prisma.pushDevice.count({ where: { userId: bob.id } }), MAX_PUSH_DEVICES_PER_USER)
    expectSuccess(t, await as(app, bob).delete('/users/me/android_gcm_reg_id', { token: 'fcm-0' }))
    expectSuccess(t, await as(app, bob).post('/users/me/android_gcm_reg_id', { token: 'fcm-one-more' }))
  })
})

t.test('OUTBOUND_ALLOW lets a configured gateway through, and nothing else', async (t) => {
  const peer = await startWebPushPeer()
  const other = await listener('127.0.0.1')
  t.teardown(async () => {
    await peer.close()
    await other.close()
  })
  const gateway = peer.subscribe()
  const port = Number(new URL(gateway.endpoint).port)
  const { app, fx, services, config } = await buildTestApp(t, { config: { webPush, outboundAllow: [parseAllowEntry(`127.0.0.1:${port}`)] } })
  const owner = await fx.user('owner')
  const bob = await fx.newUser({ fullName: 'Bob Gateway' })
  expectSuccess(t, await as(app, bob).post('/users/me/webpush_subscription', gateway))
  expectError(t, await as(app, bob).post('/users/me/webpush_subscription', { ...gateway, endpoint: `https://127.0.0.1:${other.port}/push` }), { code: 'BAD_REQUEST', status: 400, msg: /^Invalid endpoint: / })
  const senders = pushSendersFor(config, { ca: [peer.ca] })
  const deliver = () => deliverPushNotifications(services, { log: app.log, realmIds: [fx.realm.id], retryBaseMs: 60_000 }, senders)
  const flush = async () => {
    await services.prisma.$executeRaw`UPDATE missed_push_notification SET due_at = now() - interval '1 minute' WHERE user_id = ${bob.id}`
    await services.prisma.$executeRaw`UPDATE web_push_subscription SET retry_at = now() - interval '1 minute' WHERE user_id = ${bob.id}`
    await deliver()
  }
  const id = expectSuccess(t, await as(app, owner).post('/messages', { type: 'direct', to: [bob.id], content: 'through the gateway' })).id
  await flush()
  t.match(peer.received.map((p) => p.payload), [{ zulip_message_id: id, content: 'through the gateway' }])
  t.equal(other.connections(), 0)

  t.test('a failing endpoint backs off, then is dropped after a bounded number of failures', async (t) => {
    peer.failWith(gateway.endpoint, 500)
    expectSuccess(t, await as(app, owner).post('/messages', { type: 'direct', to: [bob.id], content: 'failing' }))
    await flush()
    const before = peer.requests()
    const sub = await services.prisma.webPushSubscription.findFirst({ where: { userId: bob.id } })
    t.equal(sub?.failures, 1)
    t.ok(sub?.retryAt && sub.retryAt.getTime() > Date.now(), 'backing off')
    // While it backs off, more messages open no connection to it.
    for (let i = 0; i < 3; i++) expectSuccess(t, await as(app, owner).post('/messages', { type: 'direct', to: [bob.id], content: `while backing off ${i}` }))
    await services.prisma.$executeRaw`UPDATE missed_push_notification SET due_at = now() - interval '1 minute' WHERE user_id = ${bob.id}`
    await deliver()
    t.equal(peer.requests(), before, 'no request during the backoff')
    for (let failures = 2; failures <= PUSH_TARGET_MAX_FAILURES; failures++) await flush()
    t.equal(await services.prisma.webPushSubscription.count({ where: { userId: bob.id } }), 0, `deleted after ${PUSH_TARGET_MAX_FAILURES} failures`)
    t.equal(peer.requests() - before, PUSH_TARGET_MAX_FAILURES - 1, 'one request per backoff period')
  })

  /** A new user with one browser that the push service answers `status`, sent one direct message. */
  const failingBrowser = async (name: string, status: number) => {
    const user = await fx.newUser({ fullName: name })
    const browser = peer.subscribe()
    expectSuccess(t, await as(app, user).post('/users/me/webpush_subscription', browser))
    peer.failWith(browser.endpoint, status)
    expectSuccess(t, await as(app, owner).post('/messages', { type: 'direct', to: [user.id], content: `to ${name}` }))
    return user
  }
  t.test('a pending notification is dropped after its last attempt', async (t) => {
    const carol = await failingBrowser('Carol Failing', 503)
    await services.prisma.$executeRaw`UPDATE missed_push_notification SET attempts = ${PUSH_MAX_ATTEMPTS - 1}, due_at = now() - interval '1 minute' WHERE user_id = ${carol.id}`
    await deliver()
    t.equal(await services.prisma.missedPushNotification.count({ where: { userId: carol.id } }), 0)
  })

  t.test('an endpoint the push service answers 404 is deleted at once', async (t) => {
    const dave = await failingBrowser('Dave Gone', 404)
    await services.prisma.$executeRaw`UPDATE missed_push_notification SET due_at = now() - interval '1 minute' WHERE user_id = ${dave.id}`
    await deliver()
    t.equal(await services.prisma.webPushSubscription.count({ where: { userId: dave.id } }), 0)
    t.equal(await services.prisma.missedPushNotification.count({ where: { userId: dave.id } }), 0)
  })
})
