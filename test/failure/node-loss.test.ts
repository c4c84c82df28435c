// A node lost for good (SIGKILL: no drain, the kernel resets its
// connections) in a three-node cluster of real server processes. Clients
// behave as the real ones do: a poll cut off is sent again, with the same
// last_event_id, to another node.
//   1. 1,000 long-polls on the killed node, while messages are being sent
//      through the other two: every queue gets every message exactly once,
//      in order.
//   2. The reconnect storm: 5,000 polls held on one node move to a single
//      survivor at once, with zero errors there, and exactly-once delivery
//      of what was sent while they moved and after.
import { readFileSync } from 'node:fs'
import { Redis } from 'ioredis'
import t from 'tap'
import { Client, isReply, startCluster, startNode, startPostgres, startRedis, type Json, type RoostNode } from './processes.js'
import { eventually } from '../support/eventually.js'

const TRAFFIC_POLLS = 1_000
const STORM_POLLS = 5_000

interface Poller {
  index: number
  queueId: string
  node: RoostNode
  lastEventId: number
  /** Message IDs in the order received. */
  received: number[]
  /** Connection errors, as "<node>: <error>". */
  connectionErrors: string[]
  /** Anything but a success or a connection error. */
  unexpected: string[]
}

/** Long-polls as a client does until a message whose content contains `until` arrives; a cut-off poll goes to `next(poller)`. */
async function pollUntil(client: Client, p: Poller, until: string, next: (p: Poller) => RoostNode): Promise<void> {
  for (;;) {
    const res = await client.call(p.node, 'GET', '/events', { queue_id: p.queueId, last_event_id: p.lastEventId })
    if (!isReply(res)) {
      p.connectionErrors.push(`${p.node.name}: ${res.error}`)
      if (p.connectionErrors.length > 20) return void p.unexpected.push('gave up after 20 connection errors')
      p.node = next(p)
      continue
    }
    if (res.status !== 200 || res.body.result !== 'success') return void p.unexpected.push(`${p.node.name}: ${res.status} ${JSON.stringify(res.body).slice(0, 200)}`)
    let done = false
    for (const event of res.body.events as Json[]) {
      p.lastEventId = event.id as number
      if (event.type !== 'message') continue
      p.received.push(event.message.id as number)
      if (String(event.message.content).includes(until)) done = true
    }
    if (done) return
  }
}

async function registerQueues(client: Client, nodes: RoostNode[], count: number): Promise<string[]> {
  // As a client does, a 503 (the database saturated, or the node overloaded, on a loaded machine) is retried after a pause.
  const register = async (node: RoostNode): Promise<string> => {
    for (let attempt = 1; ; attempt++) {
      const res = await client.call(node, 'POST', '/register', { event_types: ['message'], fetch_event_types: [] })
      if (isReply(res) && res.status === 200) return res.body.queue_id as string
      if (attempt >= 5 || !isReply(res) || res.status !== 503) throw new Error(`POST /register: ${JSON.stringify(res).slice(0, 300)}`)
      await new Promise((r) => setTimeout(r, 1_000))
    }
  }
  const ids: string[] = []
  for (let start = 0; start < count; start += 30) {
    const batch = Array.from({ length: Math.min(30, count - start) }, (_, i) => register(nodes[(start + i) % nodes.length] as RoostNode))
    ids.push(...(await Promise.all(batch)))
  }
  return ids
}

function pollers(queueIds: string[], node: RoostNode): Poller[] {
  return queueIds.map((queueId, index) => ({ index, queueId, node, lastEventId: -1, received: [], connectionErrors: [], unexpected: [] }))
}

/** Message IDs of the test's topic in a channel, oldest first, from the database (what was really sent). */
async function channelMessages(client: Client, node: RoostNode, channel: string): Promise<number[]> {
  const narrow = [{ operator: 'channel', operand: channel }, { operator: 'topic', operand: 'failover' }]
  const res = await client.ok(node, 'GET', '/messages', { anchor: 'oldest', num_before: 0, num_after: 1000, narrow, apply_markdown: false })
  return (res.messages as Json[]).map((m) => m.id as number)
}

/** Pollers whose messages are not exactly `expected`, in order, each once; with the first few for the report. */
function mismatches(all: Poller[], expected: number[]): { count: number; examples: Json[] } {
  const wrong = all.filter((p) => p.received.length !== expected.length || p.received.some((id, i) => id !== expected[i]))
  return { count: wrong.length, examples: wrong.slice(0, 3).map((p) => ({ queue: p.queueId, received: p.received, errors: p.connectionErrors, unexpected: p.unexpected })) }
}

/** The soft limit of open files of this process (each held poll is a socket here and on the node). */
function openFilesLimit(): number {
  const line = /^Max open files\s+(\S+)/m.exec(readFileSync('/proc/self/limits', 'utf8'))
  return line?.[1] === 'unlimited' ? Infinity : Number(line?.[1] ?? 1024)
}

