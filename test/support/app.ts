// buildTestApp(t): an app over the shared test database with a fresh realm
// (owner, admin, moderator, member, guest, bot; two channels). Files run in
// parallel; each test makes its own realm, so nothing needs cleaning up.
import { randomUUID } from 'node:crypto'
import pg from 'pg'
import tap from 'tap'
import type { FastifyInstance } from 'fastify'
import { buildApp } from '../../src/app.js'
import type { Config } from '../../src/config.js'
import { openDatabase, type Database } from '../../src/db/client.js'
import { applyMigrations } from '../../src/db/migrate.js'
import { migratedPGlite } from './pglite-image.js'
import { TEST_DATABASE_URL, testConfig, testRedisSettings } from './config.js'
import type { Realm, Stream, User } from '../../src/db/index.js'
import type { Services } from '../../src/services.js'
import { createRealm } from '../../src/actions/create-realm.js'
import { insertUser, pickStreamColor } from '../../src/actions/user-rows.js'
import { fakeEmailDomain } from '../../src/present/realm.js'
import type { EventBus } from '../../src/events/bus.js'
import { MemoryEventBus } from '../../src/events/memory-bus.js'
import { servicesOver } from '../../src/node-services.js'
import { memoryBackends, openBackends } from '../../src/backends/index.js'
import { ROLE } from '../../src/domain/roles.js'
import { renderPlainDescription } from '../../src/actions/render-description.js'

export interface Tap {
  teardown(fn: () => unknown): void
}

export { TEST_DATABASE_URL, TEST_REDIS_URL, testConfig } from './config.js'

let shared: Promise<Database> | undefined

export function testDatabase(): Promise<Database> {
  shared ??= (async () => {
    if (!TEST_DATABASE_URL) {
      // A PGlite started from an image keeps the process alive until closed: close it once every test of the file is done.
      const db = await migratedPGlite()
      tap.teardown(() => db.close())
      return db
    }
    const db = await openDatabase({ databaseUrl: TEST_DATABASE_URL })
    await applyMigrations(db)
    return db
  })()
  return shared
}

/**
 * A database of the caller's alone, for tests of database-wide figures (the
 * pending-notification gauges count every organization's rows, and files
 * share a database: side by side on PostgreSQL, one after another in a
 * batch on PGlite). On PostgreSQL a fresh `<test database>_<suffix>`,
 * migrated, dropped again afterwards; on PGlite a new in-memory database.
 */
export async function ownDatabase(t: Tap, suffix: string): Promise<Database> {
  if (!TEST_DATABASE_URL) {
    const db = await migratedPGlite()
    t.teardown(() => db.close())
    return db
  }
  if (!/^[a-z0-9_]+$/.test(suffix)) throw new Error(`ownDatabase: suffix '${suffix}'`)
  const url = new URL(TEST_DATABASE_URL)
  const name = `${decodeURIComponent(url.pathname.slice(1))}_${suffix}`
  const admin = new URL(url)
  admin.pathname = '/postgres'
  const adminQuery = async (sql: string) => {
    const client = new pg.Client({ connectionString: admin.toString() })
    await client.connect()
    try {
      await client.query(sql)
    } finally {
      await client.end()
    }
  }
  await adminQuery(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`)
  await adminQuery(`CREATE DATABASE "${name}"`)
  url.pathname = `/${name}`
  const db = await openDatabase({ databaseUrl: url.toString() })
  await applyMigrations(db)
  t.teardown(async () => {
    await db.close()
    await adminQuery(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`)
  })
  return db
}


export type FixtureRole = 'owner' | 'admin' | 'moderator' | 'member' | 'guest' | 'bot' | 'otherMember'

export interface Fixture {
  realm: Realm
  host: string
  users: Record<FixtureRole, User>
  notificationBot: User
  /** `general` (default, everyone subscribed), `design` (public), `secret` (private; owner and member subscribed). */
  streams: { general: Stream; design: Stream; secret: Stream }
  user(role: FixtureRole): Promise<User>
  /** A fresh user in the same realm. */
  newUser(options?: { role?: number; fullName?: string; email?: string; password?: string; isBot?: boolean; botOwnerId?: number }): Promise<User>
  refresh(user: User): Promise<User>
}

export interface TestApp {
  app: FastifyInstance
  fx: Fixture
  services: Services
  config: Config
}

export interface BuildTestAppOptions {
  bus?: 'memory' | 'redis' | EventBus
  redisPrefix?: string
  config?: Partial<Config>
  /** Reuse the realm of another test app (cluster tests). */
  fixture?: Fixture
  /** A database connection of the node's own instead of the shared one (a node in another process, cluster tests). */
  database?: Database
}

