// One Roost node for the event-system benchmarks, run as a child process:
// the same services and buildApp as src/server.ts (PostgreSQL, Redis bus with
// a per-run key prefix, RATE_LIMITING=off, LOG_LEVEL=warn), plus an IPC
// channel the benchmark uses to read what only the node knows:
//   { kind: 'stats' }       → rss and live memory (after gc when run with --expose-gc), held polls
//   { kind: 'eld-start' }   → starts perf_hooks.monitorEventLoopDelay
//   { kind: 'eld-stop' }    → its p50/p99/max in ms
// With BENCH_REPORT_PUBLISH=1 it sends { kind: 'publish', at, content } when a
// message event enters the bus (the start of cross-node delivery). With
// BENCH_REPORT_WRITES=1 it records, for each GET /events response carrying
// message events with contents "x<n>", when the response was written
// (the end of cross-node delivery); { kind: 'writes' } returns them as
// [n, at] pairs.
//   { kind: 'profile-start' } / { kind: 'profile-stop', file } → a V8 CPU profile
//   of just that stretch, written to `file` (node:inspector), for
//   scripts/summarize-cpuprofile.mjs
//   env: DATABASE_URL, REDIS_URL, BENCH_REDIS_PREFIX, PORT, BOOTSTRAP_*
import { monitorEventLoopDelay, type IntervalHistogram } from 'node:perf_hooks'
import { writeFileSync } from 'node:fs'
import { Session } from 'node:inspector/promises'
import { loadConfig } from '../src/config.js'
import { openDatabase } from '../src/db/client.js'
import { applyMigrations } from '../src/db/migrate.js'
import { buildApp } from '../src/app.js'
import { servicesOver } from '../src/node-services.js'
import { openBackends } from '../src/backends/index.js'
import { bootstrapRealm } from '../src/actions/bootstrap-realm.js'
import { clock, memoryAfterGc } from './support.js'

const config = loadConfig()
const database = await openDatabase({ databaseUrl: config.databaseUrl })
await applyMigrations(database)
const backends = await openBackends(config, { redisPrefix: process.env.BENCH_REDIS_PREFIX ?? 'roost-bench' })
const bus = backends.bus
if (process.env.BENCH_REPORT_PUBLISH === '1') {
  const publish = bus.publish.bind(bus)
  bus.publish = async (item) => {
    if (item.event.type === 'message') {
      const message = item.event.message as { content?: string }
      process.send?.({ kind: 'publish', at: clock(), content: message.content ?? '' })
    }
    return publish(item)
  }
}
const services = servicesOver(config, database, backends)
await bootstrapRealm(services)
const app = await buildApp({ services, logger: { level: process.env.LOG_LEVEL ?? 'warn' } })
const writes: Array<[number, number]> = []
if (process.env.BENCH_REPORT_WRITES === '1') {
  app.addHook('onSend', async (request, reply, payload) => {
    if (typeof payload === 'string' && request.url.startsWith('/api/v1/events')) {
      const numbers = [...payload.matchAll(/"content":"x(\d+)"/g)].map((m) => Number(m[1]))
      if (numbers.length > 0) reply.raw.once('finish', () => {
        const at = clock()
        for (const n of numbers) writes.push([n, at])
      })
    }
    return payload
  })
}
await app.listen({ port: config.port, host: config.host, backlog: config.listenBacklog })

let eld: IntervalHistogram | undefined
let profiler: Session | undefined
const gc = (globalThis as { gc?: () => void }).gc
process.on('message', (raw) => {
  const message = raw as { kind: string; id: number }
  const reply = (value: unknown) => process.send?.({ replyTo: message.id, value })
  switch (message.kind) {
    case 'stats':
      gc?.()
      reply({ ...memoryAfterGc(), heldPolls: services.events.heldPolls })
      break
    case 'writes':
      reply(writes.splice(0))
      break
    case 'profile-start':
      profiler = new Session()
      profiler.connect()
      void profiler
        .post('Profiler.enable')
        .then(() => profiler?.post('Profiler.start'))
        .then(() => reply(null))
      break
    case 'profile-stop':
      void profiler?.post('Profiler.stop').then(({ profile }) => {
        writeFileSync((message as { file?: string }).file ?? 'roost-node.cpuprofile', JSON.stringify(profile))
        profiler?.disconnect()
        reply(null)
      })
      break
    case 'eld-start':
      eld = monitorEventLoopDelay({ resolution: 1 })
      eld.enable()
      reply(null)
      break
    case 'eld-stop':
      eld?.disable()
      reply(eld ? { p50: eld.percentile(50) / 1e6, p99: eld.percentile(99) / 1e6, max: eld.max / 1e6 } : null)
      break
  }
})
process.on('SIGTERM', () => {
  services.events.drain()
  void app
    .close()
    .then(() => backends.close())
    .then(() => database.close())
    .finally(() => process.exit(0))
})
process.stdout.write(`roost-node: listening on ${config.port}\n`)
