// The test configuration and the databases the tests use. Kept apart from
// app.ts: scripts/test.mjs runs a file again on PostgreSQL only when it
// imports app.ts (i.e. builds apps over the shared test database).
import { loadConfig, type Config } from '../../src/config.js'

/** PostgreSQL when ROOST_TEST_DATABASE_URL is set (the CI's second pass), else in-memory PGlite. */
export const TEST_DATABASE_URL = process.env.ROOST_TEST_DATABASE_URL || undefined
export const TEST_REDIS_URL = process.env.ROOST_TEST_REDIS_URL || 'redis://127.0.0.1:6379'

/**
 * The Redis of the tests' Redis-backed apps (buildTestApp with bus 'redis'),
 * read as Roost reads REDIS_*: ROOST_TEST_REDIS_URL by default, a Redis
 * Cluster with ROOST_TEST_REDIS_CLUSTER_NODES, Sentinel with
 * ROOST_TEST_REDIS_SENTINELS and ROOST_TEST_REDIS_SENTINEL_MASTER
 * (scripts/test.mjs sets them for the cluster suite on those topologies).
 */
export function testRedisSettings(): Pick<Config, 'redisUrl' | 'redisClusterNodes' | 'redisSentinel'> {
  const env = process.env
  const other = Boolean(env.ROOST_TEST_REDIS_CLUSTER_NODES || env.ROOST_TEST_REDIS_SENTINELS)
  const { redisUrl, redisClusterNodes, redisSentinel } = loadConfig({
    REDIS_URL: other ? undefined : TEST_REDIS_URL,
    REDIS_CLUSTER_NODES: env.ROOST_TEST_REDIS_CLUSTER_NODES,
    REDIS_SENTINELS: env.ROOST_TEST_REDIS_SENTINELS,
    REDIS_SENTINEL_MASTER: env.ROOST_TEST_REDIS_SENTINEL_MASTER,
  })
  return { redisUrl, redisClusterNodes, redisSentinel }
}

/**
 * The tests' protocol peers (test/support/*-peer.ts) listen on loopback at
 * random ports: the test configuration lets outbound requests reach
 * 127.0.0.1 (OUTBOUND_ALLOW), as a deployment lets its internal gateway.
 * Tests of the outbound policy itself pass `outboundAllow: []` or their own.
 */
export const TEST_OUTBOUND_ALLOW = '127.0.0.1'

export function testConfig(overrides: Partial<Config> = {}): Config {
  // Admission control off: tests send bursts of concurrent requests on a shared machine (test/http/admission.test.ts turns it on).
  const env = { EXTERNAL_URL: 'http://localhost:9991', RATE_LIMITING: 'off', OUTBOUND_ALLOW: TEST_OUTBOUND_ALLOW, ADMISSION_MAX_IN_FLIGHT: '0', ADMISSION_MAX_EVENT_LOOP_DELAY_MS: '0', ADMISSION_MAX_HEAP_USED_MIB: '0' }
  return { ...loadConfig(env), databaseUrl: TEST_DATABASE_URL, ...overrides }
}
