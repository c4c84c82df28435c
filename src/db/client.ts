// Prisma client construction: PGlite (embedded, on disk or in memory) or
// PostgreSQL through the pg driver adapter (DESIGN.md "Prisma, offline").
//
// Besides the Prisma client, each Database keeps a way to reach the
// underlying driver for multi-statement SQL (migrations). That access stays
// inside src/db: see rawSession() below, which index.ts does not export.
import { mkdir } from 'node:fs/promises'
import path from 'node:path'
import { PGlite } from '@electric-sql/pglite'
import { PrismaPg } from '@prisma/adapter-pg'
import pg from 'pg'
import { PrismaPGlite } from 'pglite-prisma-adapter'
import { PrismaClient, type Prisma } from './generated/client.js'
import { listenPGlite, listenPGliteUserData, listenPostgres, listenPostgresUserData, type RowChangeWatcher, type RowListener, type UserDataWatcher } from './row-listener.js'
import { registerFastReads } from './fast-read.js'
import { LocalWrites, trackRowWrites, type LocalWriteWatcher } from './row-writes.js'

export interface Database {
  prisma: PrismaClient
  kind: 'pglite' | 'postgres'
  /** The pg connection pool (PostgreSQL only; the pool-use metrics read it). */
  pool?: pg.Pool
  /**
   * Reports changes of user and realm rows: those committed by any node
   * (LISTEN on a connection of its own, started in the background; see
   * row-listener.ts) and the writes of this process's client as they start
   * and settle (row-writes.ts). Closing the listener stops both.
   */
  watchRowChanges(watcher: RowChangeWatcher & LocalWriteWatcher, options?: { onError?: (error: unknown) => void }): RowListener
  /** Reports committed changes of per-user data (user-data-cache.ts) by any node, on a connection of its own. */
  watchUserData(watcher: UserDataWatcher, options?: { onError?: (error: unknown) => void }): RowListener
  close(): Promise<void>
}

export interface OpenDatabaseOptions {
  /** postgresql://… — selects PostgreSQL; otherwise PGlite. */
  databaseUrl?: string
  /** PGlite data lives in `${dataDir}/db`. Defaults to ./data. */
  dataDir?: string
  /** PGlite in memory (tests); ignored when databaseUrl is set. */
  inMemory?: boolean
  /** Start the in-memory PGlite from this data-directory image (see dumpPGlite) instead of an empty cluster. */
  pgliteImage?: Blob
  /** Wraps the Prisma driver adapter (tests count the statements a request runs through it). */
  wrapAdapter?: (adapter: AdapterFactory) => AdapterFactory
}

/** Thrown for a bad DATABASE_URL or an unreachable database; names the variable. */
export class DatabaseConfigError extends Error {}

export async function openDatabase(opts: OpenDatabaseOptions): Promise<Database> {
  const wrap = opts.wrapAdapter ?? ((adapter: AdapterFactory) => adapter)
  if (opts.databaseUrl !== undefined && opts.databaseUrl !== '') return openPostgres(opts.databaseUrl, wrap, opts.wrapAdapter === undefined)
  if (opts.inMemory === true) return openPGlite(undefined, wrap, opts.pgliteImage)
  return openPGlite(path.join(opts.dataDir ?? './data', 'db'), wrap)
}

/** An image of an in-memory PGlite database's data directory, for openDatabase's pgliteImage. */
export async function dumpPGlite(db: Database): Promise<Blob> {
  const driver = drivers.get(db)
  if (driver?.kind !== 'pglite') throw new Error('dumpPGlite: not a PGlite database')
  return driver.mutex.run(() => driver.pglite.dumpDataDir('none'))
}

/**
 * PGlite runs each statement on the main thread and settles it through
 * promise microtasks only, so a request issuing statement after statement
 * never let the event loop in: other requests (even /healthz) and signals
 * waited until it finished. Each statement now first waits for the next turn
 * of the event loop, so other requests are served between any two statements.
 * (Hooks PGlite's per-statement lock; test/http/limits.test.ts checks that
 * /healthz answers while a maximal request runs.)
 */
