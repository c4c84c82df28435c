// Writes to user and realm rows made through this process's Prisma client,
// reported to in-process watchers (the authentication caches) when they
// start and when they can no longer be uncommitted: see auth-cache.ts for why.
//
// How a write is recognised, all inside src/db:
// * A Prisma query extension sees every operation on the User, Realm,
//   Stream and UserSettings models (inside interactive transactions too,
//   whose client inherits the extension). Updates and deletes of
//   user_settings rows report their user (the cache holds presence_enabled),
//   by `where.userId`. Updates and deletes of users and realms name the rows
//   they touch when `where` selects by id (`id: n`, `id: { in: [...] }`);
//   any other filter reports "all rows" of that table. Deleting users or
//   streams can null foreign keys of other users and realms (ON DELETE SET
//   NULL), so those report all rows of both tables. Creates report nothing:
//   nothing is cached for a row that does not exist yet.
// * `$executeRaw` / `$executeRawUnsafe` whose SQL updates user_profile,
//   realm or user_settings, or deletes from them or from stream, report all
//   rows.
// * `$transaction` is wrapped (a Proxy over the extended client) and numbered
//   as it starts. A write cannot be undone or committed later than the end
//   of its transaction, so it is reported as settled once every transaction
//   that had started when its statement returned has ended (without telling
//   which transaction a statement belongs to: AsyncLocalStorage would, but on
//   Node 20 it puts a hook on every promise of the process). A write while no
//   transaction is open settles when its statement returns.
import type { PrismaClient } from './generated/client.js'

export type RowTable = 'user' | 'realm'

/** One row (`id`) or every row (`'all'`) of a table. */
export interface RowChange {
  table: RowTable
  id: number | 'all'
}

export interface LocalWriteWatcher {
  /** A statement that may change these rows is about to run. */
  writeStarted(changes: readonly RowChange[]): void
  /** Its transaction has ended (committed or not): reads from now on see the outcome. */
  writeSettled(changes: readonly RowChange[]): void
}

/** The in-process watchers of one Database and the transactions open on its client. */
export class LocalWrites {
  private readonly watchers = new Set<LocalWriteWatcher>()
  /** Sequence number of the next transaction. */
  private nextSeq = 0
  private readonly open = new Set<number>()
  /** Writes that settle once every transaction numbered up to `until` has ended. */
  private pending: { changes: RowChange[]; until: number }[] = []

  watch(watcher: LocalWriteWatcher): () => void {
    this.watchers.add(watcher)
    return () => {
      this.watchers.delete(watcher)
    }
  }

  /** Runs one statement that may write the given rows, reporting it to the watchers. */
  async track<T>(changes: RowChange[], run: () => Promise<T>): Promise<T> {
    if (changes.length === 0) return run()
    this.started(changes)
    try {
      return await run()
    } finally {
      if (this.open.size === 0) this.settled(changes)
      else this.pending.push({ changes, until: this.nextSeq - 1 })
    }
  }

  /** Runs a transaction; the writes waiting for it settle when it ends. */
  async inScope<T>(run: () => Promise<T>): Promise<T> {
    const seq = this.nextSeq++
    this.open.add(seq)
    try {
      return await run()
    } finally {
      this.open.delete(seq)
      this.settlePending()
    }
  }

  private settlePending(): void {
    if (this.pending.length === 0) return
    let oldestOpen = Infinity
    for (const seq of this.open) if (seq < oldestOpen) oldestOpen = seq
    const ready = this.pending.filter((p) => p.until < oldestOpen)
    if (ready.length === 0) return
    this.pending = this.pending.filter((p) => p.until >= oldestOpen)
    for (const { changes } of ready) this.settled(changes)
  }

  private started(changes: readonly RowChange[]): void {
    for (const watcher of this.watchers) watcher.writeStarted(changes)
  }

  private settled(changes: readonly RowChange[]): void {
    for (const watcher of this.watchers) watcher.writeSettled(changes)
  }
}

const ALL_ROWS: RowChange[] = [
  { table: 'user', id: 'all' },
  { table: 'realm', id: 'all' },
]

