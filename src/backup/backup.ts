// `roost backup`: one .tar.gz holding the database (a pg_dump custom-format
// file, or in embedded mode a copy of the PGlite data directory taken while
// no server has it open), every upload read through the storage interface
// (local disk or S3 alike), and a manifest. The archive is written under a
// temporary name and renamed into place, so a failed backup leaves no file
// that looks complete.
import { createHash } from 'node:crypto'
import { existsSync, readdirSync } from 'node:fs'
import { cp, mkdir, mkdtemp, rename, rm, stat, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { create as createTar } from 'tar'
import type { Config } from '../config.js'
import { openDatabase } from '../db/client.js'
import { lockDataDir } from '../db/data-dir-lock.js'
import { databaseContents, findPgTool, pgDump } from '../db/dump.js'
import { createStorage } from '../storage/create-storage.js'
import { SERVICE_VERSION } from '../version.js'
import {
  BACKUP_FORMAT,
  BACKUP_FORMAT_VERSION,
  MANIFEST_FILE,
  PGLITE_DIRECTORY,
  POSTGRES_DUMP_FILE,
  UPLOADS_DIRECTORY,
  type BackupManifest,
  type BackupUpload,
} from './manifest.js'

/** A failure the operator can act on (no database, a server holding DATA_DIR…). */
export class BackupError extends Error {
  override name = 'BackupError'
}

export interface BackupOptions {
  config: Config
  /** The environment the PostgreSQL tools are looked up and run in (PATH, PGSSLMODE…). */
  env: Record<string, string | undefined>
  /** A file to write, or an existing directory to write roost-backup-<time>.tar.gz into. */
  output: string
  progress: (line: string) => void
  now?: Date
  /** Where PostgreSQL's versioned program directories are looked for besides the PATH (default /usr/lib/postgresql). */
  pgSystemRoot?: string
}

export interface BackupSummary {
  file: string
  manifest: BackupManifest
}

/** The archive's path for `output`: itself, or a dated name inside it when it is a directory. */
export async function backupPath(output: string, now: Date): Promise<string> {
  const resolved = path.resolve(output)
  const isDirectory = await stat(resolved).then((s) => s.isDirectory(), () => false)
  if (!isDirectory) return resolved
  return path.join(resolved, `roost-backup-${now.toISOString().replace(/[:.]/g, '-')}.tar.gz`)
}

export async function createBackup(options: BackupOptions): Promise<BackupSummary> {
  const { config, progress } = options
  const now = options.now ?? new Date()
  const file = await backupPath(options.output, now)
  if (!existsSync(path.dirname(file))) throw new BackupError(`the directory of ${file} does not exist`)
  // Before anything is read or written: a missing pg_dump is named at once.
  const dumpTool = config.databaseUrl ? await findPgTool('pg_dump', options.env, options.pgSystemRoot) : undefined
  // Embedded: DATA_DIR/roost.pid keeps the server (and other commands) off the PGlite files while they are copied.
  const lock = config.databaseUrl ? undefined : lockDataDir(config.dataDir, 'admin command')
  const staging = await mkdtemp(path.join(path.dirname(file), '.roost-backup-'))
  const partial = `${file}.partial`
  try {
    let database: BackupManifest['database']
    let migrations: string[]
    if (config.databaseUrl) {
      migrations = await appliedMigrations(openDatabase({ databaseUrl: config.databaseUrl }))
      progress('database: pg_dump (custom format)…')
      const dumped = await pgDump(config.databaseUrl, path.join(staging, POSTGRES_DUMP_FILE), options.env, dumpTool)
      database = { kind: 'postgresql', file: POSTGRES_DUMP_FILE, pgDumpVersion: dumped.version }
    } else {
      const dbDir = path.join(config.dataDir, 'db')
      if (!existsSync(dbDir) || readdirSync(dbDir).length === 0) throw new BackupError(`no embedded database in ${dbDir} (DATA_DIR): nothing to back up`)
      migrations = await appliedMigrations(openDatabase({ dataDir: config.dataDir }))
      progress(`database: copying ${dbDir}…`)
      await cp(dbDir, path.join(staging, PGLITE_DIRECTORY), { recursive: true })
      database = { kind: 'embedded', directory: PGLITE_DIRECTORY }
    }
    const uploads = await copyUploads(config, staging, progress)
    const manifest: BackupManifest = {
      format: BACKUP_FORMAT,
      formatVersion: BACKUP_FORMAT_VERSION,
      roostVersion: SERVICE_VERSION,
      createdAt: now.toISOString(),
      database,
      migrations,
      uploads: { storage: config.s3 ? 's3' : 'local', count: uploads.length, bytes: uploads.reduce((sum, u) => sum + u.size, 0), files: uploads },
    }
    await writeFile(path.join(staging, MANIFEST_FILE), `${JSON.stringify(manifest, null, 2)}\n`)
    progress(`writing ${file}…`)
    const members = [MANIFEST_FILE, database.kind === 'postgresql' ? POSTGRES_DUMP_FILE : PGLITE_DIRECTORY, UPLOADS_DIRECTORY]
    await createTar({ gzip: true, file: partial, cwd: staging, portable: true }, members)
    await rename(partial, file)
    return { file, manifest }
  } finally {
    await rm(partial, { force: true })
    await rm(staging, { recursive: true, force: true })
    lock?.release()
  }
}

/** The migrations applied to a Roost database; refuses one that has none (not a Roost database). */
async function appliedMigrations(opening: ReturnType<typeof openDatabase>): Promise<string[]> {
  const db = await opening
  try {
    const { migrations } = await databaseContents(db)
    if (migrations.length === 0) throw new BackupError('the database holds no Roost schema (no applied migrations): nothing to back up')
    return migrations
  } finally {
    await db.close()
  }
}

/** Every upload, one file at a time, into staging/uploads/<n>. */
async function copyUploads(config: Config, staging: string, progress: (line: string) => void): Promise<BackupUpload[]> {
  const storage = createStorage(config)
  await storage.check()
  const dir = path.join(staging, UPLOADS_DIRECTORY)
  await mkdir(dir)
  const files: BackupUpload[] = []
  for await (const key of storage.keys()) {
    const stored = await storage.get(key)
    if (!stored) continue // deleted since it was listed
    const member = `${UPLOADS_DIRECTORY}/${files.length + 1}`
    await writeFile(path.join(staging, member), stored.data)
    files.push({ key, contentType: stored.contentType, size: stored.data.length, sha256: createHash('sha256').update(stored.data).digest('hex'), file: member })
    if (files.length % 1000 === 0) progress(`uploads: ${files.length}…`)
  }
  progress(`uploads: ${files.length} file${files.length === 1 ? '' : 's'}`)
  return files
}
