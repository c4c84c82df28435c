// Web Push in Chromium against a Roost node with a VAPID key: the app
// registers its service worker (/sw.js) and subscribes with the key from
// /server_settings. Chromium's own push service is on the Internet and
// headless Chromium refuses to subscribe to it here ("Registration failed -
// permission denied", whatever the notification permission): the first
// subtest shows the app reporting that failure.
// The others stand a Web Push service on loopback (test/support/web-push-peer.ts,
// which checks VAPID and decrypts as a browser would) in for it: the page's
// PushManager hands out the peer's subscription, the app gives it to the
// server, the server's push reaches the peer, and the decrypted payload is
// delivered to the service worker through the DevTools protocol
// (ServiceWorker.deliverPushMessage), which shows the notification; a click
// (the notificationclick event, dispatched in the worker: headless Chromium
// shows no notification to click) opens the conversation in the app.
import t from 'tap'
import { mkdirSync } from 'node:fs'
import path from 'node:path'
import webpush from 'web-push'
import type { Page } from 'playwright-core'
import { buildTestApp } from '../support/app.js'
import { as } from '../support/client.js'
import { expectSuccess } from '../support/expect.js'
import { eventually } from '../support/eventually.js'
import { ROOT } from '../support/root.js'
import { startWebPushPeer, type PeerSubscription } from '../support/web-push-peer.js'
import { deliverPushNotifications } from '../../src/notifications/push-delivery.js'
import { pushSendersFor } from '../../src/notifications/push-senders.js'
import { freePort, givePassword, launchBrowser, openApp } from './browser.js'

