// Applies the committed SQL migrations (prisma/migrations/<name>/migration.sql)
// without the Prisma CLI, so it runs at startup and from `npm run migrate`.
//
// * Pending migrations run in name order, each in its own transaction.
// * The whole run holds the PostgreSQL advisory lock Prisma Migrate itself
//   takes (key 72707369), so concurrent nodes — and a concurrent
//   `prisma migrate deploy` — apply each migration exactly once.
// * Each applied migration is recorded in `_prisma_migrations` exactly as
//   Prisma records it (sha256 hex checksum of the file, applied_steps_count
//   1), so `prisma migrate status` agrees.
//
// A migration therefore must be able to run inside a transaction (no
// CREATE INDEX CONCURRENTLY and the like).
import { createHash, randomUUID } from 'node:crypto'
import { existsSync } from 'node:fs'
import { readdir, readFile } from 'node:fs/promises'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { withRawSession, type Database, type RawSession } from './client.js'

/** The advisory lock key of Prisma's schema engine for migrate commands. */
export const MIGRATION_LOCK_KEY = 72707369

export interface Migration {
  name: string
  sql: string
  checksum: string
}

export interface ApplyMigrationsOptions {
  /** Defaults to <package root>/prisma/migrations. */
  migrationsDir?: string
}

/**
 * Applies pending migrations; returns the names applied by this call
 * (empty when the database was up to date).
 */
export async function applyMigrations(
  db: Database,
  log: (msg: string) => void = () => {},
  options: ApplyMigrationsOptions = {},
): Promise<string[]> {
  const migrations = await readMigrations(options.migrationsDir ?? defaultMigrationsDir())
  return withRawSession(db, async (session) => {
    await session.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK_KEY])
    try {
      return await applyLocked(session, migrations, log)
    } finally {
      await session.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK_KEY])
    }
  })
}

async function applyLocked(session: RawSession, migrations: Migration[], log: (msg: string) => void): Promise<string[]> {
  await session.exec(CREATE_MIGRATIONS_TABLE)
  const rows = await session.query<{ migration_name: string; checksum: string; finished_at: Date | null; rolled_back_at: Date | null }>(
    'SELECT migration_name, checksum, finished_at, rolled_back_at FROM _prisma_migrations ORDER BY started_at',
  )
  const failed = rows.filter((r) => r.finished_at === null && r.rolled_back_at === null)
  if (failed.length > 0) {
    throw new Error(
      `migration ${failed.map((r) => r.migration_name).join(', ')} failed earlier and is recorded as unfinished ` +
        'in _prisma_migrations; fix the database, then mark it with `prisma migrate resolve`',
    )
  }
  const applied = new Map(rows.filter((r) => r.finished_at !== null).map((r) => [r.migration_name, r.checksum]))
  const known = new Set(migrations.map((m) => m.name))
  for (const name of applied.keys()) {
    if (!known.has(name)) log(`warning: migration ${name} is applied to the database but missing locally`)
  }

  const done: string[] = []
  for (const migration of migrations) {
    const checksum = applied.get(migration.name)
    if (checksum !== undefined) {
      if (checksum !== migration.checksum) log(`warning: migration ${migration.name} was modified after it was applied`)
      continue
    }
    await session.transaction(async (tx) => {
      const [{ started_at: startedAt }] = await tx.query<{ started_at: Date }>('SELECT clock_timestamp() AS started_at')
      await tx.exec(migration.sql)
      await tx.query(
        `INSERT INTO _prisma_migrations (id, checksum, finished_at, migration_name, logs, rolled_back_at, started_at, applied_steps_count)
         VALUES ($1, $2, clock_timestamp(), $3, NULL, NULL, $4, 1)`,
        [randomUUID(), migration.checksum, migration.name, startedAt],
      )
    })
    log(`applied migration ${migration.name}`)
    done.push(migration.name)
  }
  return done
}

