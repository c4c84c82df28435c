// User creation in a realm whose users hold live event queues (issue 16:
// "user creation must cost about the same in a realm of 10 or 10,000 users,
// apart from the events it must send"). For each N in BENCH_SIZES: a fresh
// database and one Roost node on PostgreSQL + Redis, N members created in
// bulk (bench/bulk-users.ts), then BENCH_CREATES sequential POST /users by
// the owner, first with no event queue registered, then again after each of
// the N members registered one (every event type; the state fetched is
// small: fetch_event_types=["alert_words"]). Reports the wall time of the
// request and the node's CPU time (/proc/<pid>/stat) per creation; the
// difference between the two runs is the cost of the events of a creation
// reaching N queues. A third run has every member hold a long-poll on its
// queue, re-polled as soon as it is answered (as a client does), so each
// creation also wakes N polls: the wall time then includes answering them.
//
//   node dist/bench/user-create-queues.js
// Environment: BENCH_SIZES (default "100,1000"), BENCH_CREATES (default 10),
// BENCH_PROFILE (a directory: a CPU profile of each measured run of
// creations, user-create-<N>-<queues>.cpuprofile). Linux only.
// Prints figures only; nothing here asserts a time.
import { setMaxListeners } from 'node:events'
import { readFileSync } from 'node:fs'
import { loadavg } from 'node:os'
import path from 'node:path'
import { createBulkUsers, inParallel } from './bulk-users.js'
import { api, clusterEnv, fmt, machine, markdownTable, ownerAuth, percentile, recordResult, run, startChild, table, type Child } from './support.js'

const SIZES = (process.env.BENCH_SIZES ?? '100,1000').split(',').map(Number)
const CREATES = Number(process.env.BENCH_CREATES ?? 10)

function cpuSeconds(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? []
  return (Number(fields[11]) + Number(fields[12])) / 100
}

let created = 0

const PROFILE = process.env.BENCH_PROFILE

async function profiled<T>(node: Child, name: string, fn: () => Promise<T>): Promise<T> {
  if (!PROFILE) return fn()
  await node.ask({ kind: 'profile-start' })
  const result = await fn()
  await node.ask({ kind: 'profile-stop', file: path.join(PROFILE, `${name}.cpuprofile`) })
  return result
}

async function creations(pid: number, base: string, auth: string): Promise<{ p50: number; max: number; cpuMs: number }> {
  const times: number[] = []
  const before = cpuSeconds(pid)
  for (let i = 0; i < CREATES; i++) {
    const n = created++
    const started = performance.now()
    await api(base, auth, 'POST', '/users', { email: `new-${n}@example.com`, password: `bench-password-${n}`, full_name: `New ${n}` })
    times.push(performance.now() - started)
  }
  return { p50: percentile(times, 50), max: Math.max(...times), cpuMs: ((cpuSeconds(pid) - before) * 1000) / CREATES }
}

/** Every queue's owner holds a long-poll, re-polled as soon as it is answered, until stop(). */
function holdPolls(base: string, queues: { auth: string; queueId: string; lastEventId: number }[]) {
  let stopping = false
  let answered = 0
  const aborts = new AbortController()
  // One signal for every poll: each fetch adds a listener.
  setMaxListeners(0, aborts.signal)
  let first = 0
  let markReady: () => void = () => {}
  const ready = new Promise<void>((resolve) => (markReady = resolve))
  const loops = queues.map(async (q) => {
    // The first poll acknowledges the backlog of the runs before; later ones are held.
    for (let held = false; !stopping; held = true) {
      const params = new URLSearchParams({ queue_id: q.queueId, last_event_id: String(q.lastEventId), ...(held ? {} : { dont_block: 'true' }) })
      try {
        const res = await fetch(`${base}/api/v1/events?${params}`, { headers: { authorization: q.auth }, signal: aborts.signal })
        const body = (await res.json()) as { events?: { id: number }[] }
        for (const event of body.events ?? []) q.lastEventId = Math.max(q.lastEventId, event.id)
        if (held) answered++
        else if (++first === queues.length) setTimeout(markReady, 500)
      } catch {
        if (stopping) return
      }
    }
  })
  return {
    ready,
    answered: () => answered,
    async stop() {
      stopping = true
      aborts.abort()
      await Promise.all(loops)
    },
  }
}

async function main(): Promise<void> {
  const start = machine()
  console.log(start)
  const rows = [['users N', 'queues', 'POST /users p50 ms', 'max ms', 'node CPU ms/creation', 'polls answered per creation', 'load (1 min)']]
  for (const size of SIZES) {
    const env = clusterEnv(`user_create_${size}`)
    const node = await startChild('roost-node', env)
    const base = `http://127.0.0.1:${node.port}`
    const auth = await ownerAuth(base)
    const users = await createBulkUsers(env.DATABASE_URL as string, size, 'member')
    const pid = node.process.pid as number
    // Warm-up: the first creations compile and fill caches.
    await creations(pid, base, auth)
    const bare = await profiled(node, `user-create-${size}-0`, () => creations(pid, base, auth))
    rows.push([String(size), '0', fmt(bare.p50, 1), fmt(bare.max, 1), fmt(bare.cpuMs, 1), '', fmt(loadavg()[0] ?? 0)])
    console.log(table(rows).split('\n').at(-1))
    const queues: { auth: string; queueId: string; lastEventId: number }[] = []
    await inParallel(users, 10, async (u) => {
      const { queue_id, last_event_id } = await api(base, u.auth, 'POST', '/register', { fetch_event_types: ['alert_words'] })
      queues.push({ auth: u.auth, queueId: queue_id as string, lastEventId: last_event_id as number })
    })
    const live = await profiled(node, `user-create-${size}-${size}`, () => creations(pid, base, auth))
    rows.push([String(size), String(size), fmt(live.p50, 1), fmt(live.max, 1), fmt(live.cpuMs, 1), '', fmt(loadavg()[0] ?? 0)])
    console.log(table(rows).split('\n').at(-1))
    const polling = holdPolls(base, queues)
    await polling.ready
    const held = await profiled(node, `user-create-${size}-${size}-polled`, () => creations(pid, base, auth))
    rows.push([String(size), `${size}, each with a held poll`, fmt(held.p50, 1), fmt(held.max, 1), fmt(held.cpuMs, 1), fmt(polling.answered() / CREATES, 0), fmt(loadavg()[0] ?? 0)])
    console.log(table(rows).split('\n').at(-1))
    await polling.stop()
    await node.stop()
  }
  console.log(`\n${table(rows)}`)
  recordResult(
    'user-create-queues',
    `### User creation with live event queues — \`node dist/bench/user-create-queues.js\`\n\n${start} (at the start); ${machine()} (at the end). One node on PostgreSQL + Redis; ${CREATES} sequential POST /users by the owner per row, after ${CREATES} of warm-up; CPU of the node process only.\n\n${markdownTable(rows)}`,
  )
}

run(main)