function yieldBetweenStatements(pglite: PGlite): void {
  const target = pglite as unknown as { _runExclusiveQuery?: (fn: () => Promise<unknown>) => Promise<unknown> }
  const original = target._runExclusiveQuery
  if (typeof original !== 'function') throw new Error('PGlite has no _runExclusiveQuery: update yieldBetweenStatements for this PGlite version')
  target._runExclusiveQuery = async (fn) => {
    await new Promise<void>((resolve) => setImmediate(resolve))
    return original.call(pglite, fn)
  }
}

/**
 * Interactive transactions may wait 10 s for a connection and run 30 s
 * (Prisma's defaults: 2 s and 5 s). On PGlite every statement of every
 * request queues for the one connection on the main thread, so a busy node
 * stretches a short transaction well past 5 s, and a rolled-back realm or
 * user creation under load helps no one.
 */
const TRANSACTION_OPTIONS = { maxWait: 10_000, timeout: 30_000 }

async function openPGlite(dir: string | undefined, wrap: (adapter: AdapterFactory) => AdapterFactory, image?: Blob): Promise<Database> {
  if (dir !== undefined) await mkdir(dir, { recursive: true })
  const pglite = new PGlite(dir ?? 'memory://', image ? { loadDataDir: image } : {})
  await pglite.waitReady
  yieldBetweenStatements(pglite)
  const writes = new LocalWrites()
  const prisma = trackRowWrites(new PrismaClient({ adapter: wrap(pgliteAdapter(pglite)), transactionOptions: TRANSACTION_OPTIONS }), writes)
  let closed = false
  const db: Database = {
    prisma,
    kind: 'pglite',
    watchRowChanges(watcher, options = {}) {
      const unwatch = writes.watch(watcher)
      const listener = listenPGlite(pglite, watcher, options)
      return {
        async close() {
          unwatch()
          await listener.close()
        },
      }
    },
    watchUserData(watcher, options = {}) {
      return listenPGliteUserData(pglite, watcher, options)
    },
    async close() {
      if (closed) return
      closed = true
      await prisma.$disconnect()
      await pglite.close()
    },
  }
  drivers.set(db, { kind: 'pglite', pglite, mutex: new Mutex() })
  return db
}

export type AdapterFactory = NonNullable<Prisma.PrismaClientOptions['adapter']>

// pglite-prisma-adapter 0.6 is typed against an older
// @prisma/driver-adapter-utils (6.10) than @prisma/client 6.19; the runtime
// interface is the same (the Prisma CLI uses it through prisma.config.ts),
// only the nominal types differ. This is the one place that bridges them.
function pgliteAdapter(pglite: PGlite): AdapterFactory {
  return new PrismaPGlite(pglite) as unknown as AdapterFactory
}

async function openPostgres(url: string, wrap: (adapter: AdapterFactory) => AdapterFactory, fastReads: boolean): Promise<Database> {
  checkPostgresUrl(url)
  const writes = new LocalWrites()
  // Our own pool (ended by $disconnect) so its use can be reported.
  const pool = new pg.Pool({ connectionString: url })
  const prisma = trackRowWrites(new PrismaClient({ adapter: wrap(new PrismaPg(pool, { disposeExternalPool: true })), transactionOptions: TRANSACTION_OPTIONS }), writes)
  try {
    await prisma.$queryRawUnsafe('SELECT 1')
  } catch (err) {
    await prisma.$disconnect().catch(() => {})
    throw new DatabaseConfigError(`DATABASE_URL: cannot connect to PostgreSQL at ${redact(url)}: ${errorText(err)}`)
  }
  // Hot reads may bypass Prisma (fast-read.ts), unless the adapter is wrapped to watch every statement.
  if (fastReads) registerFastReads(prisma, pool)
  let closed = false
  const db: Database = {
    prisma,
    kind: 'postgres',
    pool,
    watchRowChanges(watcher, options = {}) {
      const unwatch = writes.watch(watcher)
      const listener = listenPostgres(url, watcher, options)
      return {
        async close() {
          unwatch()
          await listener.close()
        },
      }
    },
    watchUserData(watcher, options = {}) {
      return listenPostgresUserData(url, watcher, options)
    },
    async close() {
      if (closed) return
      closed = true
      await prisma.$disconnect()
    },
  }
  drivers.set(db, { kind: 'postgres', url })
  return db
}