t.test('a node lost with SIGKILL', async (t) => {
  const started = Date.now()
  const step = (what: string) => t.comment(`${((Date.now() - started) / 1000).toFixed(1)} s: ${what}`)
  const redis = await startRedis(t)
  const postgres = await startPostgres(t)
  const backends = { databaseUrl: postgres.url, redisUrl: redis.url }
  const [a, b, c] = (await startCluster(t, backends)) as [RoostNode, RoostNode, RoostNode]
  step('cluster started')
  const owner = await Client.login(b)
  t.teardown(() => owner.close())
  await owner.ok(b, 'POST', '/users/me/subscriptions', { subscriptions: [{ name: 'traffic' }, { name: 'storm' }] })
  const send = (node: RoostNode, to: string, content: string) => owner.ok(node, 'POST', '/messages', { type: 'stream', to, topic: 'failover', content })

  await t.test(`${TRAFFIC_POLLS} long-polls on the killed node, during traffic, get every event exactly once`, async (t) => {
    const ps = pollers(await registerQueues(owner, [a, b, c], TRAFFIC_POLLS), a)
    step(`${TRAFFIC_POLLS} queues registered`)
    const survivors = [b, c]
    const polling = Promise.all(ps.map((p) => pollUntil(owner, p, 'end of traffic', (p) => survivors[p.index % 2] as RoostNode)))
    // Every poll is on node A once each queue has received the first message.
    const first = await send(b, 'traffic', 'first')
    await eventually('every poll active on node A', () => ps.every((p) => p.received.length > 0 || p.unexpected.length > 0), { timeoutMs: 120_000, intervalMs: 100 })
    step('every poll active on node A')
    let sent = 1
    const traffic = (async () => {
      while (sent < 30) {
        await send(survivors[sent % 2] as RoostNode, 'traffic', `message ${sent}`)
        sent++
      }
    })()
    await eventually('five messages sent', () => sent >= 5, { timeoutMs: 60_000, intervalMs: 20 })
    await a.kill()
    step(`node A killed after ${sent} messages`)
    await traffic
    await send(c, 'traffic', 'end of traffic')
    await polling
    step('every poller done')

    const expected = await channelMessages(owner, b, 'traffic')
    t.equal(expected[0], first.id)
    t.equal(expected.length, 31, 'every send was stored')
    t.same(ps.flatMap((p) => p.unexpected), [], 'no error reply, only connections cut by the kill')
    t.same(mismatches(ps, expected), { count: 0, examples: [] }, 'every queue got every message exactly once, in order')
    const cut = ps.filter((p) => p.connectionErrors.length > 0)
    t.ok(cut.length > 0, `polls were cut off by the kill (${cut.length} of ${TRAFFIC_POLLS})`)
    t.same(cut.flatMap((p) => p.connectionErrors).filter((e) => !e.startsWith('a:')), [], 'only on node A')
  })

  await t.test(`reconnect storm: ${STORM_POLLS} polls held on a killed node move to one survivor`, async (t) => {
    const limit = openFilesLimit()
    t.ok(limit >= 2 * STORM_POLLS + 1_000, `open files limit ${limit} holds ${STORM_POLLS} polls twice over (raise it with ulimit -n)`)
    const d = await startNode(t, 'd', backends)
    const ids = await registerQueues(owner, [b, c, d], STORM_POLLS)
    step(`${STORM_POLLS} queues registered`)
    const client = new Client(owner.auth)
    t.teardown(() => client.close())
    const ps = pollers(ids, d)
    const polling = Promise.all(ps.map((p) => pollUntil(client, p, 'after the storm', () => b)))

    // Every poll active on D, then held there (its mark in Redis).
    const warm = await send(c, 'storm', 'warm')
    await eventually('every poll active on node D', () => ps.every((p) => p.received.length > 0 || p.unexpected.length > 0), { timeoutMs: 300_000, intervalMs: 100 })
    const watcher = new Redis(redis.url, { lazyConnect: true })
    await watcher.connect()
    t.teardown(() => watcher.disconnect())
    const everyPollMarked = async () => (await watcher.mget(ids.map((id) => `roost:q:{${id}}:h`))).every((m) => m !== null)
    await eventually('every poll held on node D', everyPollMarked, { timeoutMs: 300_000, intervalMs: 200 })
    step(`${STORM_POLLS} polls held on node D`)

    // Frozen, D cannot answer what is sent now; killed, it cuts every poll at once.
    d.child.kill('SIGSTOP')
    const during = await send(c, 'storm', 'while moving')
    await d.kill()
    step('node D killed')
    const after = await send(c, 'storm', 'after the storm')
    await polling
    step('every poller done')

    t.same(await channelMessages(owner, b, 'storm'), [warm.id, during.id, after.id])
    t.same(ps.flatMap((p) => p.unexpected), [], 'zero error replies from the survivor')
    t.same(ps.flatMap((p) => p.connectionErrors).filter((e) => !e.startsWith('d:')), [], 'zero connection errors on the survivor')
    t.equal(ps.filter((p) => p.connectionErrors.length === 1).length, STORM_POLLS, 'every poll was cut once by the kill, and moved')
    t.same(mismatches(ps, [warm.id, during.id, after.id]), { count: 0, examples: [] }, 'exactly once, in order, for every queue')
  })
})
