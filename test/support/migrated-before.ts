// A fresh in-memory database with every migration before `migration` applied,
// for tests of what that migration does to rows written before it. Such
// tests write their rows in SQL naming only the columns they set: the Prisma
// client knows columns that later migrations add.
import { cp, mkdtemp, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import type { Test } from 'tap'
import type { Database } from '../../src/db/index.js'
import { applyMigrations, defaultMigrationsDir, readMigrations } from '../../src/db/migrate.js'
import { emptyPGlite } from './pglite-image.js'

export async function migratedBefore(t: Test, migration: string): Promise<Database> {
  const db = await emptyPGlite()
  t.teardown(() => db.close())
  const dir = await mkdtemp(path.join(os.tmpdir(), 'roost-migrations-'))
  t.teardown(() => rm(dir, { recursive: true, force: true }))
  const names = (await readMigrations(defaultMigrationsDir())).map((m) => m.name)
  t.ok(names.includes(migration), `${migration} is a migration`)
  for (const name of names.filter((n) => n < migration)) await cp(path.join(defaultMigrationsDir(), name), path.join(dir, name), { recursive: true })
  await applyMigrations(db, undefined, { migrationsDir: dir })
  return db
}
