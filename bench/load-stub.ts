// The baseline of bench/load-simulation.ts: bare Fastify faking the endpoints
// the simulated users call, with no database, authentication or validation
// beyond reading the Basic user name. Message events reach the held
// long-polls of the sender's team, as in Roost.
//   env: PORT
import Fastify from 'fastify'
import formbody from '@fastify/formbody'

interface Poll { resolve: (events: unknown[]) => void; timer: NodeJS.Timeout }
interface Queue { id: string; team: number; events: Array<{ id: number; [key: string]: unknown }>; nextId: number; poll?: Poll }

const port = Number(process.env.PORT)
const HEARTBEAT_MS = Number(process.env.HEARTBEAT_INTERVAL_SECONDS ?? 60) * 1000
const app = Fastify({ logger: false })
await app.register(formbody)
const queues = new Map<string, Queue>()
const teams = new Map<number, Set<Queue>>()
let nextQueue = 0
let nextMessage = 0
const MESSAGES = Array.from({ length: 50 }, (_, i) => ({ id: i + 1, sender_id: 1, content: `<p>message ${i}</p>`, subject: 'sim', timestamp: 0, flags: ['read'] }))

/** The simulated user's team from its Basic user name (sim-<n>@…: team n / 50). */
function teamOf(authorization: string | undefined): number {
  const name = Buffer.from((authorization ?? '').replace(/^Basic /, ''), 'base64').toString().split(':')[0] ?? ''
  return Math.floor(Number(/sim-(\d+)@/.exec(name)?.[1] ?? 0) / 50)
}

function deliver(queue: Queue): void {
  const poll = queue.poll
  if (!poll || queue.events.length === 0) return
  queue.poll = undefined
  clearTimeout(poll.timer)
  poll.resolve(queue.events.splice(0))
}

app.post('/api/v1/register', async (request) => {
  const team = teamOf(request.headers.authorization)
  const queue: Queue = { id: `q${nextQueue++}`, team, events: [], nextId: 0 }
  queues.set(queue.id, queue)
  const members = teams.get(team) ?? new Set<Queue>()
  members.add(queue)
  teams.set(team, members)
  return { result: 'success', msg: '', queue_id: queue.id, last_event_id: -1 }
})
app.get('/api/v1/events', async (request) => {
  const query = request.query as { queue_id?: string; last_event_id?: string }
  const queue = queues.get(query.queue_id ?? '')
  if (!queue) return { result: 'error', msg: 'Bad event queue ID', code: 'BAD_EVENT_QUEUE_ID', queue_id: query.queue_id }
  const last = Number(query.last_event_id ?? -1)
  queue.events = queue.events.filter((e) => e.id > last)
  const events = await new Promise<unknown[]>((resolve) => {
    if (queue.events.length > 0) return resolve(queue.events.splice(0))
    queue.poll?.resolve([])
    queue.poll = { resolve, timer: setTimeout(() => ((queue.poll = undefined), resolve([{ type: 'heartbeat', id: queue.nextId++ }])), HEARTBEAT_MS) }
  })
  return { result: 'success', msg: '', events }
})
app.post('/api/v1/users/me/presence', async () => ({ result: 'success', msg: '', presences: {}, presence_last_update_id: 1, server_timestamp: Date.now() / 1000 }))
app.post('/api/v1/messages', async (request) => {
  const id = ++nextMessage
  for (const queue of teams.get(teamOf(request.headers.authorization)) ?? []) {
    queue.events.push({ type: 'message', id: queue.nextId++, message: { id, content: '<p>hello</p>', subject: 'sim' }, flags: [] })
    deliver(queue)
  }
  return { result: 'success', msg: '', id }
})
app.get('/api/v1/messages', async () => ({ result: 'success', msg: '', anchor: 0, found_newest: true, found_oldest: false, found_anchor: false, history_limited: false, messages: MESSAGES }))
await app.listen({ port, host: '127.0.0.1', backlog: 4096 })
process.stdout.write(`load-stub: listening on ${port}\n`)
process.on('SIGTERM', () => void app.close().then(() => process.exit(0)))
