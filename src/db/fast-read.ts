// Reads on the hottest paths (a presence ping, GET /users/me), sent through
// the pg driver as named prepared statements instead of Prisma. Measured on
// PostgreSQL here (client CPU per one-row query, sequential, 3,000 each):
// Prisma's ORM findUnique 953 µs, $queryRaw 421 µs, pg pool.query 117 µs,
// a named prepared statement 91 µs. A statement is parsed and planned once
// per pooled connection, then only bound and executed.
//
// A transaction client is never registered: its reads stay in the
// transaction. Only for columns whose pg and Prisma
// decodings agree (int4, int4[], bool, text, timestamptz, json/jsonb; not
// int8 or numeric: the message and send statements rely on the former, and
// their tests pass on both drivers). On PGlite, and when
// the adapter is wrapped (tests counting statements), the same SQL goes
// through Prisma's $queryRawUnsafe, so counts and the embedded mode are
// unchanged.
import { createHash } from 'node:crypto'
import type pg from 'pg'
// From the generated client, not ./index.js, which exports this module's importers (client.ts).
import type { Prisma, PrismaClient } from './generated/client.js'

type Tx = Prisma.TransactionClient

const pools = new WeakMap<object, pg.Pool>()

/** Called by openDatabase for an unwrapped PostgreSQL client. */
export function registerFastReads(prisma: object, pool: pg.Pool): void {
  pools.set(prisma, pool)
}

/**
 * Runs `text` ($1, $2… placeholders) with `values`. `name` identifies the
 * prepared statement: one name per SQL text, unique in the code base.
 */
export async function fastRead<T>(prisma: PrismaClient | Tx, name: string, text: string, values: Array<string | number | boolean>): Promise<T[]> {
  const pool = pools.get(prisma)
  if (!pool) return prisma.$queryRawUnsafe<T[]>(text, ...values)
  const result = await pool.query({ name, text, values })
  return result.rows as T[]
}

/**
 * A statement built with Prisma.sql (its text varies, e.g. with a narrow's
 * terms) sent as an unnamed statement on the same pool: no Prisma query
 * compilation, no prepared statement per shape. Same fall-backs as fastRead.
 * A statement whose text never varies (only its values do) may pass `name`:
 * it is then prepared once per pooled connection, as fastRead's are, and
 * PostgreSQL stops parsing it, and planning it once a generic plan serves.
 * Values must decode alike through both drivers (see above); JS arrays are
 * encoded by each driver.
 */
export async function fastQuery<T>(prisma: PrismaClient | Tx, sql: Prisma.Sql, name?: string): Promise<T[]> {
  const pool = pools.get(prisma)
  if (!pool) return prisma.$queryRaw<T[]>(sql)
  if (name === undefined) return (await pool.query({ text: sql.text, values: sql.values as unknown[] })).rows as T[]
  try {
    return (await pool.query({ name, text: sql.text, values: sql.values as unknown[] })).rows as T[]
  } catch (error) {
    // A migration changed a table the statement returns whole (a rolling upgrade):
    // PostgreSQL refuses the prepared plan ("cached plan must not change result
    // type") on that connection; the unnamed statement still runs.
    if ((error as { code?: unknown }).code !== '0A000') throw error
    return (await pool.query({ text: sql.text, values: sql.values as unknown[] })).rows as T[]
  }
}

/** Distinct statement texts statementName names; past it, texts run unnamed. */
export const MAX_NAMED_SHAPES = 200
const shapeNames = new Map<string, string>()

/**
 * A prepared statement's name for a text that varies with its input's shape
 * (a narrow's terms) but not with its values: `<kind>:<hash of the text>`,
 * so each shape is parsed once per pooled connection and PostgreSQL may keep
 * a generic plan for it, instead of parsing and planning every request. Only
 * the first MAX_NAMED_SHAPES texts get a name (each connection keeps every
 * statement it prepared); any later one gets undefined and runs unnamed.
 */
export function statementName(kind: string, text: string): string | undefined {
  const known = shapeNames.get(text)
  if (known !== undefined || shapeNames.size >= MAX_NAMED_SHAPES) return known
  const name = `${kind}:${createHash('sha1').update(text).digest('hex').slice(0, 24)}`
  shapeNames.set(text, name)
  return name
}
