// `roost restore FILE [--force]`: puts a `roost backup` archive back. It
// checks the whole archive first (manifest, members, every upload's size and
// SHA-256, migrations this release knows), refuses a database that already
// holds data unless forced, restores the database (pg_restore in one
// transaction, or the PGlite data directory moved into DATA_DIR), applies
// this release's newer migrations, and writes the uploads back through the
// storage interface (local disk or S3, whichever is configured now).
import { createHash } from 'node:crypto'
import { existsSync, readdirSync } from 'node:fs'
import { mkdtemp, readFile, rename, rm, stat } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { extract } from 'tar'
import type { Config } from '../config.js'
import { openDatabase, redact } from '../db/client.js'
import { lockDataDir } from '../db/data-dir-lock.js'
import { databaseContents, emptyPublicSchema, findPgTool, pgRestore, type PgTool } from '../db/dump.js'
import { applyMigrations, defaultMigrationsDir, readMigrations } from '../db/migrate.js'
import { createStorage } from '../storage/create-storage.js'
import { BackupError } from './backup.js'
import { BackupFormatError, MANIFEST_FILE, parseManifest, PGLITE_DIRECTORY, POSTGRES_DUMP_FILE, UPLOADS_DIRECTORY, type BackupManifest } from './manifest.js'

export interface RestoreOptions {
  config: Config
  env: Record<string, string | undefined>
  file: string
  /** Replace a database that already holds data. */
  force: boolean
  progress: (line: string) => void
  /** Where PostgreSQL's versioned program directories are looked for besides the PATH (default /usr/lib/postgresql). */
  pgSystemRoot?: string
}

export interface RestoreSummary {
  manifest: BackupManifest
  /** Migrations of this release applied after the restore. */
  migrated: string[]
}

