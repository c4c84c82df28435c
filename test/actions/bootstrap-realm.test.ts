import t from 'tap'
import { openDatabase, type Database } from '../../src/db/client.js'
import { applyMigrations } from '../../src/db/migrate.js'
import { bootstrapRealm } from '../../src/actions/bootstrap-realm.js'
import { servicesOver } from '../../src/node-services.js'
import { memoryBackends } from '../../src/backends/index.js'
import { loadConfig } from '../../src/config.js'
import { verifyPassword } from '../../src/domain/credentials.js'
import { migratedPGlite } from '../support/pglite-image.js'
import { throwawayDatabase, type Teardown } from '../support/throwaway-db.js'

async function freshDatabase(t: Teardown, kind: 'pglite' | 'postgres'): Promise<{ db: Database; url?: string }> {
  const url = kind === 'postgres' ? await throwawayDatabase(t) : undefined
  const db = url === undefined ? await migratedPGlite() : await openDatabase({ databaseUrl: url })
  t.teardown(() => db.close())
  if (url !== undefined) await applyMigrations(db)
  return { db, url }
}

for (const kind of ['pglite', 'postgres'] as const) {
  t.test(`bootstrap on an empty ${kind} database`, async (t) => {
    t.test('creates the configured realm and owner once', async (t) => {
      const { db, url } = await freshDatabase(t, kind)
      const config = loadConfig({
        DATABASE_URL: url,
        BOOTSTRAP_REALM_NAME: 'Acme',
        BOOTSTRAP_OWNER_EMAIL: 'boss@acme.test',
        BOOTSTRAP_OWNER_PASSWORD: 'correct horse',
      })
      const services = servicesOver(config, db, memoryBackends({ rateLimiting: false }))
      const created = await bootstrapRealm(services)
      t.equal(created?.realmName, 'Acme')
      t.equal(created?.printPassword, false, 'a configured password is not printed')
      const owner = await db.prisma.user.findFirstOrThrow({ where: { deliveryEmail: 'boss@acme.test' } })
      t.equal(owner.role, 100)
      t.ok(await verifyPassword(owner.passwordHash, 'correct horse'))
      t.equal(await bootstrapRealm(services), undefined, 'a second start creates nothing')
      t.equal(await db.prisma.realm.count(), 1)
    })

    t.test('two nodes starting together create one realm', async (t) => {
      const { db, url } = await freshDatabase(t, kind)
      const config = loadConfig({ DATABASE_URL: url, BOOTSTRAP_OWNER_EMAIL: 'boss@acme.test', BOOTSTRAP_OWNER_PASSWORD: 'pw-123456' })
      const a = servicesOver(config, db, memoryBackends({ rateLimiting: false }))
      const b = servicesOver(config, db, memoryBackends({ rateLimiting: false }))
      const results = await Promise.all([bootstrapRealm(a), bootstrapRealm(b)])
      t.equal(results.filter(Boolean).length, 1)
      t.equal(await db.prisma.realm.count(), 1)
    })
  })
}

t.test('embedded mode with nothing configured creates a demo realm and prints its password', async (t) => {
  const { db } = await freshDatabase(t, 'pglite')
  const services = servicesOver(loadConfig({}), db, memoryBackends({ rateLimiting: false }))
  const created = await bootstrapRealm(services)
  t.equal(created?.printPassword, true)
  t.equal(created?.email, 'owner@example.com')
  t.equal(created?.apiKey.length, 32)
})

t.test('PostgreSQL mode with nothing configured creates nothing', async (t) => {
  const { db, url } = await freshDatabase(t, 'postgres')
  t.equal(await bootstrapRealm(servicesOver(loadConfig({ DATABASE_URL: url }), db, memoryBackends({ rateLimiting: false }))), undefined)
  t.equal(await db.prisma.realm.count(), 0)
})
