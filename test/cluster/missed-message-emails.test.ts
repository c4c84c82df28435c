// Three nodes on one database and one Redis, each running its missed-message
// email loop against one real SMTP server on loopback: every user's batch is
// emailed exactly once, and a node that stops in the middle of a batch (its
// send never finishes) loses nothing: its claim expires and another node
// sends the batch, once.
import { randomUUID } from 'node:crypto'
import t from 'tap'
import type { ParsedMail } from 'mailparser'
import { buildTestApp, type Tap } from '../support/app.js'
import { as } from '../support/client.js'
import { expectSuccess } from '../support/expect.js'
import { startSmtpPeer } from '../support/smtp-peer.js'
import { SmtpMailer, type Mailer } from '../../src/mail/outbox.js'
import { startMissedMessageEmails } from '../../src/notifications/delivery.js'
import type { User } from '../../src/db/index.js'

const USERS = 30

const addressee = (m: ParsedMail): string | undefined => (m.to && !Array.isArray(m.to) ? m.to.value[0]?.address : undefined)
const settle = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

async function threeNodes(t: Tap) {
  const redisPrefix = `test:${randomUUID()}`
  const a = await buildTestApp(t, { bus: 'redis', redisPrefix })
  const b = await buildTestApp(t, { bus: 'redis', redisPrefix, fixture: a.fx })
  const c = await buildTestApp(t, { bus: 'redis', redisPrefix, fixture: a.fx })
  return [a, b, c] as const
}

t.test('each batch is emailed once across three nodes', async (t) => {
  const peer = await startSmtpPeer()
  t.teardown(() => peer.close())
  const nodes = await threeNodes(t)
  const [a] = nodes
  const owner = await a.fx.user('owner')
  const users: User[] = []
  for (let i = 0; i < USERS; i++) users.push(await a.fx.newUser({ fullName: `Away ${i}` }))
  for (const [i, user] of users.entries()) {
    for (const n of [1, 2]) {
      expectSuccess(t, await as(nodes[i % 3]!.app, owner).post('/messages', { type: 'direct', to: [user.id], content: `note ${n} for ${i}` }))
    }
  }
  await a.services.prisma.$executeRaw`UPDATE missed_message_email SET due_at = now() - interval '1 minute' WHERE realm_id = ${a.fx.realm.id}`
  const mailer = new SmtpMailer(peer.url)
  const loops = nodes.map((node) => startMissedMessageEmails(node.services, { log: node.app.log, realmIds: [a.fx.realm.id], mailer, tickMs: 50 }))
  t.teardown(() => Promise.all(loops.map((l) => l.stop())))
  await peer.waitFor(USERS, 30_000)
  await settle(1000) // a duplicate would arrive meanwhile
  await Promise.all(loops.map((l) => l.stop()))
  const perUser = new Map<string, number>()
  for (const m of peer.received) perUser.set(addressee(m) ?? '', (perUser.get(addressee(m) ?? '') ?? 0) + 1)
  t.equal(peer.received.length, USERS, 'one email per user')
  t.ok(users.every((u) => perUser.get(u.deliveryEmail) === 1), 'every user got exactly one')
  t.ok(peer.received.every((m) => /note 1[\s\S]*note 2/.test(m.text ?? '')), 'both messages in each batch')
  t.equal(await a.services.prisma.missedMessageEmail.count({ where: { realmId: a.fx.realm.id } }), 0)
})

t.test('a node stopped mid-batch: its claim expires and another node sends the batch once', async (t) => {
  const peer = await startSmtpPeer()
  t.teardown(() => peer.close())
  const [a, b, c] = await threeNodes(t)
  const owner = await a.fx.user('owner')
  const bob = await a.fx.newUser({ fullName: 'Bob Left Behind' })
  for (const n of [1, 2]) expectSuccess(t, await as(a.app, owner).post('/messages', { type: 'direct', to: [bob.id], content: `stranded ${n}` }))
  await a.services.prisma.$executeRaw`UPDATE missed_message_email SET due_at = now() - interval '1 minute' WHERE realm_id = ${a.fx.realm.id}`

  // Node A claims the batch, then hangs in the middle of sending it (a process that stopped).
  let sendStarted!: () => void
  const started = new Promise<void>((resolve) => (sendStarted = resolve))
  let killSend!: (error: Error) => void
  const hanging: Mailer = {
    send: () =>
      new Promise<void>((_, reject) => {
        killSend = reject
        sendStarted()
      }),
  }
  const leaseMs = 1000
  const stuck = startMissedMessageEmails(a.services, { log: a.app.log, realmIds: [a.fx.realm.id], mailer: hanging, tickMs: 50, leaseMs })
  await started
  const claimed = await a.services.prisma.missedMessageEmail.findMany({ where: { userId: bob.id } })
  t.equal(claimed.length, 2)
  t.ok(claimed.every((r) => r.claimedBy === a.services.nodeId), 'node A holds the claim')

  const mailer = new SmtpMailer(peer.url)
  // Only the stopped node's lease is short (so the test is quick); the live nodes keep a lease much longer than a send.
  const loops = [b, c].map((node) => startMissedMessageEmails(node.services, { log: node.app.log, realmIds: [a.fx.realm.id], mailer, tickMs: 50, leaseMs: 60_000 }))
  t.teardown(() => Promise.all(loops.map((l) => l.stop())))
  const startedAt = Date.now()
  const [mail] = await peer.waitFor(1, 15_000)
  t.ok(Date.now() - startedAt >= leaseMs - 200, 'not before node A\'s claim expired')
  t.equal(addressee(mail!), bob.deliveryEmail)
  t.match(mail?.text, /stranded 1[\s\S]*stranded 2/)

  // Node A's send finally fails (the process is gone): it must not put the rows back or send them again.
  killSend(new Error('node stopped'))
  await stuck.stop()
  await settle(500)
  await Promise.all(loops.map((l) => l.stop()))
  t.equal(peer.received.length, 1, 'sent exactly once')
  t.equal(await a.services.prisma.missedMessageEmail.count({ where: { userId: bob.id } }), 0, 'nothing left pending')
})
