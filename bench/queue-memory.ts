// Memory of an idle event queue and of a held long-poll, in one embedded
// process (PGlite, in-process bus and queue store): live heap after a full GC
// (V8 heap in use + external + array buffers), per queue and per poll.
//   node --expose-gc dist/bench/queue-memory.js [queues=2000] [implicit|register]
import { buildTestApp } from '../test/support/app.js'
import { as } from '../test/support/client.js'
import { bodyOf } from '../test/support/expect.js'

const N = Number(process.argv[2] ?? 2000)
const viaRegister = process.argv[3] === 'register'
const gc = (globalThis as { gc?: () => void }).gc
if (!gc) throw new Error('run with node --expose-gc')

function live(): number {
  gc?.()
  gc?.()
  const m = process.memoryUsage()
  return m.heapUsed + m.external + m.arrayBuffers
}

const teardowns: (() => unknown)[] = []
const { app, fx, services } = await buildTestApp({ teardown: (fn) => teardowns.push(fn) }, { config: { eventQueuesPerUser: N + 1, heartbeatIntervalSeconds: 3600 } })
const member = fx.users.member
// Warm up the paths (first register and poll compile and cache things once).
const warm = String(bodyOf(await as(app, member).post('/register', { event_types: ['message'] })).queue_id)
await as(app, member).get('/events', { queue_id: warm, last_event_id: -1, dont_block: true })

const before = live()
const queues: string[] = []
for (let i = 0; i < N; i++) {
  const body = bodyOf(
    viaRegister
      ? await as(app, member).post('/register', { event_types: ['message'], fetch_event_types: ['realm'] })
      : await as(app, member).get('/events', { dont_block: true, event_types: ['message'] }),
  )
  queues.push(String(body.queue_id))
}
const withQueues = live()
const polls = queues.map((queue_id) => as(app, member).get('/events', { queue_id, last_event_id: -1 }))
while (services.events.heldPolls < N) await new Promise((r) => setTimeout(r, 200))
const withPolls = live()
const kib = (bytes: number) => (bytes / 1024 / N).toFixed(1)
console.log(`${N} queues (${viaRegister ? 'POST /register' : 'implicit registration'}, event_types ["message"]): ${kib(withQueues - before)} KiB live per idle queue`)
console.log(`${N} held long-polls on them: ${kib(withPolls - withQueues)} KiB live per held poll (on top of its queue)`)
void polls
for (const fn of teardowns.reverse()) await fn()
process.exit(0)