t.test('Web Push in the browser', async (t) => {
  const peer = await startWebPushPeer()
  t.teardown(() => peer.close())
  const vapid = webpush.generateVAPIDKeys()
  const port = await freePort()
  const { app, fx, services, config } = await buildTestApp(t, { config: { externalUrl: `http://localhost:${port}`, webPush: { publicKey: vapid.publicKey, privateKey: vapid.privateKey, subject: 'mailto:admin@example.com' } } })
  await app.listen({ port, host: '127.0.0.1' })
  const origin = `http://${fx.host}:${port}`
  const member = await fx.user('member')
  const other = await fx.user('otherMember')
  const password = await givePassword(services, member)
  const senders = pushSendersFor(config, { ca: [peer.ca] })
  const browser = await launchBrowser(t)
  const shots = path.join(ROOT, 'dist/screenshots')
  mkdirSync(shots, { recursive: true })
  const rows = () => services.prisma.webPushSubscription.findMany({ where: { userId: member.id } })
  /** Runs push delivery now (the server's loop waits), returning what the peer received meanwhile. */
  const deliver = async () => {
    const before = peer.received.length
    await services.prisma.$executeRaw`UPDATE missed_push_notification SET due_at = now() - interval '1 minute' WHERE realm_id = ${fx.realm.id}`
    while ((await deliverPushNotifications(services, { log: app.log, realmIds: [fx.realm.id], retryBaseMs: 60_000 }, senders)) > 0) {
      // until nothing is due
    }
    return peer.received.slice(before)
  }
  const workerScript = (page: Page) => page.evaluate(async () => (await navigator.serviceWorker.getRegistration('/'))?.active?.scriptURL ?? null)
  const togglePush = async (page: Page, on: boolean) => {
    await page.getByRole('button', { name: 'Settings' }).click()
    const box = page.getByRole('dialog', { name: 'Settings' }).getByLabel('Push notifications in this browser, also while Roost is closed')
    // A click rather than check(): the app sets the box from the outcome, and a
    // subscription that fails at once leaves it unchecked (which check() reports
    // as an error); the callers assert the outcome.
    if ((await box.isChecked()) !== on) await box.click()
  }
  const pushStatus = (page: Page) => page.locator('.push-status')

  t.test("without Chromium's push service the worker registers and the app says the subscription failed", async (t) => {
    const { context, page, errors } = await openApp(t, browser, origin, member, password)
    await context.grantPermissions(['notifications'], { origin })
    await togglePush(page, true)
    await pushStatus(page).filter({ hasText: 'could not be turned on' }).waitFor({ timeout: 60_000 })
    t.comment(`the app says: ${await pushStatus(page).textContent()}`)
    t.equal(await workerScript(page), `${origin}/sw.js`, 'the service worker is active for the whole app')
    t.same(await rows(), [], 'nothing given to the server')
    t.notOk(await page.getByLabel('Push notifications in this browser, also while Roost is closed').isChecked())
    t.same(errors, [])
  })

  t.test('subscribed through a push service on loopback: the push is shown and its click opens the conversation', async (t) => {
    const { context, page, errors } = await openApp(t, browser, origin, member, password)
    await context.grantPermissions(['notifications'], { origin })
    const subscription: PeerSubscription = peer.subscribe()
    // The page's PushManager hands out the loopback peer's subscription and records the key it was asked to use.
    await context.addInitScript((sub: PeerSubscription) => {
      let current: object | null = null
      const made = () => ({
        endpoint: sub.endpoint,
        toJSON: () => ({ endpoint: sub.endpoint, keys: { p256dh: sub.p256dh, auth: sub.auth } }),
        unsubscribe: async () => {
          current = null
          ;(window as unknown as { __unsubscribed: boolean }).__unsubscribed = true
          return true
        },
      })
      PushManager.prototype.subscribe = async function (options?: PushSubscriptionOptionsInit) {
        const key = new Uint8Array(options?.applicationServerKey as ArrayBuffer)
        ;(window as unknown as { __serverKey: string }).__serverKey = btoa(String.fromCharCode(...key)).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '')
        current = made()
        return current as PushSubscription
      }
      PushManager.prototype.getSubscription = async () => current as PushSubscription | null
    }, subscription)
    await page.reload()
    await page.waitForSelector('nav#nav')
    await togglePush(page, true)
    await pushStatus(page).filter({ hasText: 'This browser receives push notifications.' }).waitFor({ timeout: 30_000 })
    t.equal(await page.evaluate(() => (window as unknown as { __serverKey: string }).__serverKey), vapid.publicKey, "subscribed with the server's VAPID public key")
    t.match(await rows(), [{ endpoint: subscription.endpoint, p256dh: subscription.p256dh, auth: subscription.auth }], 'the subscription is on the server')
    await page.screenshot({ path: path.join(shots, 'settings-push.png') })
    await page.getByRole('dialog', { name: 'Settings' }).getByRole('button', { name: 'Close' }).click()

    // The member is away from the conversation; another user writes.
    await page.goto(`${origin}/#starred`)
    const id = expectSuccess(t, await as(app, other).post('/messages', { type: 'direct', to: JSON.stringify([member.id]), content: 'are you there?' })).id as number
    const [push] = await deliver()
    t.match(push, { endpoint: subscription.endpoint, payload: { event: 'message', zulip_message_id: id, sender_full_name: other.fullName, recipient_type: 'private', content: 'are you there?' } }, 'encrypted, signed and decrypted by the push service')

    const cdp = await context.newCDPSession(page)
    const registrationId = new Promise<string>((resolve) =>
      cdp.on('ServiceWorker.workerRegistrationUpdated', ({ registrations }) => {
        const found = registrations.find((r) => r.scopeURL === `${origin}/` && !r.isDeleted)
        if (found) resolve(found.registrationId)
      }),
    )
    await cdp.send('ServiceWorker.enable')
    const deliverToWorker = async (payload: unknown) => cdp.send('ServiceWorker.deliverPushMessage', { origin, registrationId: await registrationId, data: JSON.stringify(payload) })
    const shown = () =>
      page.evaluate(async () => (await (await navigator.serviceWorker.ready).getNotifications()).map((n) => ({ title: n.title, body: n.body, tag: n.tag, data: n.data as unknown })))
    await deliverToWorker(push!.payload)
    await eventually('the notification shown', async () => (await shown()).length === 1, { timeoutMs: 30_000, intervalMs: 100 })
    t.same(await shown(), [{ title: other.fullName, body: 'are you there?', tag: `roost-${id}`, data: { messageId: id, hash: `#dm/${other.id}` } }], 'the notification')

    const [worker] = context.serviceWorkers()
    t.ok(worker, 'the worker runs')
    await worker!.evaluate(async () => {
      const scope = self as unknown as { registration: ServiceWorkerRegistration; dispatchEvent(e: Event): boolean }
      const [notification] = await scope.registration.getNotifications()
      const Click = (self as unknown as { NotificationEvent: new (type: string, init: { notification: Notification }) => Event }).NotificationEvent
      scope.dispatchEvent(new Click('notificationclick', { notification: notification! }))
    })
    await page.waitForURL(`${origin}/#dm/${other.id}`, { timeout: 10_000 })
    await page.locator('.message .content', { hasText: 'are you there?' }).waitFor({ timeout: 10_000 })
    t.pass('the click opened the conversation')
    t.same(await shown(), [], 'and closed the notification')

    // Shown again, then read elsewhere: the removal notice closes it.
    await deliverToWorker(push!.payload)
    await eventually('the notification shown', async () => (await shown()).length === 1, { timeoutMs: 30_000, intervalMs: 100 })
    expectSuccess(t, await as(app, member).post('/messages/flags', { messages: JSON.stringify([id]), op: 'add', flag: 'read' }))
    const removal = (await deliver()).find((p) => p.payload.event === 'remove')
    t.match(removal, { payload: { event: 'remove', zulip_message_ids: String(id) } })
    await deliverToWorker(removal!.payload)
    await eventually('the notification closed', async () => (await shown()).length === 0, { timeoutMs: 30_000, intervalMs: 100 })
    t.pass('the removal notice closed it')

    await togglePush(page, false)
    await pushStatus(page).filter({ hasText: 'Push notifications are off in this browser.' }).waitFor({ timeout: 10_000 })
    t.same(await rows(), [], 'turning it off deletes the subscription on the server')
    t.equal(await page.evaluate(() => (window as unknown as { __unsubscribed?: boolean }).__unsubscribed), true, 'and unsubscribes the browser')
    t.same(errors, [])
  })
})
