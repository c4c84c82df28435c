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
