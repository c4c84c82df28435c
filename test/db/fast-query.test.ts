// fastQuery's named statements (db/fast-read.ts): the same text runs again
// with other values, and a statement that returns a table's rows whole still
// answers after a migration adds a column to that table while the node runs
// (a rolling upgrade: PostgreSQL refuses the prepared plan with 0A000, and
// fastQuery runs the statement unnamed). On PGlite the statements go through
// Prisma, so the same assertions hold there too.
import t from 'tap'
import { randomUUID } from 'node:crypto'
import { Prisma } from '../../src/db/index.js'
import { fastQuery } from '../../src/db/fast-read.js'
import { buildTestApp } from '../support/app.js'

t.test('a named statement: other values, then a table changed under it', async (t) => {
  const { services } = await buildTestApp(t)
  const prisma = services.prisma
  const table = `fast_query_${randomUUID().replaceAll('-', '')}`
  await prisma.$executeRawUnsafe(`CREATE TABLE ${table} (id int PRIMARY KEY, label text NOT NULL)`)
  t.teardown(async () => {
    await prisma.$executeRawUnsafe(`DROP TABLE IF EXISTS ${table}`)
  })
  await prisma.$executeRawUnsafe(`INSERT INTO ${table} VALUES (1, 'one'), (2, 'two')`)
  const name = `test_${table}`
  const read = (id: number) => fastQuery<Record<string, unknown>>(prisma, Prisma.sql`SELECT * FROM ${Prisma.raw(table)} WHERE id = ${id}`, name)

  t.strictSame(await read(1), [{ id: 1, label: 'one' }])
  t.strictSame(await read(2), [{ id: 2, label: 'two' }], 'the same statement with another value')
  t.strictSame(await read(3), [], 'no row')

  await prisma.$executeRawUnsafe(`ALTER TABLE ${table} ADD COLUMN extra int NOT NULL DEFAULT 7`)
  t.strictSame(await read(1), [{ id: 1, label: 'one', extra: 7 }], 'the new shape, after the column was added')
  t.strictSame(await read(2), [{ id: 2, label: 'two', extra: 7 }], 'and again')
})

t.test('an error other than a changed table still fails the call', async (t) => {
  const { services } = await buildTestApp(t)
  await t.rejects(fastQuery(services.prisma, Prisma.sql`SELECT * FROM fast_query_no_such_table WHERE id = ${1}`, 'test_fast_query_missing'))
})

t.test('statementName: one name per text, the same each time, and none past the bound', async (t) => {
  const { statementName, MAX_NAMED_SHAPES } = await import('../../src/db/fast-read.js')
  const unique = randomUUID()
  const first = statementName('test', `SELECT 1 /* ${unique} a */`)
  t.match(first, /^test:[0-9a-f]{24}$/)
  t.equal(statementName('test', `SELECT 1 /* ${unique} a */`), first, 'the same text, the same name')
  t.not(statementName('test', `SELECT 1 /* ${unique} b */`), first, 'another text, another name')
  for (let i = 0; i < MAX_NAMED_SHAPES; i++) statementName('test', `SELECT ${i} /* ${unique} fill */`)
  t.equal(statementName('test', `SELECT 1 /* ${unique} new */`), undefined, 'a new text past the bound runs unnamed')
  t.equal(statementName('test', `SELECT 1 /* ${unique} a */`), first, 'a text named before keeps its name')
})
