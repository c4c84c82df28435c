// The manifest of a Roost backup archive (manifest.json at its root): which
// release wrote it, the migrations its database had, and what it holds.
// Read back by restore, which refuses an archive it cannot use.

export const BACKUP_FORMAT = 'roost-backup'
export const BACKUP_FORMAT_VERSION = 1

/** The archive's members: the manifest, one database, and the uploads as numbered files. */
export const MANIFEST_FILE = 'manifest.json'
export const POSTGRES_DUMP_FILE = 'database.dump'
export const PGLITE_DIRECTORY = 'pglite'
export const UPLOADS_DIRECTORY = 'uploads'

export interface BackupUpload {
  /** The storage key (as FileStorage names it). */
  key: string
  contentType: string
  size: number
  sha256: string
  /** Its member in the archive: uploads/<n>. */
  file: string
}

export interface BackupManifest {
  format: typeof BACKUP_FORMAT
  formatVersion: typeof BACKUP_FORMAT_VERSION
  roostVersion: string
  createdAt: string
  /** PostgreSQL: a pg_dump custom-format file; embedded: a copy of the PGlite data directory (DATA_DIR/db). */
  database: { kind: 'postgresql'; file: typeof POSTGRES_DUMP_FILE; pgDumpVersion: number } | { kind: 'embedded'; directory: typeof PGLITE_DIRECTORY }
  /** The migrations applied to the database, by name. */
  migrations: string[]
  uploads: { storage: 'local' | 's3'; count: number; bytes: number; files: BackupUpload[] }
}

export class BackupFormatError extends Error {
  override name = 'BackupFormatError'
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value)
const isString = (value: unknown): value is string => typeof value === 'string'
const isCount = (value: unknown): value is number => typeof value === 'number' && Number.isSafeInteger(value) && value >= 0

/** The manifest in `text`, or a BackupFormatError naming what is wrong. */
export function parseManifest(text: string): BackupManifest {
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch {
    throw new BackupFormatError(`${MANIFEST_FILE} is not JSON`)
  }
  const bad = (what: string): never => {
    throw new BackupFormatError(`${MANIFEST_FILE}: ${what}`)
  }
  if (!isObject(value) || value.format !== BACKUP_FORMAT) return bad(`not a Roost backup (format is not '${BACKUP_FORMAT}')`)
  if (value.formatVersion !== BACKUP_FORMAT_VERSION) return bad(`format version ${String(value.formatVersion)} is not ${BACKUP_FORMAT_VERSION}: restore it with the Roost release that wrote it (${String(value.roostVersion)}) or a newer one`)
  if (!isString(value.roostVersion) || !isString(value.createdAt)) return bad('roostVersion and createdAt must be strings')
  const database = value.database
  if (!isObject(database)) return bad('database is missing')
  if (database.kind === 'postgresql') {
    if (database.file !== POSTGRES_DUMP_FILE || !isCount(database.pgDumpVersion)) return bad(`database: a PostgreSQL backup names ${POSTGRES_DUMP_FILE} and pgDumpVersion`)
  } else if (database.kind === 'embedded') {
    if (database.directory !== PGLITE_DIRECTORY) return bad(`database: an embedded backup names the directory ${PGLITE_DIRECTORY}`)
  } else {
    return bad("database.kind must be 'postgresql' or 'embedded'")
  }
  if (!Array.isArray(value.migrations) || !value.migrations.every(isString) || value.migrations.length === 0) return bad('migrations must be a non-empty list of names')
  const uploads = value.uploads
  if (!isObject(uploads) || (uploads.storage !== 'local' && uploads.storage !== 's3') || !isCount(uploads.count) || !isCount(uploads.bytes) || !Array.isArray(uploads.files)) {
    return bad('uploads must give storage, count, bytes and files')
  }
  const files = uploads.files as unknown[]
  files.forEach((file, i) => {
    if (!isObject(file) || !isString(file.key) || file.key === '' || !isString(file.contentType) || !isCount(file.size) || !isString(file.sha256) || !/^[0-9a-f]{64}$/.test(file.sha256) || file.file !== `${UPLOADS_DIRECTORY}/${i + 1}`) {
      bad(`uploads.files[${i}] must give key, contentType, size, sha256 and file '${UPLOADS_DIRECTORY}/${i + 1}'`)
    }
  })
  if (files.length !== uploads.count) return bad(`uploads.count is ${uploads.count} but ${files.length} files are listed`)
  return value as unknown as BackupManifest
}
