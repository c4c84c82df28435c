// The worker loops' idle ticks (jobs/leased.ts's probe): with nothing due, a
// tick of scheduled delivery, missed-message emails or push notifications is
// one statement and no transaction; a row that is not yet due, already
// settled, leased to a node or of another realm does not open a claim; a due
// row does, and is then delivered (the loops' own tests deliver through the
// same step functions).
import t, { type Test } from 'tap'
import { buildTestApp } from '../support/app.js'
import { as } from '../support/client.js'
import { expectSuccess } from '../support/expect.js'
import { countStatements, countingDatabase } from '../support/statements.js'
import { deliverBatch } from '../../src/scheduler/delivery.js'
import { deliverMissedMessageEmails } from '../../src/notifications/delivery.js'
import { deliverPushNotifications } from '../../src/notifications/push-delivery.js'
import { anyDue } from '../../src/jobs/leased.js'
import type { Mailer } from '../../src/mail/outbox.js'

const PROBE = /^SELECT EXISTS \(SELECT 1 FROM (scheduled_message|missed_message_email|missed_push_notification) WHERE/

t.test('worker loop ticks', async (t) => {
  const database = await countingDatabase()
  const { app, fx, services } = await buildTestApp(t, { database })
  const log = app.log
  const realmIds = [fx.realm.id]
  const sent: unknown[] = []
  const mailer: Mailer = { send: async (mail) => void sent.push(mail) }
  const at = (ms: number) => ({ ...services, now: () => new Date(ms) })
  const ticks = {
    scheduled: (now: number, realms = realmIds) => deliverBatch(at(now), { log, realmIds: realms }),
    emails: (now: number, realms = realmIds) => deliverMissedMessageEmails(at(now), { log, realmIds: realms }, mailer),
    pushes: (now: number, realms = realmIds) => deliverPushNotifications(at(now), { log, realmIds: realms }, new Map()),
  }
  /** Asserts that `tick` settles nothing with one statement, the probe, and no transaction. */
  const idle = async (t: Test, tick: () => Promise<number>, what: string) => {
    const { result, statements } = await countStatements(tick)
    t.equal(result, 0, `${what}: nothing settled`)
    t.equal(statements.length, 1, `${what}: one statement:\n${statements.join('\n')}`)
    t.match(statements[0]?.trim(), PROBE, `${what}: the probe`)
  }
  const claims = async (tick: () => Promise<number>) => (await countStatements(tick)).statements.includes('BEGIN')

  t.test('nothing due: each loop runs the probe only', async (t) => {
    for (const [name, tick] of Object.entries(ticks)) await idle(t, () => tick(Date.now()), name)
  })

  t.test('a scheduled message: idle until its time, claimed and sent at it', async (t) => {
    const when = Math.floor(Date.now() / 1000) + 3600
    const { scheduled_message_id: id } = expectSuccess(
      t,
      await as(app, fx.users.member).post('/scheduled_messages', { type: 'stream', to: fx.streams.general.id, topic: 'later', content: 'at the hour', scheduled_delivery_timestamp: when }),
    )
    await idle(t, () => ticks.scheduled(Date.now()), 'before its time')
    await idle(t, () => ticks.scheduled(when * 1000 + 1000, [fx.realm.id + 1_000_000]), 'another realm only')
    t.equal(await anyDue(services.prisma, 'scheduled_message', new Date(when * 1000)), true, 'due at its time')
    t.ok(await claims(() => ticks.scheduled(when * 1000 + 1000)), 'claimed at its time')
    const row = await services.prisma.scheduledMessage.findUniqueOrThrow({ where: { id } })
    t.equal(row.delivered, true, 'sent')
    await idle(t, () => ticks.scheduled(when * 1000 + 2000), 'once delivered')
  })

  t.test('missed-message emails and pushes: not before due_at, not while leased', async (t) => {
    const bob = await fx.newUser({ fullName: 'Bob Probe' })
    const message = expectSuccess(t, await as(app, fx.users.owner).post('/messages', { type: 'direct', to: [bob.id], content: 'probe me' })).id as number
    const now = Date.now()
    await services.prisma.missedMessageEmail.deleteMany({ where: { userId: bob.id } })
    await services.prisma.missedPushNotification.deleteMany({ where: { userId: bob.id } })
    const common = { realmId: fx.realm.id, userId: bob.id, messageId: message, trigger: 'direct_message', createdAt: new Date(now), dueAt: new Date(now + 60_000) }
    await services.prisma.missedMessageEmail.create({ data: { ...common, conversation: `dm:${[bob.id, fx.users.owner.id].sort((a, b) => a - b).join(',')}` } })
    await services.prisma.missedPushNotification.create({ data: common })
    for (const [name, table, tick] of [
      ['emails', 'missed_message_email', ticks.emails],
      ['pushes', 'missed_push_notification', ticks.pushes],
    ] as const) {
      await idle(t, () => tick(now), `${name} before due_at`)
      await idle(t, () => tick(now + 120_000, [fx.realm.id + 1_000_000]), `${name} of another realm only`)
      t.equal(await anyDue(services.prisma, table, new Date(now + 120_000), realmIds), true, `${name} due after due_at`)
    }
    // Leased by a node until later: not due for anyone until the lease ends.
    await services.prisma.missedMessageEmail.updateMany({ where: { userId: bob.id }, data: { claimedBy: 'elsewhere', claimExpiresAt: new Date(now + 300_000) } })
    await services.prisma.missedPushNotification.updateMany({ where: { userId: bob.id }, data: { claimedBy: 'elsewhere', claimExpiresAt: new Date(now + 300_000) } })
    await idle(t, () => ticks.emails(now + 120_000), 'emails while leased')
    await idle(t, () => ticks.pushes(now + 120_000), 'pushes while leased')
    // After the lease: claimed and settled.
    t.ok(await claims(() => ticks.emails(now + 360_000)), 'emails claimed after the lease')
    t.ok(await claims(() => ticks.pushes(now + 360_000)), 'pushes claimed after the lease')
    t.equal(sent.length, 1, 'the email went out')
    await idle(t, () => ticks.emails(now + 360_000), 'emails once settled')
    await idle(t, () => ticks.pushes(now + 360_000), 'pushes once settled')
  })
})
