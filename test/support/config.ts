// The test configuration and the databases the tests use. Kept apart from
// app.ts: scripts/test.mjs runs a file again on PostgreSQL only when it
// imports app.ts (i.e. builds apps over the shared test database).
import { loadConfig, type Config } from '../../src/config.js'

/** PostgreSQL when ROOST_TEST_DATABASE_URL is set (the CI's second pass), else in-memory PGlite. */
export const TEST_DATABASE_URL = process.env.ROOST_TEST_DATABASE_URL || undefined
export const TEST_REDIS_URL = process.env.ROOST_TEST_REDIS_URL || 'redis://127.0.0.1:6379'

export function testConfig(overrides: Partial<Config> = {}): Config {
  return { ...loadConfig({ EXTERNAL_URL: 'http://localhost:9991', RATE_LIMITING: 'off' }), databaseUrl: TEST_DATABASE_URL, ...overrides }
}
