// Redis that cannot be used as configured stops startup with an error naming
// the variable, promptly: unreachable servers, a cluster in a failed state, a
// plain server given as a cluster, Sentinels that know no such master.
import t, { type Test } from 'tap'
import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { openBackends, RedisStartupError } from '../../src/backends/index.js'
import { loadConfig } from '../../src/config.js'
import { freePort } from '../failure/processes.js'
import { SERVER_ENTRY } from '../e2e/start-server.js'
import { ROOT } from '../support/root.js'
import { startLoneClusterNode, startLoneSentinel } from '../support/redis-topology.js'
import { TEST_REDIS_URL } from '../support/config.js'

t.setTimeout(180_000)

/** The startup error of backends opened with `env`, and how long it took. */
async function startupError(env: Record<string, string>): Promise<{ error: unknown; ms: number }> {
  const started = Date.now()
  try {
    const backends = await openBackends(loadConfig(env))
    await backends.close()
    return { error: undefined, ms: Date.now() - started }
  } catch (error) {
    return { error, ms: Date.now() - started }
  }
}

async function expectStartupError(t: Test, env: Record<string, string>, message: RegExp): Promise<void> {
  const { error, ms } = await startupError(env)
  t.ok(error instanceof RedisStartupError, `a RedisStartupError (${String(error)})`)
  t.match((error as Error).message, message)
  t.ok(ms < 15_000, `within seconds (${ms} ms), not a hang`)
}

const unusedPort = async () => `127.0.0.1:${await freePort()}`

t.test('REDIS_CLUSTER_NODES naming no live node', async (t) => {
  await expectStartupError(t, { REDIS_CLUSTER_NODES: `${await unusedPort()},${await unusedPort()}` }, /^REDIS_CLUSTER_NODES: no node of the Redis Cluster answers \(127\.0\.0\.1:\d+: .*ECONNREFUSED/)
})

t.test('REDIS_CLUSTER_NODES naming a cluster in a failed state', async (t) => {
  const lone = await startLoneClusterNode(t)
  await expectStartupError(t, { REDIS_CLUSTER_NODES: `127.0.0.1:${lone.port}` }, /^REDIS_CLUSTER_NODES: the Redis Cluster at 127\.0\.0\.1:\d+ is in state 'fail' \(0 of 16384 slots served\)/)
})

t.test('REDIS_CLUSTER_NODES naming a server that is not a cluster node', async (t) => {
  const { hostname, port } = new URL(TEST_REDIS_URL)
  await expectStartupError(t, { REDIS_CLUSTER_NODES: `${hostname}:${port || 6379}` }, /^REDIS_CLUSTER_NODES: .* is not a Redis Cluster node \(cluster support disabled\); use REDIS_URL/)
})

t.test('REDIS_SENTINELS naming no live Sentinel', async (t) => {
  await expectStartupError(t, { REDIS_SENTINELS: await unusedPort(), REDIS_SENTINEL_MASTER: 'roost-master' }, /^REDIS_SENTINELS: no Sentinel answers \(127\.0\.0\.1:\d+: connect ECONNREFUSED/)
})

t.test('REDIS_SENTINEL_MASTER that the Sentinels do not know', async (t) => {
  const sentinel = await startLoneSentinel(t)
  await expectStartupError(t, { REDIS_SENTINELS: `127.0.0.1:${sentinel.port}`, REDIS_SENTINEL_MASTER: 'nope' }, /^REDIS_SENTINEL_MASTER: no Sentinel at 127\.0\.0\.1:\d+ knows a master named 'nope'/)
})

t.test('REDIS_URL naming no live server', async (t) => {
  await expectStartupError(t, { REDIS_URL: `redis://:secret@${await unusedPort()}` }, /^REDIS_URL: cannot connect to redis:\/\/:\*\*\*@127\.0\.0\.1:\d+\/?: connect ECONNREFUSED/)
})

t.test('the server process exits with the message instead of retrying in silence', async (t) => {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'roost-topology-startup-'))
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }))
  const env: Record<string, string | undefined> = { ...process.env, PORT: String(await freePort()), DATA_DIR: dataDir, REDIS_CLUSTER_NODES: await unusedPort(), LOG_LEVEL: 'warn' }
  for (const name of ['DATABASE_URL', 'REDIS_URL', 'REDIS_SENTINELS', 'REDIS_SENTINEL_MASTER', 'EXTERNAL_URL']) delete env[name]
  const child = spawn(process.execPath, [SERVER_ENTRY], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] })
  let out = ''
  child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()))
  child.stderr.on('data', (chunk: Buffer) => (out += chunk.toString()))
  const code = await new Promise<number | null>((resolve) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL')
      resolve(null)
    }, 120_000)
    child.once('exit', (c) => {
      clearTimeout(timer)
      resolve(c)
    })
  })
  t.equal(code, 1, `exits with 1:\n${out}`)
  t.match(out, /^roost: REDIS_CLUSTER_NODES: no node of the Redis Cluster answers \(127\.0\.0\.1:\d+: connect ECONNREFUSED/m)
  t.notMatch(out, /at .*\.js:\d+/, 'a message, not a stack trace')
})
