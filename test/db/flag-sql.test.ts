// Flag masks go into SQL as literals (db/flag-sql.ts): with a parameter in
// their place, a prepared statement's generic plan cannot use the partial
// indexes on user_message, and reads every row the user has. Checked on the
// narrows that have such an index, as GET /messages builds them, with
// PostgreSQL made to plan them generically (as it does for a named statement
// after five runs).
import t from 'tap'
import { readdirSync, readFileSync } from 'node:fs'
import path from 'node:path'
import { Prisma } from '../../src/db/index.js'
import { flagMask } from '../../src/db/flag-sql.js'
import { FLAG_BITS } from '../../src/domain/flags.js'
import { compileNarrow } from '../../src/queries/narrow-sql.js'
import { buildTestApp } from '../support/app.js'
import { ROOT } from '../support/root.js'

t.test('flagMask writes the mask as a literal, never as a parameter', async (t) => {
  const sql = Prisma.sql`SELECT 1 WHERE (um.flags & ${flagMask(FLAG_BITS.read)}) = 0`
  t.equal(sql.text, 'SELECT 1 WHERE (um.flags & 1) = 0')
  t.strictSame(sql.values, [])
  t.throws(() => flagMask(-1), /not a flag mask/)
  t.throws(() => flagMask(1.5), /not a flag mask/)
  t.throws(() => flagMask(Number.NaN), /not a flag mask/)
})

// A bit operation on flags whose operand is an interpolation other than
// flagMask(…), or a bare number: in SQL the first becomes a parameter, and the
// second is a mask nobody can find by its name.
const FLAG_OPERAND = /flags\s*[&|]\s*~?\s*(?:\$\{(?!flagMask\()|\d)/

t.test('every flag mask in the SQL of src/ goes through flagMask', async (t) => {
  const offending: string[] = []
  // Prisma's generated client is not ours.
  const files = readdirSync(path.join(ROOT, 'src'), { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.ts') && !f.startsWith(`db${path.sep}generated`))
  for (const file of files) {
    const lines = readFileSync(path.join(ROOT, 'src', file), 'utf8').split('\n')
    lines.forEach((line, i) => {
      if (line.match(FLAG_OPERAND)) offending.push(`src/${file}:${i + 1}: ${line.trim()}`)
    })
  }
  t.ok(files.length > 100, `read the sources (${files.length} files)`)
  t.strictSame(offending, [])
  // The pattern itself catches what it is for.
  t.match('WHERE (um.flags & ${FLAG_BITS.read}) = 0', FLAG_OPERAND)
  t.match('SET flags = flags & ~${bit}::int', FLAG_OPERAND)
  t.match('AND (um.flags & 1) = 0', FLAG_OPERAND)
  t.notMatch('AND (um.flags & ${flagMask(FLAG_BITS.read)}) = 0', FLAG_OPERAND)
  t.notMatch('(r.flags & FLAG_BITS.read) === 0', FLAG_OPERAND)
})

/** The SQL with its $n parameters as literals (numbers here). */
function executeArguments(values: unknown[]): string {
  return values
    .map((value) => {
      if (typeof value !== 'number') throw new Error(`unexpected parameter ${String(value)}`)
      return String(value)
    })
    .join(', ')
}

const INDEXED_NARROWS: Array<{ operand: string; index: string }> = [
  { operand: 'unread', index: 'user_message_unread_idx' },
  { operand: 'starred', index: 'user_message_starred_idx' },
  { operand: 'mentioned', index: 'user_message_mentioned_idx' },
  { operand: 'alerted', index: 'user_message_has_alert_word_idx' },
]

t.test("the flag narrows' generic plans read their partial index", async (t) => {
  const { services, fx } = await buildTestApp(t)
  const viewer = fx.users.member
  for (const { operand, index } of INDEXED_NARROWS) {
    const narrow = await compileNarrow(services.prisma, viewer, [{ operator: 'is', operand, negated: false }])
    const sql = Prisma.sql`SELECT um.message_id ${narrow.from} WHERE ${narrow.where} ORDER BY um.message_id DESC LIMIT 50`
    const name = `flag_sql_${operand}`
    const plan = await services.prisma.$transaction(async (tx) => {
      await tx.$executeRawUnsafe('SET LOCAL plan_cache_mode = force_generic_plan')
      await tx.$executeRawUnsafe(`PREPARE ${name} AS ${sql.text}`)
      try {
        const rows = await tx.$queryRawUnsafe<Array<{ 'QUERY PLAN': unknown }>>(`EXPLAIN (FORMAT JSON) EXECUTE ${name}(${executeArguments(sql.values)})`)
        return JSON.stringify(rows[0]?.['QUERY PLAN'])
      } finally {
        await tx.$executeRawUnsafe(`DEALLOCATE ${name}`)
      }
    })
    t.match(plan, index, `is:${operand} reads ${index}`)
  }
})
