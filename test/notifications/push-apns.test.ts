// The APNs sender (token auth over HTTP/2) against a local APNs stand-in
// (test/support/apns-peer.ts checks the ES256 provider token, the path,
// topic and body): upstream's alert and payload, removal notices as
// background pushes, 410 / BadDeviceToken pruning, retries; and the startup
// checks of the APNS_* variables.
import t from 'tap'
import { generateKeyPairSync } from 'node:crypto'
import { jwtVerify } from 'jose'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { buildTestApp } from '../support/app.js'
import { as } from '../support/client.js'
import { expectSuccess } from '../support/expect.js'
import { startApnsPeer, type ApnsRequest } from '../support/apns-peer.js'
import { loadConfig } from '../../src/config.js'
import { deliverPushNotifications } from '../../src/notifications/push-delivery.js'
import { pushSendersFor } from '../../src/notifications/push-senders.js'
import type { User } from '../../src/db/index.js'

t.test('the APNS_* variables are checked at startup', async (t) => {
  const dir = mkdtempSync(path.join(tmpdir(), 'roost-apns-config-'))
  writeFileSync(path.join(dir, 'bad.p8'), 'not a key')
  const base = { APNS_KEY_ID: 'ABC123DEFG', APNS_TEAM_ID: 'TEAM123456' }
  t.throws(() => loadConfig({ ...base, APNS_KEY_FILE: path.join(dir, 'missing.p8') }), { name: 'ConfigError', message: /^APNS_KEY_FILE: cannot read/ })
  t.throws(() => loadConfig({ ...base, APNS_KEY_FILE: path.join(dir, 'bad.p8') }), { message: /^APNS_KEY_FILE: .* is not a P-256 private key/ })
  // Every problem of the part at once.
  t.throws(() => loadConfig({ ...base, APNS_KEY_ID: 'short', APNS_KEY_FILE: path.join(dir, 'bad.p8') }), {
    name: 'ConfigError',
    problems: ["APNS_KEY_ID must be the 10-character key ID, got 'short'", `APNS_KEY_FILE: '${path.join(dir, 'bad.p8')}' is not a P-256 private key in PEM (.p8)`],
  })
  t.throws(() => loadConfig({ APNS_KEY_ID: 'ABC123DEFG' }), { name: 'ConfigError', problems: ["APNS_TEAM_ID must be the 10-character team ID, got ''", 'APNS_KEY_FILE must be set with APNS_KEY_ID and APNS_TEAM_ID'] })
  t.throws(() => loadConfig({ ...base, APNS_KEY_FILE: path.join(dir, 'missing.p8'), APNS_ENDPOINT: 'http://insecure' }), {
    name: 'ConfigError',
    problems: [/^APNS_KEY_FILE: cannot read/, "APNS_ENDPOINT must use one of https:, got 'http:'"],
  })
})

