// CPU per request type (issue 16, item 2): one Roost node on PostgreSQL +
// Redis, driven by autocannon one request type at a time; the node's CPU
// time (user + system, from /proc/<pid>/stat) divided by the requests it
// answered, and that of every PostgreSQL and Redis process on the machine
// (their share of the request's cost). The same for bare Fastify decoding Basic auth and answering a small JSON body
// (bench/bare-node.ts), as the baseline of the same run.
//
//   node dist/bench/request-cpu.js
// Environment: BENCH_DURATION (seconds per request type, default 8),
// BENCH_CONNECTIONS (default 10), BENCH_ONLY (run the request types whose
// name contains it), BENCH_NODE_ARGS (node options of the Roost node, e.g.
// --cpu-prof). Linux only (/proc). Prints figures only.
import { api, clusterEnv, fmt, machine, markdownTable, measureRequests, ownerAuth, recordResult, run, startChild, table, type RequestTarget } from './support.js'

const DURATION = Number(process.env.BENCH_DURATION ?? 8)
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 10)
const ONLY = process.env.BENCH_ONLY

async function main(): Promise<void> {
  const start = machine()
  console.log(start)
  const node = await startChild('roost-node', clusterEnv('request_cpu'), (process.env.BENCH_NODE_ARGS ?? '').split(' ').filter(Boolean))
  const base = `http://127.0.0.1:${node.port}`
  const auth = await ownerAuth(base)
  const general = (await api(base, auth, 'GET', '/streams')).streams.find((s: { name: string }) => s.name !== undefined)
  const streamId = general.stream_id as number
  for (let i = 0; i < 60; i++) await api(base, auth, 'POST', '/messages', { type: 'stream', to: streamId, topic: 'cpu', content: `filler ${i}` })
  // A queue that the sends below do not fill: dont_block polls answer an empty list, as in events-empty-poll.
  const { queue_id } = await api(base, auth, 'POST', '/register', { event_types: ['update_message_flags'] })
  // A queue holding one message event: each poll that does not acknowledge it is answered with that event.
  const answered = await api(base, auth, 'POST', '/register', { event_types: ['message'] })
  await api(base, auth, 'POST', '/messages', { type: 'stream', to: streamId, topic: 'cpu', content: 'the answered event' })
  const simEventTypes = encodeURIComponent(JSON.stringify(['message', 'update_message_flags', 'presence', 'subscription']))
  const narrow = encodeURIComponent(JSON.stringify([{ operator: 'stream', operand: streamId }]))
  const targets: RequestTarget[] = [
    { name: 'GET /users/me', method: 'GET', path: '/api/v1/users/me' },
    { name: 'POST /users/me/presence (ping_only)', method: 'POST', path: '/api/v1/users/me/presence', body: 'status=active&ping_only=true&new_user_input=true' },
    { name: 'GET /messages (newest 50 of a channel)', method: 'GET', path: `/api/v1/messages?anchor=newest&num_before=50&num_after=0&narrow=${narrow}` },
    { name: 'GET /events answered (one message event)', method: 'GET', path: `/api/v1/events?queue_id=${encodeURIComponent(answered.queue_id)}&last_event_id=-1` },
    { name: 'POST /messages (to a channel)', method: 'POST', path: '/api/v1/messages', body: `type=stream&to=${streamId}&topic=cpu&content=hello` },
    { name: 'GET /events?dont_block=true', method: 'GET', path: `/api/v1/events?queue_id=${encodeURIComponent(queue_id)}&last_event_id=-1&dont_block=true` },
    // Last: the queues it registers would receive the sends above.
    { name: 'POST /register (the simulation\'s event types)', method: 'POST', path: '/api/v1/register', body: `event_types=${simEventTypes}` },
  ]
  const rows = [['request', 'req/s', 'CPU µs/request', 'PostgreSQL µs/request', 'Redis µs/request', 'errors']]
  for (const target of targets.filter((t) => !ONLY || t.name.includes(ONLY))) {
    // The sends leave the owner thousands of unread messages (the API client
    // is not a human client, so a sender's own message stays unread, as
    // upstream does), and register's unread summary grows with them: the
    // register row measures a user with none, whatever the send row's rate.
    if (target.path === '/api/v1/register') {
      // Upstream's endpoint answers complete: false when its time ran out; ask again.
      for (let i = 0; i < 100; i++) if ((await api(base, auth, 'POST', '/mark_all_as_read', {})).complete !== false) break
    }
    const r = await measureRequests(node.process.pid as number, base, auth, target, { connections: CONNECTIONS, duration: DURATION })
    rows.push([target.name, fmt(r.rps, 0), fmt(r.cpuUs, 0), fmt(r.postgresCpuUs, 0), fmt(r.redisCpuUs, 0), String(r.errors)])
    console.log(table(rows).split('\n').at(-1))
  }
  await node.stop()
  // The baseline: bare Fastify decoding the Basic header and answering a small JSON body (bench/bare-node.ts).
  const bare = await startChild('bare-node', {})
  const b = await measureRequests(bare.process.pid as number, `http://127.0.0.1:${bare.port}`, auth, { name: 'bare', method: 'GET', path: '/api/v1/events' }, { connections: CONNECTIONS, duration: DURATION })
  rows.push(['bare Fastify GET /events stub (baseline)', fmt(b.rps, 0), fmt(b.cpuUs, 0), '', '', String(b.errors)])
  await bare.stop()
  console.log(`\n${table(rows)}`)
  recordResult('request-cpu', `${start} (at the start); ${CONNECTIONS} connections, ${DURATION} s per row; CPU per answered request of the server process, and of all PostgreSQL and Redis processes on the machine.\n\n${markdownTable(rows)}`)
}

run(main)