export interface MigrationStatus {
  /** Applied and finished, in the order they were applied; `modified` when the file changed since. */
  applied: { name: string; finishedAt: Date; modified: boolean }[]
  /** Local migrations not applied yet, in the order `applyMigrations` would apply them. */
  pending: string[]
  /** Started and never finished (a failed run): `applyMigrations` refuses until they are resolved. */
  failed: string[]
  /** Applied to the database but absent from the local directory (a newer release ran here). */
  unknown: string[]
}

/** Runs one read-only statement and returns its rows. */
export type ReadRows = (sql: string) => Promise<Record<string, unknown>[]>

/** Compares the migrations directory with `_prisma_migrations`; reads only, takes no lock. */
export async function migrationStatus(db: Database, options: ApplyMigrationsOptions = {}): Promise<MigrationStatus> {
  return withRawSession(db, (session) => migrationStatusOver((sql) => session.query(sql), options))
}

/** migrationStatus over any connection (`roost check` uses a plain pg client with a connect timeout). */
export async function migrationStatusOver(read: ReadRows, options: ApplyMigrationsOptions = {}): Promise<MigrationStatus> {
  const migrations = await readMigrations(options.migrationsDir ?? defaultMigrationsDir())
  const [table] = await read("SELECT to_regclass('_prisma_migrations')::text AS name")
  const rows = !table?.name
    ? []
    : ((await read('SELECT migration_name, checksum, finished_at, rolled_back_at FROM _prisma_migrations ORDER BY started_at, migration_name')) as {
        migration_name: string
        checksum: string
        finished_at: Date | null
        rolled_back_at: Date | null
      }[])
  const local = new Map(migrations.map((m) => [m.name, m.checksum]))
  const finished = rows.filter((r) => r.finished_at !== null && r.rolled_back_at === null)
  const done = new Set(finished.map((r) => r.migration_name))
  return {
    applied: finished.map((r) => ({ name: r.migration_name, finishedAt: r.finished_at as Date, modified: local.has(r.migration_name) && local.get(r.migration_name) !== r.checksum })),
    pending: migrations.filter((m) => !done.has(m.name)).map((m) => m.name),
    failed: rows.filter((r) => r.finished_at === null && r.rolled_back_at === null).map((r) => r.migration_name),
    unknown: finished.filter((r) => !local.has(r.migration_name)).map((r) => r.migration_name),
  }
}

// Same definition as Prisma's schema engine creates, so either side can
// create the table and the other reads it.
const CREATE_MIGRATIONS_TABLE = `
CREATE TABLE IF NOT EXISTS "_prisma_migrations" (
    "id"                    VARCHAR(36) PRIMARY KEY NOT NULL,
    "checksum"              VARCHAR(64) NOT NULL,
    "finished_at"           TIMESTAMPTZ,
    "migration_name"        VARCHAR(255) NOT NULL,
    "logs"                  TEXT,
    "rolled_back_at"        TIMESTAMPTZ,
    "started_at"            TIMESTAMPTZ NOT NULL DEFAULT now(),
    "applied_steps_count"   INTEGER NOT NULL DEFAULT 0
)`

/** Migrations in a directory laid out as Prisma does, sorted by name. */
export async function readMigrations(dir: string): Promise<Migration[]> {
  const entries = await readdir(dir, { withFileTypes: true })
  const names = entries
    .filter((e) => e.isDirectory() && existsSync(path.join(dir, e.name, 'migration.sql')))
    .map((e) => e.name)
    .sort()
  return Promise.all(
    names.map(async (name) => {
      const bytes = await readFile(path.join(dir, name, 'migration.sql'))
      return { name, sql: bytes.toString('utf8'), checksum: createHash('sha256').update(bytes).digest('hex') }
    }),
  )
}

/**
 * prisma/migrations under the package root: the nearest directory above this
 * module holding package.json (works from src/db and from dist/src/db).
 */
export function defaultMigrationsDir(): string {
  let dir = path.dirname(fileURLToPath(import.meta.url))
  for (;;) {
    if (existsSync(path.join(dir, 'package.json'))) return path.join(dir, 'prisma', 'migrations')
    const parent = path.dirname(dir)
    if (parent === dir) throw new Error('cannot find the package root (package.json) above src/db')
    dir = parent
  }
}
