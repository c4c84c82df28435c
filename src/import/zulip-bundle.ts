// The files of an export in upstream's format (src/export/zulip-format.ts),
// as read from its archive: the tables of realm.json, messages-*.json and
// attachment.json merged, and the uploaded files under uploads/, avatars/ and
// emoji/ with their records. Tables Roost does not know are ignored; a
// missing required table or an oversized or malformed JSON file is refused
// with a message naming it.
import type { Row, Tables } from '../export/zulip-format.js'
import { ArchiveError } from './read-archive.js'

export const DEFAULT_MAX_JSON_BYTES = 256 * 1024 * 1024

export interface ZulipBundle {
  tables: Tables
  /** uploads/, avatars/ and emoji/ files by their path below that directory. */
  uploads: Map<string, Buffer>
  avatars: Map<string, Buffer>
  emoji: Map<string, Buffer>
  uploadRecords: Row[]
  avatarRecords: Row[]
  emojiRecords: Row[]
}

export const REQUIRED_TABLES = ['zerver_realm', 'zerver_userprofile', 'zerver_stream', 'zerver_recipient', 'zerver_subscription'] as const

function parseJson(name: string, data: Buffer, maxJsonBytes: number): unknown {
  if (data.length > maxJsonBytes) throw new ArchiveError(`${name} is larger than ${maxJsonBytes} bytes`)
  try {
    return JSON.parse(data.toString('utf8'))
  } catch (error) {
    throw new ArchiveError(`${name} is not valid JSON: ${error instanceof Error ? error.message : String(error)}`)
  }
}

function tablesOf(name: string, value: unknown): Tables {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new ArchiveError(`${name} is not an object of tables`)
  const tables: Tables = {}
  for (const [table, rows] of Object.entries(value)) {
    if (!Array.isArray(rows)) continue // upstream adds a few non-table keys; they are ignored
    if (!rows.every((r) => typeof r === 'object' && r !== null && !Array.isArray(r))) throw new ArchiveError(`${name}: the table ${table} has a row that is not an object`)
    tables[table] = rows as Row[]
  }
  return tables
}

function recordsOf(name: string, files: Map<string, Buffer>, maxJsonBytes: number): Row[] {
  const data = files.get(name)
  if (!data) return []
  const value = parseJson(name, data, maxJsonBytes)
  if (!Array.isArray(value) || !value.every((r) => typeof r === 'object' && r !== null)) throw new ArchiveError(`${name} is not a list of records`)
  return value as Row[]
}

/** The bundle in `files` (an archive's contents, at its root or in its one top-level directory). */
export function readZulipBundle(archive: Map<string, Buffer>, maxJsonBytes = DEFAULT_MAX_JSON_BYTES): ZulipBundle {
  let files = archive
  if (!archive.has('realm.json')) {
    const tops = new Set([...archive.keys()].map((k) => k.split('/')[0]))
    const top = tops.size === 1 ? [...tops][0] : undefined
    if (top === undefined || !archive.has(`${top}/realm.json`)) throw new ArchiveError('the archive has no realm.json: it is not an export in upstream’s format')
    files = new Map([...archive].filter(([k]) => k.startsWith(`${top}/`)).map(([k, v]) => [k.slice(top.length + 1), v]))
  }
  const tables = tablesOf('realm.json', parseJson('realm.json', files.get('realm.json') as Buffer, maxJsonBytes))
  for (const table of REQUIRED_TABLES) {
    if (!tables[table]) throw new ArchiveError(`realm.json has no ${table} table`)
  }
  if (tables.zerver_realm!.length !== 1) throw new ArchiveError('realm.json: zerver_realm must hold exactly one row')
  tables.zerver_message = []
  tables.zerver_usermessage = []
  const messageFiles = [...files.keys()].filter((k) => /^messages-\d+\.json$/.test(k)).sort()
  for (const name of messageFiles) {
    const part = tablesOf(name, parseJson(name, files.get(name) as Buffer, maxJsonBytes))
    tables.zerver_message.push(...(part.zerver_message ?? []))
    tables.zerver_usermessage.push(...(part.zerver_usermessage ?? []))
  }
  const attachments = files.get('attachment.json')
  tables.zerver_attachment = attachments ? (tablesOf('attachment.json', parseJson('attachment.json', attachments, maxJsonBytes)).zerver_attachment ?? []) : []
  const under = (dir: string) => new Map([...files].filter(([k]) => k.startsWith(`${dir}/`) && k !== `${dir}/records.json`).map(([k, v]) => [k.slice(dir.length + 1), v]))
  return {
    tables,
    uploads: under('uploads'),
    avatars: under('avatars'),
    emoji: under('emoji'),
    uploadRecords: recordsOf('uploads/records.json', files, maxJsonBytes),
    avatarRecords: recordsOf('avatars/records.json', files, maxJsonBytes),
    emojiRecords: recordsOf('emoji/records.json', files, maxJsonBytes),
  }
}