export async function buildTestApp(t: Tap, options: BuildTestAppOptions = {}): Promise<TestApp> {
  const database = options.database ?? (await testDatabase())
  const config = testConfig({
    ...(options.bus === 'redis' ? testRedisSettings() : {}),
    ...options.config,
  })
  const backends =
    options.bus === 'redis'
      ? await openBackends(config, { redisPrefix: options.redisPrefix })
      : memoryBackends(config, { bus: typeof options.bus === 'object' ? options.bus : new MemoryEventBus() })
  const services = servicesOver(config, database, backends)
  const app = await buildApp({ services })
  t.teardown(async () => {
    await app.close()
    await backends.close()
  })
  const fx = options.fixture ?? (await makeFixture(services))
  return { app, fx, services, config }
}

/**
 * Two nodes on the Redis bus sharing a realm, each with its own connection
 * to the test database (as two processes have): node B's PostgreSQL
 * notifications and caches are its own.
 */
export async function twoNodesOwnConnections(t: Tap): Promise<{ a: TestApp; b: TestApp }> {
  const redisPrefix = `test:${randomUUID()}`
  const a = await buildTestApp(t, { bus: 'redis', redisPrefix })
  const own = await openDatabase({ databaseUrl: TEST_DATABASE_URL })
  const b = await buildTestApp(t, { bus: 'redis', redisPrefix, fixture: a.fx, database: own })
  t.teardown(() => own.close())
  return { a, b }
}

let counter = 0

export async function makeFixture(services: Services): Promise<Fixture> {
  const stringId = `r${randomUUID().slice(0, 8)}${counter++}`
  const domain = `${stringId}.example.com`
  const { realm, owner, notificationBot } = await createRealm(services, {
    stringId,
    name: `Test realm ${stringId}`,
    owner: { email: `owner@${domain}`, fullName: 'Olivia Owner', password: 'owner-password-1' },
  })
  const now = services.now()
  const emailDomain = fakeEmailDomain(realm, services.config.externalUrl)
  const made = await services.prisma.$transaction(async (tx) => {
    const mk = (role: number, name: string, local: string, extra: { isBot?: boolean; botOwnerId?: number } = {}) =>
      insertUser(tx, realm, { email: `${local}@${domain}`, fullName: name, role, dateJoined: now, botType: extra.isBot ? 1 : null, emailDomain, ...extra })
    const admin = await mk(ROLE.ADMIN, 'Adam Admin', 'admin')
    const moderator = await mk(ROLE.MODERATOR, 'Mona Moderator', 'moderator')
    const member = await mk(ROLE.MEMBER, 'Mia Member', 'member')
    const otherMember = await mk(ROLE.MEMBER, 'Otto Other', 'other')
    const guest = await mk(ROLE.GUEST, 'Gus Guest', 'guest', {})
    const bot = await mk(ROLE.MEMBER, 'Bobby Bot', 'bobby-bot', { isBot: true, botOwnerId: member.user.id })
    return { admin, moderator, member, otherMember, guest, bot }
  })
  const general = await services.prisma.stream.findFirstOrThrow({ where: { realmId: realm.id, name: 'general' } })
  const adminsGroup = general.canRemoveSubscribersGroupId
  const design = await services.prisma.stream.create({
    data: { realmId: realm.id, name: 'design', description: 'Design talk', renderedDescription: renderPlainDescription('Design talk'), canRemoveSubscribersGroupId: adminsGroup, creatorId: owner.id, dateCreated: now },
  })
  const secret = await services.prisma.stream.create({
    data: { realmId: realm.id, name: 'secret', description: 'Private', renderedDescription: renderPlainDescription('Private'), inviteOnly: true, historyPublicToSubscribers: false, canRemoveSubscribersGroupId: adminsGroup, creatorId: owner.id, dateCreated: now },
  })
  await services.prisma.subscription.createMany({
    data: [
      { userId: owner.id, streamId: design.id, color: pickStreamColor(1) },
      { userId: made.member.user.id, streamId: design.id, color: pickStreamColor(1) },
      { userId: owner.id, streamId: secret.id, color: pickStreamColor(2) },
      { userId: made.member.user.id, streamId: secret.id, color: pickStreamColor(2) },
    ],
  })
  const users: Record<FixtureRole, User> = {
    owner,
    admin: made.admin.user,
    moderator: made.moderator.user,
    member: made.member.user,
    otherMember: made.otherMember.user,
    guest: made.guest.user,
    bot: made.bot.user,
  }
  let extra = 0
  return {
    realm,
    host: `${stringId}.localhost`,
    users,
    notificationBot,
    streams: { general, design, secret },
    user: async (role) => services.prisma.user.findUniqueOrThrow({ where: { id: users[role].id } }),
    refresh: (user) => services.prisma.user.findUniqueOrThrow({ where: { id: user.id } }),
    async newUser(o = {}) {
      const n = extra++
      const { user } = await services.prisma.$transaction((tx) =>
        insertUser(tx, realm, {
          email: o.email ?? `user${n}@${domain}`,
          fullName: o.fullName ?? `User ${n}`,
          role: o.role ?? ROLE.MEMBER,
          password: o.password,
          isBot: o.isBot,
          botType: o.isBot ? 1 : null,
          botOwnerId: o.botOwnerId,
          dateJoined: services.now(),
          emailDomain,
        }),
      )
      return user
    },
  }
}
