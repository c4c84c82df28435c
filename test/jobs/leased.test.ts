// The leased-job module (src/jobs/leased.ts) on missed_message_email rows:
// a claim leases a user's rows to one node and no other node gets them; a
// lapsed lease is not renewed; a retry releases the lease with a capped
// exponential backoff, and past maxAttempts deletes; settling is only for the
// node holding the lease.
import t from 'tap'
import { buildTestApp } from '../support/app.js'
import { as } from '../support/client.js'
import { expectSuccess } from '../support/expect.js'
import { Prisma } from '../../src/db/index.js'
import { backoffMs, claimLeased, renewLeases, retryLeased, settleLeased, type LeasedRow } from '../../src/jobs/leased.js'

const TABLE = 'missed_message_email'
const COLUMNS = Prisma.sql`id, user_id, attempts`

t.test('leased jobs', async (t) => {
  const { app, fx, services } = await buildTestApp(t)
  const prisma = services.prisma
  const realmIds = [fx.realm.id]
  const owner = await fx.user('owner')
  const [alice, bob] = [fx.users.member, await fx.newUser({ fullName: 'Bob Leased' })]
  const send = async (content: string) =>
    expectSuccess(t, await as(app, owner).post('/messages', { type: 'stream', to: fx.streams.general.id, topic: 'jobs', content })).id as number
  const m1 = await send('one')
  const m2 = await send('two')
  const t0 = new Date('2030-01-01T00:00:00Z')
  const at = (s: number) => new Date(t0.getTime() + s * 1000)
  const row = (userId: number, messageId: number, dueAt: Date) => ({ realmId: fx.realm.id, userId, messageId, trigger: 'mentioned', conversation: 'c', createdAt: t0, dueAt })
  await prisma.missedMessageEmail.deleteMany({ where: { realmId: fx.realm.id } })
  await prisma.missedMessageEmail.createMany({ data: [row(alice.id, m1, at(0)), row(alice.id, m2, at(3600)), row(bob.id, m1, at(10))] })
  const lease = { realmIds, limit: 1, leaseMs: 60_000, columns: COLUMNS, wholeUser: true }

  const a = await claimLeased<LeasedRow>(prisma, TABLE, { ...lease, now: at(20), nodeId: 'node-a' })
  t.same(a.map((r) => r.user_id), [alice.id, alice.id], "the first due user's rows, the one not yet due too")
  const b = await claimLeased<LeasedRow>(prisma, TABLE, { ...lease, now: at(20), nodeId: 'node-b' })
  t.same(b.map((r) => r.user_id), [bob.id], "another node gets the next user's rows, never the leased ones")
  t.same(await claimLeased<LeasedRow>(prisma, TABLE, { ...lease, now: at(30), nodeId: 'node-c' }), [], 'nothing else is due')

  t.same(await renewLeases(prisma, TABLE, a, { nodeId: 'node-b', now: at(30), leaseMs: 60_000 }), [], 'only the holder renews')
  t.equal((await renewLeases(prisma, TABLE, a, { nodeId: 'node-a', now: at(30), leaseMs: 3_600_000 })).length, 2, 'a live lease is renewed (here for an hour)')
  t.same(await renewLeases(prisma, TABLE, b, { nodeId: 'node-b', now: at(200), leaseMs: 60_000 }), [], 'a lapsed lease is not')
  const taken = await claimLeased<LeasedRow>(prisma, TABLE, { ...lease, now: at(200), nodeId: 'node-c' })
  t.same(taken.map((r) => r.user_id), [bob.id], 'a lapsed lease is claimed by another node')

  const policy = { retryBaseMs: 1000, retryMaxMs: 5000 }
  t.same([1, 2, 3, 4, 5].map((n) => backoffMs(policy, n)), [1000, 2000, 4000, 5000, 5000], 'doubling, capped')
  t.equal(await retryLeased(prisma, TABLE, taken, new Error('smtp down'), { ...policy, nodeId: 'node-c', now: at(200) }), 'retried')
  const retried = await prisma.missedMessageEmail.findFirstOrThrow({ where: { userId: bob.id } })
  t.match(retried, { attempts: 1, lastError: 'smtp down', dueAt: at(201), claimedBy: null, claimExpiresAt: null })
  const again = await claimLeased<LeasedRow>(prisma, TABLE, { ...lease, now: at(201), nodeId: 'node-c' })
  t.equal(await retryLeased(prisma, TABLE, again, 'still down', { ...policy, nodeId: 'node-c', now: at(201) }), 'retried')
  t.match(await prisma.missedMessageEmail.findFirstOrThrow({ where: { userId: bob.id } }), { attempts: 2, dueAt: at(203) }, 'the second failure waits twice as long')
  const last = await claimLeased<LeasedRow>(prisma, TABLE, { ...lease, now: at(203), nodeId: 'node-c' })
  t.equal(await retryLeased(prisma, TABLE, last, 'gone', { ...policy, maxAttempts: 3, nodeId: 'node-c', now: at(203) }), 'dropped', 'the last attempt allowed')
  t.equal(await prisma.missedMessageEmail.count({ where: { userId: bob.id } }), 0, 'a dropped job is deleted')

  await settleLeased(prisma, TABLE, a.map((r) => r.id), 'node-b')
  t.equal(await prisma.missedMessageEmail.count({ where: { userId: alice.id } }), 2, 'another node cannot settle the rows')
  await settleLeased(prisma, TABLE, a.map((r) => r.id), 'node-a')
  t.equal(await prisma.missedMessageEmail.count({ where: { userId: alice.id } }), 0, 'the holder settles them')
})