const UPDATES = new Set(['update', 'updateMany', 'updateManyAndReturn', 'upsert'])
const DELETES = new Set(['delete', 'deleteMany'])

/** The rows an operation on a model may change (empty for reads and creates). */
export function changesOfModelOperation(model: string | undefined, operation: string, args: unknown): RowChange[] {
  const isUpdate = UPDATES.has(operation)
  const isDelete = DELETES.has(operation)
  if (!isUpdate && !isDelete) return []
  if (model === 'Stream') return isDelete ? ALL_ROWS : []
  if (model === 'User' && isDelete) return ALL_ROWS
  const rows = model === undefined ? undefined : ROWS_OF_MODEL.get(model)
  if (rows === undefined) return []
  const ids = idsOfWhere(args, rows.key)
  return ids === undefined ? [{ table: rows.table, id: 'all' }] : ids.map((id) => ({ table: rows.table, id }))
}

/**
 * The cached rows a model's rows stand for, and the `where` field naming
 * them. The authentication cache holds each user's presence_enabled, so a
 * user_settings row stands for its user.
 */
const ROWS_OF_MODEL = new Map<string, { table: RowTable; key: string }>([
  ['User', { table: 'user', key: 'id' }],
  ['Realm', { table: 'realm', key: 'id' }],
  ['UserSettings', { table: 'user', key: 'userId' }],
])

/** The ids a `where` selects by, when it selects through `key` only; undefined otherwise. */
function idsOfWhere(args: unknown, key: string): number[] | undefined {
  const where = field(args, 'where')
  const id = field(where, key)
  if (typeof id === 'number') return [id]
  const list = field(id, 'in') ?? field(id, 'equals')
  if (typeof list === 'number') return [list]
  if (Array.isArray(list) && list.every((v): v is number => typeof v === 'number')) return list
  return undefined
}

function field(value: unknown, name: string): unknown {
  return typeof value === 'object' && value !== null ? (value as Record<string, unknown>)[name] : undefined
}

const TABLE = String.raw`"?(?:public"?\."?)?`
const RAW_ROW_WRITE = new RegExp(
  String.raw`\bupdate\s+(?:only\s+)?${TABLE}(?:user_profile|realm|user_settings)\b|\bdelete\s+from\s+(?:only\s+)?${TABLE}(?:user_profile|realm|stream|user_settings)\b`,
  'i',
)

/** The rows a raw statement may change: all of them when it updates or deletes from those tables. */
export function changesOfRawSql(sql: string): RowChange[] {
  return RAW_ROW_WRITE.test(sql) ? ALL_ROWS : []
}

function rawSqlText(args: unknown): string {
  if (Array.isArray(args)) return typeof args[0] === 'string' ? args[0] : ''
  const strings = field(args, 'strings')
  return Array.isArray(strings) ? strings.join(' ') : ''
}

/**
 * The client with write tracking. The query extension does not change any
 * model's types, so the extended client is presented as the PrismaClient it
 * wraps: this is the one place that bridges the two types.
 */
export function trackRowWrites(client: PrismaClient, writes: LocalWrites): PrismaClient {
  const onModel = ({ model, operation, args, query }: { model?: string; operation: string; args: unknown; query: (args: never) => Promise<unknown> }) =>
    writes.track(changesOfModelOperation(model, operation, args), () => query(args as never))
  const onRaw = ({ args, query }: { args: unknown; query: (args: never) => Promise<unknown> }) =>
    writes.track(changesOfRawSql(rawSqlText(args)), () => query(args as never))
  const extended = client.$extends({
    name: 'roost-row-writes',
    query: {
      user: { $allOperations: onModel },
      realm: { $allOperations: onModel },
      stream: { $allOperations: onModel },
      userSettings: { $allOperations: onModel },
      $executeRaw: onRaw,
      $executeRawUnsafe: onRaw,
    },
  }) as unknown as PrismaClient
  const transaction = (...args: unknown[]): Promise<unknown> =>
    writes.inScope(() => (extended.$transaction as (...a: unknown[]) => Promise<unknown>)(...args))
  return new Proxy(extended, {
    get(target, property) {
      if (property === '$transaction') return transaction
      return Reflect.get(target, property) as unknown
    },
  })
}
