// Counting the database statements a request runs (test/http/set-based.test.ts).
//
// countingDatabase() opens a database like the shared test one (in-memory
// PGlite, or PostgreSQL when ROOST_TEST_DATABASE_URL is set) whose Prisma
// driver adapter is wrapped: every statement Prisma sends through it
// (queryRaw, executeRaw, scripts) and every transaction's BEGIN and
// COMMIT/ROLLBACK is recorded in the log of the countStatements() call it
// runs under (an AsyncLocalStorage, so statements of anything else running
// meanwhile are not counted). Counting at the adapter, not per Prisma
// operation, also catches operations that Prisma splits into several
// statements (nested writes, relation loads).
import { AsyncLocalStorage } from 'node:async_hooks'
import tap from 'tap'
import { openDatabase, type AdapterFactory, type Database } from '../../src/db/client.js'
import { applyMigrations } from '../../src/db/migrate.js'
import { migratedPGlite } from './pglite-image.js'
import { TEST_DATABASE_URL } from './config.js'

const current = new AsyncLocalStorage<string[]>()

/**
 * The list of a countStatements() call made with `untracked`, for statements
 * whose async context does not lead back to it: Prisma runs some reads (those
 * of GET /messages and POST /register among them) in the context of whatever
 * scheduled its batch. Anything else the process runs meanwhile is counted
 * too, so only callers whose process does nothing else use it.
 */
let running: string[] | undefined

function record(sql: string): void {
  ;(current.getStore() ?? running)?.push(sql)
}

type Method = (...args: unknown[]) => unknown

/** `target` with the statements of its queryable methods recorded; connections and transactions it returns are wrapped too. */
function counting<T extends object>(target: T): T {
  return new Proxy(target, {
    get(obj, property) {
      const value: unknown = Reflect.get(obj, property, obj)
      if (typeof value !== 'function') return value
      const method = value as Method
      switch (property) {
        case 'queryRaw':
        case 'executeRaw':
          return (query: { sql: string }, ...rest: unknown[]) => {
            record(query.sql)
            return method.call(obj, query, ...rest)
          }
        case 'executeScript':
          return (script: string) => {
            record(script)
            return method.call(obj, script)
          }
        case 'commit':
        case 'rollback':
          return () => {
            record(property.toUpperCase())
            return method.call(obj)
          }
        case 'startTransaction':
        case 'connect':
          return async (...args: unknown[]) => {
            if (property === 'startTransaction') record('BEGIN')
            return counting((await method.apply(obj, args)) as object)
          }
        default:
          return method.bind(obj)
      }
    },
  })
}

const countingAdapter = (adapter: AdapterFactory): AdapterFactory => counting(adapter)

/** A database of this file's own whose statements countStatements() can count; closed when the file's tests end. */
export async function countingDatabase(): Promise<Database> {
  if (!TEST_DATABASE_URL) {
    const db = await migratedPGlite({ wrapAdapter: countingAdapter })
    tap.teardown(() => db.close())
    return db
  }
  const db = await openDatabase({ databaseUrl: TEST_DATABASE_URL, wrapAdapter: countingAdapter })
  await applyMigrations(db)
  tap.teardown(() => db.close())
  return db
}

/** Runs fn and returns what it returned with the SQL of every statement it ran on a countingDatabase(), in order. */
export async function countStatements<T>(fn: () => Promise<T>, options: { untracked?: boolean } = {}): Promise<{ result: T; statements: string[] }> {
  const statements: string[] = []
  if (!options.untracked) return { result: await current.run(statements, fn), statements }
  if (running) throw new Error('countStatements: one untracked count at a time')
  running = statements
  try {
    const result = await current.run(statements, fn)
    return { result, statements }
  } finally {
    running = undefined
  }
}
