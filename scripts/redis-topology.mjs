#!/usr/bin/env node
// Starts a private Redis topology for a test phase (scripts/test.mjs) from the
// compiled test support (dist/test/support/redis-topology.js), prints the
// environment that points the tests at it as one JSON line, and tears it down
// when its standard input closes or it receives SIGTERM/SIGINT.
//   node scripts/redis-topology.mjs sentinel|cluster
import path from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const kind = process.argv[2]
const support = await import(pathToFileURL(path.join(root, 'dist/test/support/redis-topology.js')).href)
const teardowns = []
const t = { teardown: (fn) => teardowns.push(fn) }

let stopping = false
async function stop(code = 0) {
  if (stopping) return
  stopping = true
  for (const fn of teardowns.reverse()) await fn()
  process.exit(code)
}
for (const signal of ['SIGTERM', 'SIGINT']) process.on(signal, () => stop())
process.stdin.on('end', () => stop())
process.stdin.on('close', () => stop())
process.stdin.resume()

try {
  if (kind === 'sentinel') {
    // No relay in front of the master: the cluster suite never holds
    // replication, and relies on Redis's order across connections.
    const s = await support.startRedisSentinel(t, { holdable: false })
    console.log(JSON.stringify({ ROOST_TEST_REDIS_SENTINELS: s.env, ROOST_TEST_REDIS_SENTINEL_MASTER: s.masterName }))
  } else if (kind === 'cluster') {
    const c = await support.startRedisCluster(t)
    console.log(JSON.stringify({ ROOST_TEST_REDIS_CLUSTER_NODES: c.env }))
  } else {
    console.error(`redis-topology: unknown topology '${kind}' (sentinel, cluster)`)
    process.exit(2)
  }
} catch (error) {
  console.error(`redis-topology: ${error instanceof Error ? error.message : String(error)}`)
  await stop(1)
}
