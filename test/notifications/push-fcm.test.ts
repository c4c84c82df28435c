// The FCM HTTP v1 sender against a local stand-in for Google's token endpoint
// and FCM (test/support/fcm-peer.ts checks the JWT-bearer grant and the
// messages:send format): upstream's payload as string data, the access token
// reused, UNREGISTERED tokens pruned, failures retried; and the startup
// checks of FCM_SERVICE_ACCOUNT_FILE.
import t from 'tap'
import { generateKeyPairSync } from 'node:crypto'
import { jwtVerify } from 'jose'
import { writeFileSync, mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { buildTestApp } from '../support/app.js'
import { as } from '../support/client.js'
import { expectSuccess } from '../support/expect.js'
import { startFcmPeer, type FcmMessage } from '../support/fcm-peer.js'
import { ConfigError, loadConfig } from '../../src/config.js'
import { deliverPushNotifications } from '../../src/notifications/push-delivery.js'
import { pushSendersFor } from '../../src/notifications/push-senders.js'
import type { User } from '../../src/db/index.js'

t.test('FCM_SERVICE_ACCOUNT_FILE is checked at startup', async (t) => {
  const dir = mkdtempSync(path.join(tmpdir(), 'roost-fcm-config-'))
  t.throws(() => loadConfig({ FCM_SERVICE_ACCOUNT_FILE: path.join(dir, 'missing.json') }), { name: 'ConfigError', message: /^FCM_SERVICE_ACCOUNT_FILE: cannot read/ })
  writeFileSync(path.join(dir, 'no-key.json'), JSON.stringify({ project_id: 'p', client_email: 'a@b' }))
  t.throws(() => loadConfig({ FCM_SERVICE_ACCOUNT_FILE: path.join(dir, 'no-key.json') }), { message: /^FCM_SERVICE_ACCOUNT_FILE: .* lacks the service account's private_key/ })
  writeFileSync(path.join(dir, 'bad-key.json'), JSON.stringify({ project_id: 'p', client_email: 'a@b', private_key: 'not a key' }))
  t.throws(() => loadConfig({ FCM_SERVICE_ACCOUNT_FILE: path.join(dir, 'bad-key.json') }), { message: /^FCM_SERVICE_ACCOUNT_FILE: the private_key .* is not a valid PEM key/ })
  t.throws(() => loadConfig({ FCM_ENDPOINT: 'https://x' }), ConfigError)
})

t.test('FCM push notifications', async (t) => {
  const peer = await startFcmPeer()
  t.teardown(() => peer.close())
  const fcm = loadConfig({ FCM_SERVICE_ACCOUNT_FILE: peer.serviceAccountFile, FCM_ENDPOINT: peer.origin }).fcm
  const { app, fx, services, config } = await buildTestApp(t, { config: { fcm } })
  const realmId = fx.realm.id
  const owner = await fx.user('owner')
  const senders = pushSendersFor(config, { ca: [peer.ca] })

  const flush = async (): Promise<FcmMessage[]> => {
    const before = peer.received.length
    await services.prisma.$executeRaw`UPDATE missed_push_notification SET due_at = now() - interval '1 minute' WHERE realm_id = ${realmId} AND attempts = 0`
    while ((await deliverPushNotifications(services, { log: app.log, realmIds: [realmId], retryBaseMs: 60_000 }, senders)) > 0) {
      // until nothing is due
    }
    return peer.received.slice(before)
  }
  const dm = async (from: User, to: User, content: string): Promise<number> =>
    expectSuccess(t, await as(app, from).post('/messages', { type: 'direct', to: [to.id], content })).id as number
  const phone = async (name: string, token: string) => {
    const user = await fx.newUser({ fullName: name })
    expectSuccess(t, await as(app, user).post('/users/me/android_gcm_reg_id', { token }))
    return user
  }

  t.test('a direct message reaches the FCM token with upstream’s payload as string data', async (t) => {
    const token = `phone-${fx.realm.id}-a`
    const bob = await phone('Bob Android', token)
    const id = await dm(owner, bob, 'hello phone')
    const mine = (await flush()).filter((m) => m.token === token)
    t.equal(mine.length, 1)
    t.match(mine[0], {
      token,
      android: { priority: 'high' },
      data: { event: 'message', zulip_message_id: String(id), user_id: String(bob.id), realm_id: String(realmId), sender_email: owner.email, sender_full_name: owner.fullName, recipient_type: 'private', content: 'hello phone', server: String },
    })
    await dm(owner, bob, 'second')
    await flush()
    t.equal(peer.tokensIssued, 1, 'the access token is reused')
  })

  t.test('the JWT-bearer assertion is an RS256 JWT that verifies (jose) against the service account key', async (t) => {
    t.equal(peer.assertions.length, 1)
    const { payload, protectedHeader } = await jwtVerify(peer.assertions[0]!, peer.publicKey, { algorithms: ['RS256'] })
    t.same(protectedHeader, { alg: 'RS256', typ: 'JWT' })
    t.same(Object.keys(payload).sort(), ['aud', 'exp', 'iat', 'iss', 'scope'])
    t.match(payload, { iss: /^roost@roost-test-.*\.iam\.gserviceaccount\.com$/, aud: `${peer.origin}/token`, scope: 'https://www.googleapis.com/auth/firebase.messaging' })
    t.equal((payload.exp as number) - (payload.iat as number), 3600, 'valid for one hour')
    const other = generateKeyPairSync('rsa', { modulusLength: 2048 })
    await t.rejects(jwtVerify(peer.assertions[0]!, other.publicKey, { algorithms: ['RS256'] }), 'another key does not verify it')
  })

  t.test('an UNREGISTERED token is pruned', async (t) => {
    const bob = await phone('Bob Gone Phone', `gone-${fx.realm.id}`)
    await dm(owner, bob, 'anyone?')
    await flush()
    t.equal(await services.prisma.pushDevice.count({ where: { userId: bob.id } }), 0)
    t.equal(await services.prisma.missedPushNotification.count({ where: { userId: bob.id } }), 0)
  })

  t.test('an FCM failure keeps the notification for a retry', async (t) => {
    const bob = await phone('Bob Failing Phone', `fail-${fx.realm.id}`)
    await dm(owner, bob, 'later')
    await flush()
    const row = await services.prisma.missedPushNotification.findFirst({ where: { userId: bob.id } })
    t.equal(row?.attempts, 1)
    t.match(row?.lastError, /FCM answered HTTP 500/)
    t.equal(await services.prisma.pushDevice.count({ where: { userId: bob.id } }), 1)
  })
})
