// Three nodes on one database and one Redis, each running its push loop
// against one Web Push service on loopback: every user's notification is
// pushed exactly once, whichever node claims it.
import { randomUUID } from 'node:crypto'
import t from 'tap'
import webpush from 'web-push'
import { buildTestApp, type Tap } from '../support/app.js'
import { as } from '../support/client.js'
import { expectSuccess } from '../support/expect.js'
import { startWebPushPeer } from '../support/web-push-peer.js'
import { startPushNotifications } from '../../src/notifications/push-delivery.js'
import { pushSendersFor, type PushOutcome, type PushSender } from '../../src/notifications/push-senders.js'

const USERS = 30
const settle = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** A Web Push service on loopback and `count` nodes on one database and one Redis prefix, all with the same VAPID keys. */
async function pushCluster(t: Tap, count: number) {
  const peer = await startWebPushPeer()
  t.teardown(() => peer.close())
  const keys = webpush.generateVAPIDKeys()
  const config = { webPush: { publicKey: keys.publicKey, privateKey: keys.privateKey, subject: 'mailto:admin@example.com' } }
  const redisPrefix = `test:${randomUUID()}`
  const first = await buildTestApp(t, { bus: 'redis', redisPrefix, config })
  const nodes = [first]
  for (let i = 1; i < count; i++) nodes.push(await buildTestApp(t, { bus: 'redis', redisPrefix, config, fixture: first.fx }))
  return { peer, nodes }
}

t.test('each push notification is sent once across three nodes', async (t) => {
  const { peer, nodes } = await pushCluster(t, 3)
  const a = nodes[0]!
  const owner = await a.fx.user('owner')
  const endpoints: string[] = []
  for (let i = 0; i < USERS; i++) {
    const user = await a.fx.newUser({ fullName: `Away Phone ${i}` })
    const browser = peer.subscribe()
    endpoints.push(browser.endpoint)
    expectSuccess(t, await as(nodes[i % 3]!.app, user).post('/users/me/webpush_subscription', browser))
    expectSuccess(t, await as(nodes[(i + 1) % 3]!.app, owner).post('/messages', { type: 'direct', to: [user.id], content: `ping ${i}` }))
  }
  const senders = pushSendersFor(a.config, { ca: [peer.ca] })
  const loops = nodes.map((node) => startPushNotifications(node.services, { log: node.app.log, realmIds: [a.fx.realm.id], senders, tickMs: 50 })!)
  t.teardown(() => Promise.all(loops.map((l) => l.stop())))
  await peer.waitFor(USERS, 30_000)
  await settle(1000) // a duplicate would arrive meanwhile
  await Promise.all(loops.map((l) => l.stop()))
  t.equal(peer.received.length, USERS, 'one push per user')
  t.same(new Set(peer.received.map((p) => p.endpoint)), new Set(endpoints), 'every user got theirs')
  t.equal(await a.services.prisma.missedPushNotification.count({ where: { realmId: a.fx.realm.id } }), 0)
})

t.test('a node stopped mid-send: its lease expires and another node pushes the notification once', async (t) => {
  const { peer, nodes } = await pushCluster(t, 2)
  const [a, b] = [nodes[0]!, nodes[1]!]
  const owner = await a.fx.user('owner')
  const bob = await a.fx.newUser({ fullName: 'Bob Stranded Push' })
  const browser = peer.subscribe()
  expectSuccess(t, await as(a.app, bob).post('/users/me/webpush_subscription', browser))
  expectSuccess(t, await as(a.app, owner).post('/messages', { type: 'direct', to: [bob.id], content: 'stranded' }))

  // Node A claims the row, then hangs in the middle of sending it (a process that stopped).
  let sendStarted!: () => void
  const started = new Promise<void>((resolve) => (sendStarted = resolve))
  let killSend!: (error: Error) => void
  const hanging: PushSender = {
    kind: 'webpush',
    send: () =>
      new Promise<PushOutcome>((_, reject) => {
        killSend = reject
        sendStarted()
      }),
  }
  const leaseMs = 1000
  const stuck = startPushNotifications(a.services, { log: a.app.log, realmIds: [a.fx.realm.id], senders: new Map([['webpush', hanging]]), tickMs: 50, leaseMs })!
  await started
  const senders = pushSendersFor(a.config, { ca: [peer.ca] })
  const rescuer = startPushNotifications(b.services, { log: b.app.log, realmIds: [a.fx.realm.id], senders, tickMs: 50, leaseMs })!
  t.teardown(() => rescuer.stop())
  await peer.waitFor(1, 15_000)
  // The stopped node comes back and its send fails: the row is no longer its own, nothing is retried or resent.
  killSend(new Error('connection reset'))
  await stuck.stop()
  await settle(500)
  await rescuer.stop()
  t.equal(peer.received.length, 1, 'pushed once')
  t.equal(peer.received[0]?.endpoint, browser.endpoint)
  t.equal(await a.services.prisma.missedPushNotification.count({ where: { realmId: a.fx.realm.id } }), 0)
})
