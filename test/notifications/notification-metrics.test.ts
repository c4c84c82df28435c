// The notification metrics as Prometheus scrapes them, through GET /metrics
// with METRICS_TOKEN: missed-message emails and push notifications pending
// (queued, and still queued while delivery fails), and the failure counters
// moved by the delivery loops as server.ts starts them, against a real SMTP
// server and a real push bouncer on loopback that both fail, then recover.
import t from 'tap'
import { buildTestApp, ownDatabase } from '../support/app.js'
import { as } from '../support/client.js'
import { expectSuccess } from '../support/expect.js'
import { startSmtpPeer } from '../support/smtp-peer.js'
import { startBouncerPeer } from '../support/bouncer-peer.js'
import { SmtpMailer, type Mailer } from '../../src/mail/outbox.js'
import { deliverMissedMessageEmails, startMissedMessageEmails } from '../../src/notifications/delivery.js'
import { deliverPushNotifications, startPushNotifications } from '../../src/notifications/push-delivery.js'
import { pushSendersFor, type PushSender } from '../../src/notifications/push-senders.js'

const TOKEN = 'metrics-secret-notifications-42'

/** The value of an unlabelled sample `name value` in the exposition text. */
function sample(text: string, name: string): number {
  const line = text.split('\n').find((l) => l.startsWith(`${name} `))
  if (line === undefined) throw new Error(`no sample ${name} in /metrics`)
  return Number(line.slice(name.length + 1))
}

/** A promise resolved by the first call of `signal`. */
function once(): { done: Promise<void>; signal: () => void } {
  let signal = () => {}
  const done = new Promise<void>((resolve) => (signal = resolve))
  return { done, signal }
}

function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  return Promise.race([promise, new Promise<T>((_, reject) => setTimeout(() => reject(new Error(`timed out waiting for ${what}`)), ms).unref())])
}

t.test('notification metrics through GET /metrics', async (t) => {
  const smtpPeer = await startSmtpPeer()
  t.teardown(() => smtpPeer.close())
  const bouncer = await startBouncerPeer()
  t.teardown(() => bouncer.close())
  // The gauges count every organization's rows: a database no other file writes to meanwhile.
  const { app, fx, services, config } = await buildTestApp(t, {
    database: await ownDatabase(t, 'metrics'),
    config: { metricsToken: TOKEN, smtpUrl: smtpPeer.url, pushBouncer: { url: bouncer.url, orgId: bouncer.orgId, orgKey: bouncer.orgKey } },
  })
  const realmId = fx.realm.id
  const owner = await fx.user('owner')
  const scrape = async () => {
    const res = await app.inject({ method: 'GET', url: '/metrics', headers: { authorization: `Bearer ${TOKEN}` } })
    t.equal(res.statusCode, 200)
    return {
      emailsPending: sample(res.body, 'roost_missed_message_emails_pending'),
      emailFailures: sample(res.body, 'roost_missed_message_email_failures_total'),
      pushesPending: sample(res.body, 'roost_push_notifications_pending'),
      pushFailures: sample(res.body, 'roost_push_notification_failures_total'),
    }
  }
  const makeDue = async () => {
    await services.prisma.$executeRaw`UPDATE missed_message_email SET due_at = now() - interval '1 minute' WHERE realm_id = ${realmId}`
    await services.prisma.$executeRaw`UPDATE missed_push_notification SET due_at = now() - interval '1 minute' WHERE realm_id = ${realmId}`
  }

  const before = await scrape()
  t.same({ emailFailures: before.emailFailures, pushFailures: before.pushFailures }, { emailFailures: 0, pushFailures: 0 })

  const bob = await fx.newUser({ fullName: 'Bob Metrics' })
  expectSuccess(t, await as(app, bob).post('/users/me/android_gcm_reg_id', { token: `fcm-metrics-${realmId}` }))
  expectSuccess(t, await as(app, owner).post('/messages', { type: 'direct', to: [bob.id], content: 'are you there?' }))
  const queued = await scrape()
  t.equal(queued.emailsPending, before.emailsPending + 1, 'the email is pending')
  t.equal(queued.pushesPending, before.pushesPending + 1, 'the push is pending')

  // Both services fail; the loops server.ts starts count the failures.
  smtpPeer.failing = true
  bouncer.failWith = 503
  await makeDue()
  const mailTried = once()
  const pushTried = once()
  const smtp = new SmtpMailer(smtpPeer.url)
  const mailer: Mailer = { send: (mail, now) => smtp.send(mail, now).finally(mailTried.signal) }
  const bouncerSender = pushSendersFor(config).get('bouncer')!
  const sender: PushSender = { kind: 'bouncer', send: (target, payload) => bouncerSender.send(target, payload).finally(pushTried.signal) }
  const emails = startMissedMessageEmails(services, { log: app.log, realmIds: [realmId], mailer, tickMs: 50 })
  const pushes = startPushNotifications(services, { log: app.log, realmIds: [realmId], senders: new Map([['bouncer', sender]]), tickMs: 50 })!
  await within(Promise.all([mailTried.done, pushTried.done]), 10_000, 'the delivery attempts')
  await emails.stop()
  await pushes.stop()
  const failed = await scrape()
  t.equal(failed.emailFailures, 1, 'one email failure counted')
  t.equal(failed.pushFailures, 1, 'one push failure counted')
  t.equal(failed.emailsPending, before.emailsPending + 1, 'the email is still queued')
  t.equal(failed.pushesPending, before.pushesPending + 1, 'the push is still queued')

  // The services recover: the retries go out and nothing is pending any more.
  smtpPeer.failing = false
  bouncer.failWith = undefined
  await makeDue()
  await deliverMissedMessageEmails(services, { log: app.log, realmIds: [realmId] }, smtp)
  await deliverPushNotifications(services, { log: app.log, realmIds: [realmId] }, pushSendersFor(config))
  t.equal(bouncer.notifications.filter((n) => n.user_id === bob.id).length, 1)
  const after = await scrape()
  t.same(after, { ...before, emailFailures: 1, pushFailures: 1 })
})