t.test('APNs push notifications', async (t) => {
  const peer = await startApnsPeer()
  t.teardown(() => peer.close())
  const apns = loadConfig({ APNS_KEY_FILE: peer.keyFile, APNS_KEY_ID: peer.keyId, APNS_TEAM_ID: peer.teamId, APNS_ENDPOINT: peer.origin }).apns
  const { app, fx, services, config } = await buildTestApp(t, { config: { apns } })
  const realmId = fx.realm.id
  const owner = await fx.user('owner')
  const senders = pushSendersFor(config, { ca: [peer.ca] })
  const flush = async (): Promise<ApnsRequest[]> => {
    const before = peer.received.length
    await services.prisma.$executeRaw`UPDATE missed_push_notification SET due_at = now() - interval '1 minute' WHERE realm_id = ${realmId} AND attempts = 0`
    while ((await deliverPushNotifications(services, { log: app.log, realmIds: [realmId], retryBaseMs: 60_000 }, senders)) > 0) {
      // until nothing is due
    }
    return peer.received.slice(before)
  }
  const hex = (prefix: string) => `${prefix}${realmId.toString(16).padStart(8, '0')}${'ab'.repeat(26)}`.slice(0, 64)
  const iphone = async (name: string, token: string) => {
    const user = await fx.newUser({ fullName: name })
    expectSuccess(t, await as(app, user).post('/users/me/apns_device_token', { token, appid: 'org.example.chat' }))
    expectSuccess(t, await as(app, user).post('/users/me/subscriptions', { subscriptions: [{ name: fx.streams.general.name }] }))
    return user
  }
  const dm = async (from: User, to: User, content: string): Promise<number> =>
    expectSuccess(t, await as(app, from).post('/messages', { type: 'direct', to: [to.id], content })).id as number

  t.test('a mention reaches the iPhone with upstream’s alert and payload; reading it sends a background removal', async (t) => {
    const token = hex('aa')
    const bob = await iphone('Bob iPhone', token)
    const id = expectSuccess(t, await as(app, owner).post('/messages', { type: 'channel', to: fx.streams.general.id, topic: 'lunch', content: '@**Bob iPhone** noon?' })).id as number
    const [push, ...more] = (await flush()).filter((r) => r.token === token)
    t.equal(more.length, 0)
    t.match(push, {
      topic: 'org.example.chat',
      pushType: 'alert',
      body: {
        aps: { alert: { title: `#${fx.streams.general.name} > lunch`, subtitle: `${owner.fullName}:`, body: '@**Bob iPhone** noon?' }, sound: 'default' },
        zulip: { event: 'message', zulip_message_id: id, user_id: bob.id, sender_email: owner.email, recipient_type: 'stream' },
      },
    })
    expectSuccess(t, await as(app, bob).post('/messages/flags', { messages: [id], op: 'add', flag: 'read' }))
    const [removal] = (await flush()).filter((r) => r.token === token)
    t.match(removal, { pushType: 'background', body: { aps: { 'content-available': 1 }, zulip: { event: 'remove', zulip_message_ids: String(id) } } })
  })

  t.test('the provider token is an ES256 JWT that verifies (jose) against the .p8 key, with kid and iss only', async (t) => {
    t.ok(peer.providerTokens.length > 0)
    const [jwt] = peer.providerTokens
    const { payload, protectedHeader } = await jwtVerify(jwt!, peer.publicKey, { algorithms: ['ES256'] })
    t.same(protectedHeader, { alg: 'ES256', kid: peer.keyId })
    t.same(Object.keys(payload).sort(), ['iat', 'iss'])
    t.equal(payload.iss, peer.teamId)
    t.equal(typeof payload.iat, 'number')
    t.same(new Set(peer.providerTokens).size, 1, 'the token is reused while it is fresh')
    const other = generateKeyPairSync('ec', { namedCurve: 'P-256' })
    await t.rejects(jwtVerify(jwt!, other.publicKey, { algorithms: ['ES256'] }), 'another key does not verify it')
  })

  t.test('tokens APNs reports gone (410) or bad (BadDeviceToken) are pruned', async (t) => {
    const gone = await iphone('Bob Dead iPhone', hex('dead'))
    const bad = await iphone('Bob Bad iPhone', hex('bad0'))
    await dm(owner, gone, 'hello?')
    await dm(owner, bad, 'hello?')
    await flush()
    t.equal(await services.prisma.pushDevice.count({ where: { userId: { in: [gone.id, bad.id] } } }), 0)
    t.equal(await services.prisma.missedPushNotification.count({ where: { userId: { in: [gone.id, bad.id] } } }), 0)
  })

  t.test('an APNs failure keeps the notification for a retry', async (t) => {
    const bob = await iphone('Bob Failing iPhone', hex('fa11'))
    await dm(owner, bob, 'later')
    await flush()
    const row = await services.prisma.missedPushNotification.findFirst({ where: { userId: bob.id } })
    t.equal(row?.attempts, 1)
    t.match(row?.lastError, /APNs answered HTTP 500/)
  })
})
