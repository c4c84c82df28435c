// In-memory PGlite databases for tests, started from cached images: creating
// a PGlite cluster (initdb in WebAssembly) takes 5–13 s on these machines,
// loading an image about 1 s. Images live under the OS temporary directory,
// keyed by PGlite's version (and, for the migrated one, the migrations'
// checksums), so a changed migration makes a new image; concurrent test
// files that both miss write the same bytes, each through its own file.
import { createHash, randomUUID } from 'node:crypto'
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises'
import { existsSync, readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import os from 'node:os'
import path from 'node:path'
import { dumpPGlite, openDatabase, type Database, type OpenDatabaseOptions } from '../../src/db/client.js'
import { applyMigrations, defaultMigrationsDir, readMigrations } from '../../src/db/migrate.js'

const CACHE_DIR = path.join(os.tmpdir(), 'roost-test-pglite')

/** The installed PGlite's version (its package.json, found above its entry point: the package exports no ./package.json). */
function pgliteVersion(): string {
  let dir = path.dirname(fileURLToPath(import.meta.resolve('@electric-sql/pglite')))
  while (!existsSync(path.join(dir, 'package.json'))) {
    if (path.dirname(dir) === dir) throw new Error('cannot find the package.json of @electric-sql/pglite')
    dir = path.dirname(dir)
  }
  return (JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8')) as { version: string }).version
}
const PGLITE_VERSION = pgliteVersion()

const keyOf = (text: string): string => createHash('sha256').update(text).digest('hex').slice(0, 16)

/** Opens an in-memory database from the image named `key`, or makes one with `prepare` and saves its image. */
async function fromImage(key: string, prepare: (db: Database) => Promise<unknown>, options: Pick<OpenDatabaseOptions, 'wrapAdapter'> = {}): Promise<Database> {
  const file = path.join(CACHE_DIR, `${key}.tar`)
  const image = await readFile(file).catch(() => undefined)
  if (image) return openDatabase({ ...options, inMemory: true, pgliteImage: new Blob([image]) })
  const db = await openDatabase({ ...options, inMemory: true })
  await prepare(db)
  const bytes = Buffer.from(await (await dumpPGlite(db)).arrayBuffer())
  await mkdir(CACHE_DIR, { recursive: true })
  const temporary = `${file}.${randomUUID()}`
  await writeFile(temporary, bytes)
  await rename(temporary, file)
  return db
}

/** A new in-memory PGlite database with no migration applied. */
export function emptyPGlite(): Promise<Database> {
  return fromImage(`empty-${keyOf(PGLITE_VERSION)}`, async () => undefined)
}

/** A new in-memory PGlite database with every migration applied. */
export async function migratedPGlite(options: Pick<OpenDatabaseOptions, 'wrapAdapter'> = {}): Promise<Database> {
  const migrations = await readMigrations(defaultMigrationsDir())
  const key = `migrated-${keyOf([PGLITE_VERSION, ...migrations.map((m) => `${m.name}:${m.checksum}`)].join('\n'))}`
  const db = await fromImage(key, (fresh) => applyMigrations(fresh), options)
  // Nothing is pending after a good image; a bad one fails here rather than in the test.
  const pending = await applyMigrations(db)
  if (pending.length > 0) throw new Error(`the migrated PGlite image ${key} lacked ${pending.join(', ')}`)
  return db
}
