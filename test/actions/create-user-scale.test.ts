// Issue 16: creating a user costs the same in a realm of 10 or 1,000 users,
// apart from the events it sends. Statement counts are the deterministic
// proxy (test/support/statements.ts); the wall times are only printed.
import { randomBytes } from 'node:crypto'
import { performance } from 'node:perf_hooks'
import t from 'tap'
import { buildTestApp } from '../support/app.js'
import { as } from '../support/client.js'
import { expectSuccess } from '../support/expect.js'
import { countStatements, countingDatabase } from '../support/statements.js'
import { pickStreamColor } from '../../src/actions/user-rows.js'
import { SYSTEM_GROUPS } from '../../src/domain/system-groups.js'
import { ROLE } from '../../src/domain/roles.js'

t.test('POST /users runs no more statements in a realm of 1,000 users than in one of 10', async (t) => {
  const database = await countingDatabase()
  const { app, fx, services } = await buildTestApp(t, { database })
  const { prisma } = services
  const realmId = fx.realm.id
  const admin = fx.users.admin
  const membersGroup = (await prisma.userGroup.findUniqueOrThrow({ where: { realmId_name: { realmId, name: SYSTEM_GROUPS.members } } })).id

  /** `n` more active members, each subscribed to general (set-based fixture). */
  async function addUsers(n: number, batch: string): Promise<void> {
    const users = await prisma.user.createManyAndReturn({
      data: Array.from({ length: n }, (_, i) => {
        const email = `scale-${batch}-${i}@${fx.realm.stringId}.example.com`
        return { realmId, email, deliveryEmail: email, fullName: `Scale ${batch} ${i}`, apiKey: randomBytes(16).toString('hex'), role: ROLE.MEMBER, dateJoined: new Date() }
      }),
    })
    await prisma.userSettings.createMany({ data: users.map((u) => ({ userId: u.id })) })
    await prisma.userGroupMember.createMany({ data: users.map((u) => ({ groupId: membersGroup, userId: u.id })) })
    await prisma.subscription.createMany({ data: users.map((u) => ({ userId: u.id, streamId: fx.streams.general.id, color: pickStreamColor(0) })) })
  }

  let next = 0
  const create = async () => {
    const started = performance.now()
    const counted = await countStatements(async () =>
      await as(app, admin).post('/users', { email: `scale-new-${next++}@${fx.realm.stringId}.example.com`, password: 'a-long-password', full_name: 'Scale New' }),
    )
    expectSuccess(t, counted.result)
    return { statements: counted.statements, ms: performance.now() - started }
  }

  await create() // warm-up: first-use caches and prepared plans
  const small = await create()
  const before = await prisma.user.count({ where: { realmId } })
  await addUsers(1000, 'a')
  const large = await create()
  t.comment(`realm of ${before} users: ${small.statements.length} statements, ${small.ms.toFixed(0)} ms; of ${before + 1000}: ${large.statements.length} statements, ${large.ms.toFixed(0)} ms`)
  // One fewer is possible: a lookup the first requests made may since be answered from a cache.
  t.ok(large.statements.length <= small.statements.length, 'no more statements', { small: small.statements.length, large: large.statements.length })
})