/** An archive member restore accepts; anything else (links, other names) makes the archive unusable. */
function allowedMember(name: string, type: string): boolean {
  const normalized = name.replace(/^\.\//, '').replace(/\/$/, '')
  if (normalized.split('/').some((part) => part === '..' || part === '')) return false
  if (type === 'Directory') return normalized === UPLOADS_DIRECTORY || normalized === PGLITE_DIRECTORY || normalized.startsWith(`${PGLITE_DIRECTORY}/`)
  if (type !== 'File' && type !== 'OldFile' && type !== 'ContiguousFile') return false
  return normalized === MANIFEST_FILE || normalized === POSTGRES_DUMP_FILE || normalized.startsWith(`${PGLITE_DIRECTORY}/`) || /^uploads\/[1-9][0-9]*$/.test(normalized)
}

export async function restoreBackup(options: RestoreOptions): Promise<RestoreSummary> {
  const { config, progress, force } = options
  const file = path.resolve(options.file)
  if (!(await stat(file).then((s) => s.isFile(), () => false))) throw new BackupError(`${file} is not a file`)
  // Before anything is unpacked or replaced: a --force restore must not empty the database and then miss pg_restore.
  const restoreTool = config.databaseUrl ? await findPgTool('pg_restore', options.env, options.pgSystemRoot) : undefined
  // Embedded: hold DATA_DIR (no server may run on it) and unpack beside it, so the database directory is moved, not copied.
  const lock = config.databaseUrl ? undefined : lockDataDir(config.dataDir, 'admin command')
  const staging = await mkdtemp(config.databaseUrl ? path.join(os.tmpdir(), 'roost-restore-') : path.join(config.dataDir, '.restore-'))
  try {
    progress(`reading ${file}…`)
    const refused: string[] = []
    try {
      await extract({ file, cwd: staging, strict: true, filter: (name, entry) => (allowedMember(name, (entry as { type?: string }).type ?? 'File') ? true : (refused.push(name), false)) })
    } catch (error) {
      throw new BackupError(`${file} is not a readable .tar.gz archive: ${(error as Error).message}`)
    }
    if (refused.length > 0) throw new BackupError(`${file} is not a Roost backup: unexpected member '${refused[0]}'`)
    const manifestPath = path.join(staging, MANIFEST_FILE)
    if (!existsSync(manifestPath)) throw new BackupError(`${file} is not a Roost backup: it has no ${MANIFEST_FILE}`)
    let manifest: BackupManifest
    try {
      manifest = parseManifest(await readFile(manifestPath, 'utf8'))
    } catch (error) {
      if (error instanceof BackupFormatError) throw new BackupError(`${file}: ${error.message}`)
      throw error
    }
    await checkArchive(staging, manifest, file)
    const known = new Set((await readMigrations(defaultMigrationsDir())).map((m) => m.name))
    const unknown = manifest.migrations.filter((name) => !known.has(name))
    if (unknown.length > 0) {
      throw new BackupError(`${file} was written by Roost ${manifest.roostVersion}, whose database has migrations this release does not know (${unknown[0]}${unknown.length > 1 ? ` and ${unknown.length - 1} more` : ''}): restore it with that release or a newer one`)
    }

    let migrated: string[]
    if (config.databaseUrl) {
      if (manifest.database.kind !== 'postgresql') throw new BackupError(`${file} holds an embedded (PGlite) database: restore it with DATABASE_URL unset, into DATA_DIR`)
      migrated = await restorePostgres(config.databaseUrl, path.join(staging, POSTGRES_DUMP_FILE), options, restoreTool as PgTool)
    } else {
      if (manifest.database.kind !== 'embedded') throw new BackupError(`${file} holds a PostgreSQL dump: restore it with DATABASE_URL set to an empty database`)
      migrated = await restoreEmbedded(config.dataDir, path.join(staging, PGLITE_DIRECTORY), force, progress)
    }

    const storage = createStorage(config)
    await storage.check()
    for (const [i, upload] of manifest.uploads.files.entries()) {
      await storage.put(upload.key, await readFile(path.join(staging, upload.file)), upload.contentType)
      if ((i + 1) % 1000 === 0) progress(`uploads: ${i + 1} of ${manifest.uploads.count}…`)
    }
    progress(`uploads: ${manifest.uploads.count} file${manifest.uploads.count === 1 ? '' : 's'} written to ${config.s3 ? `the S3 bucket ${config.s3.bucket}` : path.join(config.dataDir, 'uploads')}`)
    return { manifest, migrated }
  } finally {
    await rm(staging, { recursive: true, force: true })
    lock?.release()
  }
}

/** Every member the manifest names is there, and every upload has the size and SHA-256 it lists. */
async function checkArchive(staging: string, manifest: BackupManifest, file: string): Promise<void> {
  const database = manifest.database.kind === 'postgresql' ? POSTGRES_DUMP_FILE : PGLITE_DIRECTORY
  if (!existsSync(path.join(staging, database))) throw new BackupError(`${file} is incomplete: ${database} is missing`)
  for (const upload of manifest.uploads.files) {
    const data = await readFile(path.join(staging, upload.file)).catch(() => undefined)
    if (!data) throw new BackupError(`${file} is incomplete: ${upload.file} (${upload.key}) is missing`)
    if (data.length !== upload.size || createHash('sha256').update(data).digest('hex') !== upload.sha256) {
      throw new BackupError(`${file} is damaged: ${upload.file} (${upload.key}) does not match its size and SHA-256 in ${MANIFEST_FILE}`)
    }
  }
}

async function restorePostgres(databaseUrl: string, dump: string, options: RestoreOptions, tool: PgTool): Promise<string[]> {
  const db = await openDatabase({ databaseUrl })
  try {
    const { relations } = await databaseContents(db)
    if (relations > 0) {
      if (!options.force) {
        throw new BackupError(`the database ${redact(databaseUrl)} is not empty (${relations} tables and sequences): restore refuses to replace it; stop every Roost node and run again with --force to replace its contents, or restore into an empty database`)
      }
      options.progress(`database: --force: dropping the ${relations} tables and sequences of ${redact(databaseUrl)}…`)
      await emptyPublicSchema(db)
    }
  } finally {
    await db.close()
  }
  options.progress('database: pg_restore…')
  await pgRestore(databaseUrl, dump, options.env, tool)
  return migrate(openDatabase({ databaseUrl }), options.progress)
}

async function restoreEmbedded(dataDir: string, restored: string, force: boolean, progress: (line: string) => void): Promise<string[]> {
  const dbDir = path.join(dataDir, 'db')
  if (existsSync(dbDir) && readdirSync(dbDir).length > 0) {
    if (!force) throw new BackupError(`${dbDir} (DATA_DIR) already holds a database: restore refuses to replace it; run again with --force to replace it, or restore into an empty DATA_DIR`)
    progress(`database: --force: removing ${dbDir}…`)
    await rm(dbDir, { recursive: true, force: true })
  }
  await rename(restored, dbDir)
  return migrate(openDatabase({ dataDir }), progress)
}

/** This release's migrations newer than the backup's. */
async function migrate(opening: ReturnType<typeof openDatabase>, progress: (line: string) => void): Promise<string[]> {
  const db = await opening
  try {
    return await applyMigrations(db, progress)
  } finally {
    await db.close()
  }
}
