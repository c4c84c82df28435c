// Reading the rows of an export (zulip-bundle.ts) with a check on every value
// the import uses: a wrong type, or a reference to a user, channel, message or
// group the export does not hold, stops the import with a message naming the
// table, the row and the field.
import type { Row } from '../export/zulip-format.js'

/** A problem with the data of an export; the message names it. */
export class ImportDataError extends Error {
  override name = 'ImportDataError'
}

const label = (table: string, row: Row): string => `${table} row ${typeof row.id === 'number' ? `id ${row.id}` : JSON.stringify(row).slice(0, 60)}`

export function int(table: string, row: Row, key: string): number {
  const value = row[key]
  if (typeof value !== 'number' || !Number.isSafeInteger(value)) throw new ImportDataError(`${label(table, row)}: '${key}' is not an integer`)
  return value
}

export function optInt(table: string, row: Row, key: string): number | null {
  return row[key] === undefined || row[key] === null ? null : int(table, row, key)
}

export function str(table: string, row: Row, key: string, fallback?: string, max?: number): string {
  const value = row[key]
  if (typeof value === 'string') {
    if (max !== undefined && value.length > max && [...value].length > max) throw new ImportDataError(`${label(table, row)}: '${key}' is longer than ${max} characters`)
    return value
  }
  if ((value === undefined || value === null) && fallback !== undefined) return fallback
  throw new ImportDataError(`${label(table, row)}: '${key}' is not a string`)
}

export function bool(table: string, row: Row, key: string, fallback: boolean): boolean {
  const value = row[key]
  if (value === undefined || value === null) return fallback
  if (typeof value !== 'boolean') throw new ImportDataError(`${label(table, row)}: '${key}' is not true or false`)
  return value
}

/** Upstream's float UNIX seconds as a Date. */
export function date(table: string, row: Row, key: string, fallback: Date): Date {
  const value = row[key]
  if (value === undefined || value === null) return fallback
  if (typeof value !== 'number' || !Number.isFinite(value)) throw new ImportDataError(`${label(table, row)}: '${key}' is not a timestamp`)
  return new Date(Math.round(value * 1000))
}

export function optDate(table: string, row: Row, key: string): Date | null {
  return row[key] === undefined || row[key] === null ? null : date(table, row, key, new Date(0))
}

/** Old IDs of one kind → new IDs. */
export class IdMap {
  private readonly map = new Map<number, number>()
  constructor(readonly what: string) {}
  set(oldId: number, newId: number): void {
    this.map.set(oldId, newId)
  }
  has(oldId: number): boolean {
    return this.map.has(oldId)
  }
  get size(): number {
    return this.map.size
  }
  /** The new ID for `row[key]`, or an error naming the dangling reference. */
  need(table: string, row: Row, key: string): number {
    const oldId = int(table, row, key)
    const newId = this.map.get(oldId)
    if (newId === undefined) throw new ImportDataError(`${label(table, row)}: '${key}' is ${oldId}, which is no ${this.what} of the export`)
    return newId
  }
  /** Like need(), null when the field is null or absent. */
  opt(table: string, row: Row, key: string): number | null {
    return row[key] === undefined || row[key] === null ? null : this.need(table, row, key)
  }
  /** The new ID, or undefined (no error): for references the import may drop. */
  lookup(oldId: number): number | undefined {
    return this.map.get(oldId)
  }
}

/** The IDs every row of `rows` has, checked to be integers and unique. */
export function rowIds(table: string, rows: Row[], key = 'id'): number[] {
  const seen = new Set<number>()
  return rows.map((row) => {
    const id = int(table, row, key)
    if (seen.has(id)) throw new ImportDataError(`${table}: the id ${id} appears twice`)
    seen.add(id)
    return id
  })
}

/**
 * Rewrites the old IDs in a message's rendered HTML (user, group and channel
 * mentions, channel links) and the paths of its uploads, as upstream's
 * import does, so the HTML stays true without rendering again.
 */
export function rewriteRendered(
  html: string,
  maps: { users: IdMap; groups: IdMap; streams: IdMap },
  paths: Map<string, string>,
): string {
  let out = html
    .replace(/data-user-id="(\d+)"/g, (whole, id: string) => {
      const mapped = maps.users.lookup(Number(id))
      return mapped === undefined ? whole : `data-user-id="${mapped}"`
    })
    .replace(/data-user-group-id="(\d+)"/g, (whole, id: string) => {
      const mapped = maps.groups.lookup(Number(id))
      return mapped === undefined ? whole : `data-user-group-id="${mapped}"`
    })
    .replace(/data-stream-id="(\d+)"/g, (whole, id: string) => {
      const mapped = maps.streams.lookup(Number(id))
      return mapped === undefined ? whole : `data-stream-id="${mapped}"`
    })
    .replace(/#narrow\/(channel|stream)\/(\d+)-/g, (whole, kind: string, id: string) => {
      const mapped = maps.streams.lookup(Number(id))
      return mapped === undefined ? whole : `#narrow/${kind}/${mapped}-`
    })
  out = rewriteUploadPaths(out, paths)
  return out
}

/** Replaces `/user_uploads/<old path>` with the new path of each upload. */
export function rewriteUploadPaths(text: string, paths: Map<string, string>): string {
  if (paths.size === 0 || !text.includes('/user_uploads/')) return text
  return text.replace(/\/user_uploads\/([^\s)"'<>\]]+)/g, (whole, path: string) => {
    const mapped = paths.get(path)
    return mapped === undefined ? whole : `/user_uploads/${mapped}`
  })
}
