// Which errors mean "a backend is unreachable" (503 SERVER_NOT_READY) rather
// than a bug (500). The shapes are those ioredis, pg and Prisma's pg driver
// adapter throw; test/failure/* produces the real ones against real processes.
import t from 'tap'
import { isBackendUnavailable } from '../src/unavailable.js'

const named = (name: string, message: string) => Object.assign(new Error(message), { name })

const UNAVAILABLE: [string, unknown][] = [
  ['ioredis giving up a command', named('MaxRetriesPerRequestError', 'Reached the max retries per request limit (which is 1).')],
  ['ioredis on a closed connection', new Error('Connection is closed.')],
  ['Redis Cluster: a slot without a master during a failover', new Error('CLUSTERDOWN The cluster is down')],
  ['Redis Cluster: keys migrating', new Error('TRYAGAIN Multiple keys request during rehashing of slot')],
  ['Redis Cluster: every node lost', new Error('Failed to refresh slots cache.')],
  ['Redis Cluster: redirections given up while a master fails over', new Error('Too many Cluster redirections. Last error: Error: Connection is closed.')],
  ['Redis Cluster: reconnecting', new Error('Cluster is disconnected.')],
  ['Redis Cluster: a node reconnecting', new Error('Node is disconnected')],
  ['Sentinel: none answers yet', new Error('All sentinels are unreachable. Retrying from scratch after 100ms.')],
  ['Sentinel: a demoted master', new Error("READONLY You can't write against a read only replica.")],
  ['a refused connection', Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' })],
  ['refused on every address', new AggregateError([Object.assign(new Error('x'), { code: 'ECONNREFUSED' })], '')],
  ['pg: server shutting down', Object.assign(new Error('terminating connection due to administrator command'), { code: '57P01' })],
  ['pg: cannot connect now', Object.assign(new Error('the database system is starting up'), { code: '57P03' })],
  ['pg: connection exception class 08', Object.assign(new Error('x'), { code: '08006' })],
  ['pg: connection cut', new Error('Connection terminated unexpectedly')],
  ['Prisma: database unreachable', Object.assign(new Error('x'), { code: 'P1001' })],
  ['Prisma: no pooled connection in time', Object.assign(new Error('Transaction API error: Unable to start a transaction in the given time.'), { code: 'P2028' })],
  ['driver adapter error in meta', Object.assign(new Error('x'), { code: 'P2010', meta: { driverAdapterError: { cause: { kind: 'DatabaseNotReachable' } } } })],
  ['adapter kind in the cause chain', new Error('outer', { cause: new Error('inner', { cause: { kind: 'ConnectionClosed' } }) })],
]

const BUGS: [string, unknown][] = [
  ['a plain error', new Error('boom')],
  ['a type error', new TypeError("Cannot read properties of undefined (reading 'id')")],
  ['a unique violation', Object.assign(new Error('duplicate key'), { code: '23505' })],
  ['Prisma: record not found', Object.assign(new Error('x'), { code: 'P2025' })],
  ['not an object', 'ECONNREFUSED'],
  ['null', null],
]

for (const [name, error] of UNAVAILABLE) t.test(`unavailable: ${name}`, async (t) => t.equal(isBackendUnavailable(error), true))
for (const [name, error] of BUGS) t.test(`not unavailable: ${name}`, async (t) => t.equal(isBackendUnavailable(error), false))

t.test('a cycle in the cause chain ends', async (t) => {
  const a: { cause?: unknown } = {}
  a.cause = a
  t.equal(isBackendUnavailable(a), false)
})
