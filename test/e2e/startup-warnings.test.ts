// The server warns at startup when its configuration starts but can lose
// data: Redis (a cluster of nodes) with uploads on the node's own disk. The
// real server process is started and its log read as an operator reads it.
import t from 'tap'
import { loadConfig } from '../../src/config.js'
import { startupWarnings } from '../../src/startup-warnings.js'
import { TEST_REDIS_URL } from '../support/config.js'
import { startServer } from './start-server.js'

t.setTimeout(180_000)

const S3 = { S3_ENDPOINT: 'https://s3.example.com', S3_BUCKET: 'uploads', S3_REGION: 'eu-west-1', S3_ACCESS_KEY_ID: 'id', S3_SECRET_ACCESS_KEY: 'secret' }
const UPLOADS_WARNING = /^uploads are stored on this node's disk \(.+\/uploads\) although Redis makes it one node of a cluster: a file uploaded through one node is missing on the others unless that directory is a volume every node shares; set S3_\* for shared storage$/

t.test('only Redis with local uploads is warned about', async (t) => {
  t.same(startupWarnings(loadConfig({ DATA_DIR: '/srv/roost' })), [], 'one node, local uploads')
  t.same(startupWarnings(loadConfig({ DATA_DIR: '/srv/roost', REDIS_URL: 'redis://redis:6379', ...S3 })), [], 'a cluster with S3')
  const warnings = startupWarnings(loadConfig({ DATA_DIR: '/srv/roost', REDIS_CLUSTER_NODES: 'redis-0:6379' }))
  t.equal(warnings.length, 1)
  t.match(warnings[0], UPLOADS_WARNING)
  t.match(warnings[0], '(/srv/roost/uploads)')
  t.same(startupWarnings(loadConfig({ DATA_DIR: '/srv/roost', REDIS_SENTINELS: 's:26379', REDIS_SENTINEL_MASTER: 'm' })), warnings, 'Sentinels as well')
})

t.test('the server logs the warning at warn level when it starts with Redis and local uploads', async (t) => {
  const server = await startServer({ env: { REDIS_URL: TEST_REDIS_URL } })
  t.teardown(() => server.stop())
  const lines = server
    .output()
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as { level: number; msg: string })
  const warning = lines.find((line) => UPLOADS_WARNING.test(line.msg))
  t.ok(warning, `the warning is logged; output:\n${server.output()}`)
  t.equal(warning?.level, 40, 'at pino’s warn level')
  t.match(warning?.msg, `(${server.dataDir}/uploads)`)
})

t.test('a single node with local uploads starts without the warning', async (t) => {
  const server = await startServer()
  t.teardown(() => server.stop())
  t.notMatch(server.output(), 'uploads are stored on this node')
  t.match(server.output(), /roost: serving /, 'and it does start')
})
