// The bare-Fastify baselines of the event-system benchmarks, as a child process:
//   GET /api/v1/events   parses Basic auth the way an authenticated route must
//                        (base64 decode, split at ':') and answers an empty event list
//   GET /hold            holds the request until POST /release answers every held one
// Env: PORT, LISTEN_BACKLOG (as Roost's; unset → Node's default, 511).
// IPC { kind: 'stats' } → rss and live memory (after gc with --expose-gc) and the number held.
import Fastify from 'fastify'
import { memoryAfterGc } from './support.js'

const app = Fastify({ logger: false })
const held: Array<() => void> = []

app.get('/api/v1/events', async (request, reply) => {
  const header = request.headers.authorization ?? ''
  const decoded = header.startsWith('Basic ') ? Buffer.from(header.slice(6), 'base64').toString('utf8') : ''
  const colon = decoded.indexOf(':')
  if (colon < 0) return reply.code(401).send({ result: 'error', msg: 'Not logged in', code: 'UNAUTHORIZED' })
  const query = request.query as { queue_id?: string }
  return { result: 'success', msg: '', events: [], queue_id: query.queue_id ?? null, user: decoded.slice(0, colon).length }
})
app.get('/hold', () => new Promise((resolve) => held.push(() => resolve({ result: 'success', msg: '', events: [{ type: 'message', id: 0 }] }))))
app.post('/release', async () => {
  const all = held.splice(0)
  for (const release of all) release()
  return { released: all.length }
})

// LISTEN_BACKLOG as for Roost (events-reconnect-storm.ts compares them at the same backlog); unset → Node's default.
await app.listen({ port: Number(process.env.PORT), host: '127.0.0.1', ...(process.env.LISTEN_BACKLOG ? { backlog: Number(process.env.LISTEN_BACKLOG) } : {}) })
const gc = (globalThis as { gc?: () => void }).gc
process.on('message', (raw) => {
  const message = raw as { kind: string; id: number }
  if (message.kind === 'stats') {
    gc?.()
    process.send?.({ replyTo: message.id, value: { ...memoryAfterGc(), heldPolls: held.length } })
  }
})
process.on('SIGTERM', () => void app.close().then(() => process.exit(0)))
process.stdout.write(`bare-node: listening on ${process.env.PORT}\n`)