function checkPostgresUrl(url: string): void {
  let parsed: URL
  try {
    parsed = new URL(url)
  } catch {
    throw new DatabaseConfigError(`DATABASE_URL must be a postgresql:// URL, got '${redact(url)}'`)
  }
  if (parsed.protocol !== 'postgresql:' && parsed.protocol !== 'postgres:') {
    throw new DatabaseConfigError(`DATABASE_URL must use postgresql:// or postgres://, got '${parsed.protocol}'`)
  }
}

/** The URL without its password, for messages. */
export function redact(url: string): string {
  try {
    const parsed = new URL(url)
    if (parsed.password !== '') parsed.password = '***'
    return parsed.toString()
  } catch {
    return '<unparsable URL>'
  }
}

function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err)
}

// ---------------------------------------------------------------- raw access (src/db only)

/** A connection for raw SQL: multi-statement scripts and parameterized queries. */
export interface RawSession {
  readonly kind: Database['kind']
  /** Runs a script of one or more statements (no parameters). */
  exec(sql: string): Promise<void>
  query<Row extends Record<string, unknown>>(sql: string, params?: unknown[]): Promise<Row[]>
  /** Runs fn in BEGIN … COMMIT on this connection; rolls back when it throws. */
  transaction<T>(fn: (tx: RawSession) => Promise<T>): Promise<T>
}

type Driver =
  | { kind: 'pglite'; pglite: PGlite; mutex: Mutex }
  | { kind: 'postgres'; url: string }

const drivers = new WeakMap<Database, Driver>()

/**
 * Runs fn with a dedicated raw connection to the database. For PostgreSQL
 * this is a fresh pg.Client (so session-level advisory locks belong to it);
 * PGlite has a single connection, so callers on one Database are serialized
 * in process instead.
 */
export async function withRawSession<T>(db: Database, fn: (session: RawSession) => Promise<T>): Promise<T> {
  const driver = drivers.get(db)
  if (driver === undefined) throw new Error('withRawSession: not a Database from openDatabase()')
  if (driver.kind === 'pglite') {
    return driver.mutex.run(() => fn(pgliteSession(driver.pglite)))
  }
  const client = new pg.Client({ connectionString: driver.url })
  await client.connect()
  try {
    return await fn(pgSession(client))
  } finally {
    await client.end()
  }
}

function pgliteSession(pglite: PGlite): RawSession {
  const session: RawSession = {
    kind: 'pglite',
    async exec(sql) {
      await pglite.exec(sql)
    },
    async query<Row extends Record<string, unknown>>(sql: string, params?: unknown[]) {
      return (await pglite.query<Row>(sql, params)).rows
    },
    // PGlite's own transaction() holds its lock, so Prisma queries issued
    // meanwhile wait instead of running inside this transaction.
    transaction(fn) {
      return pglite.transaction((tx) =>
        fn({
          kind: 'pglite',
          async exec(sql) {
            await tx.exec(sql)
          },
          async query<Row extends Record<string, unknown>>(sql: string, params?: unknown[]) {
            return (await tx.query<Row>(sql, params)).rows
          },
          transaction() {
            throw new Error('nested transactions are not supported')
          },
        }),
      )
    },
  }
  return session
}

function pgSession(client: pg.Client): RawSession {
  let inTransaction = false
  const session: RawSession = {
    kind: 'postgres',
    async exec(sql) {
      await client.query(sql)
    },
    async query<Row extends Record<string, unknown>>(sql: string, params?: unknown[]) {
      return (await client.query<Row>(sql, params)).rows
    },
    async transaction(fn) {
      if (inTransaction) throw new Error('nested transactions are not supported')
      inTransaction = true
      await client.query('BEGIN')
      try {
        const result = await fn(session)
        await client.query('COMMIT')
        return result
      } catch (err) {
        await client.query('ROLLBACK').catch(() => {})
        throw err
      } finally {
        inTransaction = false
      }
    },
  }
  return session
}

/** A FIFO promise lock. */
class Mutex {
  private tail: Promise<unknown> = Promise.resolve()

  run<T>(fn: () => Promise<T>): Promise<T> {
    const result = this.tail.then(fn)
    this.tail = result.catch(() => {})
    return result
  }
}
