// A fresh PostgreSQL database for tests that need an empty one, dropped at
// teardown. Server: ROOST_TEST_PG_ADMIN_URL (default the local postgres database).
import { randomUUID } from 'node:crypto'
import pg from 'pg'

export const ADMIN_URL = process.env.ROOST_TEST_PG_ADMIN_URL || 'postgresql://postgres@127.0.0.1:5432/postgres'

export interface Teardown {
  teardown(fn: () => unknown): void
}

async function admin<T>(fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: ADMIN_URL })
  await client.connect()
  try {
    return await fn(client)
  } finally {
    await client.end()
  }
}

/** Creates a database named roost_test_<uuid> and returns its URL. */
export async function throwawayDatabase(t: Teardown): Promise<string> {
  const name = `roost_test_${randomUUID().replaceAll('-', '')}`
  await admin((c) => c.query(`CREATE DATABASE ${name}`))
  t.teardown(() => admin((c) => c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)))
  const url = new URL(ADMIN_URL)
  url.pathname = `/${name}`
  return url.toString()
}
