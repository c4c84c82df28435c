#!/usr/bin/env node
// Makes sure the PostgreSQL database named by a URL exists, creating it when
// missing. With --fresh, a database whose name starts with "roost_test",
// "roost_bench" or "roost_redis_bench" is dropped and created again, so every run starts from an
// empty schema (migrations are applied by the tests themselves).
//
//   node scripts/ensure-test-db.mjs [--fresh] [postgresql://…/roost_test]
//
// The URL defaults to ROOST_TEST_DATABASE_URL, then to the local test server.
import pg from 'pg'

const DEFAULT_URL = 'postgresql://postgres@127.0.0.1:5432/roost_test'

const args = process.argv.slice(2)
const fresh = args.includes('--fresh')
const target = args.find((a) => !a.startsWith('--')) ?? process.env.ROOST_TEST_DATABASE_URL ?? DEFAULT_URL

const url = new URL(target)
const name = decodeURIComponent(url.pathname.replace(/^\//, ''))
if (!/^[A-Za-z0-9_]+$/.test(name)) {
  console.error(`ensure-test-db: refusing database name '${name}' (letters, digits and _ only)`)
  process.exit(2)
}

// Connect to the server's maintenance database to create or drop the target.
const admin = new URL(url)
admin.pathname = '/postgres'
const client = new pg.Client({ connectionString: admin.toString(), connectionTimeoutMillis: 10_000 })
await client.connect()
try {
  const disposable = /^roost_(test|bench|redis_bench)/.test(name)
  if (fresh && disposable) {
    await client.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`)
  }
  const { rowCount } = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name])
  if (rowCount === 0) {
    await client.query(`CREATE DATABASE "${name}"`)
    console.log(`ensure-test-db: created database ${name}`)
  } else {
    console.log(`ensure-test-db: database ${name} exists`)
  }
} finally {
  await client.end()
}
