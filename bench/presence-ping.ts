// The presence ping in a realm of 1,000 users (issue 16: "a presence ping
// ≤ 2 ms at 1,000 users"). One Roost node on PostgreSQL + Redis; BENCH_USERS
// members created in bulk (bench/bulk-users.ts), each of whom then reports
// `active` once through the API, so every one has a recent presence. Then
// autocannon sends one kind of ping at a time as the owner (whose repeated
// pings, within 55 s of each other, write nothing: the steady state of a
// client pinging every minute): latency p50/p99 and the node's CPU time
// (user + system, /proc/<pid>/stat) per answered request. The baseline is
// bare Fastify decoding Basic auth and answering a small JSON body
// (bench/bare-node.ts), measured in the same run.
//
//   node dist/bench/presence-ping.js
// Environment: BENCH_USERS (default 1000), BENCH_DURATION (seconds per ping
// kind, default 8), BENCH_CONNECTIONS (default 1: the latency of one request
// at a time), BENCH_ONLY (the ping kinds whose name contains it),
// BENCH_NODE_ARGS (e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof"). Linux only.
// Prints figures only; nothing here asserts a time.
import { createBulkUsers, inParallel } from './bulk-users.js'
import { api, clusterEnv, fmt, machine, markdownTable, measureRequests, ownerAuth, recordResult, run, startChild, table, type RequestTarget } from './support.js'

const USERS = Number(process.env.BENCH_USERS ?? 1000)
const DURATION = Number(process.env.BENCH_DURATION ?? 8)
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 1)
const ONLY = process.env.BENCH_ONLY

async function main(): Promise<void> {
  const start = machine()
  console.log(start)
  const env = clusterEnv('presence_ping')
  const node = await startChild('roost-node', env, (process.env.BENCH_NODE_ARGS ?? '').split(' ').filter(Boolean))
  const base = `http://127.0.0.1:${node.port}`
  const auth = await ownerAuth(base)
  const users = await createBulkUsers(env.DATABASE_URL as string, USERS, 'presence')
  const began = Date.now()
  await inParallel(users, 20, (u) => api(base, u.auth, 'POST', '/users/me/presence', { status: 'active', ping_only: 'true' }))
  console.log(`${USERS} users created and reported active (the reports took ${Date.now() - began} ms)`)
  const full = await api(base, auth, 'POST', '/users/me/presence', { status: 'active', last_update_id: '-1' })
  const lastUpdateId = full.presence_last_update_id as number
  console.log(`a full modern answer lists ${Object.keys(full.presences).length} presences, ${JSON.stringify(full).length} bytes; presence_last_update_id ${lastUpdateId}`)
  const ping = '/api/v1/users/me/presence'
  const targets: RequestTarget[] = [
    { name: 'ping_only', method: 'POST', path: ping, body: 'status=active&ping_only=true&new_user_input=true' },
    { name: `last_update_id=${lastUpdateId} (nothing new)`, method: 'POST', path: ping, body: `status=active&new_user_input=true&last_update_id=${lastUpdateId}` },
    { name: 'last_update_id=-1 (everyone, modern)', method: 'POST', path: ping, body: 'status=active&new_user_input=true&last_update_id=-1' },
    { name: 'slim_presence=true (everyone, modern)', method: 'POST', path: ping, body: 'status=active&new_user_input=true&slim_presence=true' },
    { name: 'no last_update_id (everyone, legacy)', method: 'POST', path: ping, body: 'status=active&new_user_input=true' },
  ]
  const rows = [['POST /users/me/presence', 'req/s', 'p50 ms', 'p99 ms', 'CPU µs/request', 'errors']]
  for (const target of targets.filter((t) => !ONLY || t.name.includes(ONLY))) {
    const r = await measureRequests(node.process.pid as number, base, auth, target, { connections: CONNECTIONS, duration: DURATION })
    rows.push([target.name, fmt(r.rps, 0), fmt(r.p50, 0), fmt(r.p99, 0), fmt(r.cpuUs, 0), String(r.errors)])
    console.log(table(rows).split('\n').at(-1))
  }
  await node.stop()
  const bare = await startChild('bare-node', {})
  const b = await measureRequests(bare.process.pid as number, `http://127.0.0.1:${bare.port}`, auth, { name: 'bare', method: 'GET', path: '/api/v1/events' }, { connections: CONNECTIONS, duration: DURATION })
  rows.push(['bare Fastify GET /events stub (baseline)', fmt(b.rps, 0), fmt(b.p50, 0), fmt(b.p99, 0), fmt(b.cpuUs, 0), String(b.errors)])
  await bare.stop()
  const ratios = rows.slice(1, -1).map((r) => `${r[0]}: ${fmt(Number(r[4]) / b.cpuUs, 1)}× bare CPU`)
  console.log(`\n${table(rows)}\n\n${ratios.join('\n')}`)
  const header = `### Presence ping, ${USERS} users with recent presence — \`node dist/bench/presence-ping.js\`\n\n${start} (at the start); ${machine()} (at the end). One node on PostgreSQL + Redis; ${CONNECTIONS} connection(s), ${DURATION} s per row after 2 s of warm-up; latency as autocannon sees it (whole milliseconds); CPU of the server process only (PostgreSQL and Redis not counted).`
  recordResult('presence-ping', `${header}\n\n${markdownTable(rows)}\n\n${ratios.map((r) => `- ${r}`).join('\n')}`)
}

run(main)
