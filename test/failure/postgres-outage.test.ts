// PostgreSQL stopped for 30 s under a three-node cluster while messages are
// being sent through every node: each request is answered at once with a
// success or 503 SERVER_NOT_READY (never a 500, never a hang), /readyz fails
// while it is down, no change is half-written, no node process dies, and
// everything works again when PostgreSQL is back, with no restart.
import { setTimeout as delay } from 'node:timers/promises'
import t from 'tap'
import { Client, isReply, readiness, startCluster, startPostgres, startRedis, type Json, type Outcome, type RoostNode } from './processes.js'
import { eventually } from '../support/eventually.js'

const OUTAGE_MS = 30_000
/** A request not answered in this long counts as a hang. */
const HANG_MS = 15_000

t.test('PostgreSQL stopped for 30 s', async (t) => {
  const started = Date.now()
  const step = (what: string) => t.comment(`${((Date.now() - started) / 1000).toFixed(1)} s: ${what}`)
  const redis = await startRedis(t)
  const postgres = await startPostgres(t)
  const nodes = await startCluster(t, { databaseUrl: postgres.url, redisUrl: redis.url })
  const [a, b, c] = nodes as [RoostNode, RoostNode, RoostNode]
  step('cluster started')
  const owner = await Client.login(a)
  t.teardown(() => owner.close())
  // Three recipients, so a half-written send would show as a message with fewer than three flag rows.
  const others: number[] = []
  for (const name of ['ana', 'ben']) {
    others.push((await owner.ok(a, 'POST', '/users', { email: `${name}@failure.example.com`, password: `${name}-password-1`, full_name: name })).user_id as number)
  }
  await owner.ok(a, 'POST', '/users/me/subscriptions', { subscriptions: [{ name: 'outage' }], principals: ['owner@failure.example.com', 'ana@failure.example.com', 'ben@failure.example.com'] })
  const { queue_id } = await owner.ok(b, 'POST', '/register', { event_types: ['message'], apply_markdown: false })

  // A client reading its queue (served from Redis), and a writer sending through every node in turn.
  const received: number[] = []
  const reading = (async () => {
    let last = -1
    const deadline = Date.now() + 180_000
    for (let attempt = 0; Date.now() < deadline; attempt++) {
      const res = await owner.call(nodes[attempt % 3] as RoostNode, 'GET', '/events', { queue_id, last_event_id: last })
      if (!isReply(res) || res.status !== 200) {
        // 503 while PostgreSQL is down is allowed here too; a client waits a little before it polls again.
        await delay(200)
        continue
      }
      for (const e of res.body.events as Json[]) {
        last = e.id as number
        if (e.type !== 'message') continue
        received.push(e.message.id as number)
        if (e.message.content === 'final') return
      }
      await delay(10)
    }
  })()
  const outcomes: { content: string; node: string; outcome: Outcome }[] = []
  let writing = true
  const writer = (async () => {
    for (let n = 0; writing; n++) {
      const node = nodes[n % 3] as RoostNode
      const content = `w${n}`
      outcomes.push({ content, node: node.name, outcome: await owner.call(node, 'POST', '/messages', { type: 'stream', to: 'outage', topic: 'pg', content }, HANG_MS) })
      await delay(20)
    }
  })()
  const successes = () => outcomes.filter((o) => isReply(o.outcome) && o.outcome.status === 200).length
  await eventually('ten messages sent', () => successes() >= 10, { timeoutMs: 120_000, intervalMs: 50 })

  await postgres.stop()
  const stoppedAt = Date.now()
  const beforeOutage = outcomes.length
  step('PostgreSQL stopped')
  await delay(2_000)
  const during: Record<string, { readyz: number; me: Outcome; events: Outcome }> = {}
  for (const node of nodes) {
    during[node.name] = {
      readyz: await readiness(node),
      me: await owner.call(node, 'GET', '/users/me', {}, HANG_MS),
      events: await owner.call(node, 'GET', '/events', { queue_id, last_event_id: -1, dont_block: true }, HANG_MS),
    }
  }
  await delay(Math.max(0, OUTAGE_MS - (Date.now() - stoppedAt)))
  const duringOutage = outcomes.slice(beforeOutage)
  await postgres.start()
  step('PostgreSQL started again')
  await eventually('every node ready again', async () => (await Promise.all(nodes.map(readiness))).every((s) => s === 200), { timeoutMs: 60_000, intervalMs: 100 })
  step('every node ready')
  const atRecovery = successes()
  await eventually('ten messages sent after the recovery', () => successes() >= atRecovery + 10, { timeoutMs: 120_000, intervalMs: 50 })
  writing = false
  await writer
  const final = await owner.ok(c, 'POST', '/messages', { type: 'stream', to: 'outage', topic: 'pg', content: 'final' })
  await reading
  step('writer and reader done')

  for (const node of nodes) {
    t.equal(node.child.exitCode, null, `node ${node.name} is still the same running process`)
    t.equal(during[node.name]?.readyz, 503, `/readyz failed on ${node.name} while PostgreSQL was down`)
    t.match(during[node.name]?.me, { status: 503, body: { result: 'error', code: 'SERVER_NOT_READY' } }, `GET /users/me on ${node.name}: 503 envelope`)
    const events = during[node.name]?.events
    t.ok(events && isReply(events) && (events.status === 200 || (events.status === 503 && events.body.code === 'SERVER_NOT_READY')), `GET /events on ${node.name}: 200 (Redis) or 503 (${JSON.stringify(events).slice(0, 200)})`)
  }

  const replies = outcomes.map((o) => (isReply(o.outcome) ? `${o.outcome.status} ${o.outcome.body.code ?? o.outcome.body.result}` : o.outcome.error))
  const kinds = [...new Set(replies)].sort()
  t.same(kinds, ['200 success', '503 SERVER_NOT_READY'], 'every send answered, with a success or 503 SERVER_NOT_READY')
  t.ok(duringOutage.length >= 10, `sends kept being answered during the outage (${duringOutage.length})`)
  t.ok(duringOutage.every((o) => isReply(o.outcome) && o.outcome.status === 503) || duringOutage.filter((o) => isReply(o.outcome) && o.outcome.status === 503).length >= duringOutage.length - 3, 'sends during the outage failed with 503')

  // What was stored is exactly what was answered with success: no half-written send.
  const stored = await owner.ok(a, 'GET', '/messages', { anchor: 'oldest', num_before: 0, num_after: 5000, narrow: [{ operator: 'channel', operand: 'outage' }, { operator: 'topic', operand: 'pg' }], apply_markdown: false })
  const storedContents = (stored.messages as Json[]).map((m) => m.content as string)
  const succeeded = outcomes.filter((o) => isReply(o.outcome) && o.outcome.status === 200).map((o) => o.content)
  t.same(storedContents, [...succeeded, 'final'], 'stored: every send answered with success, and none answered 503')
  const flagRows = await postgres.query<{ id: number; n: number }>(
    `SELECT m.id, count(um.user_id)::int AS n FROM message m LEFT JOIN user_message um ON um.message_id = m.id
     JOIN stream s ON s.id = m.stream_id WHERE s.name = 'outage' AND m.topic = 'pg' GROUP BY m.id HAVING count(um.user_id) <> 3`,
  )
  t.same(flagRows, [], 'every stored message has the flag rows of its three recipients')
  t.equal(others.length, 2)

  // The queue, served from Redis throughout, got every stored message exactly once.
  t.same(received, (stored.messages as Json[]).map((m) => m.id as number), 'the queue got every stored message once, in order')
  t.equal(received[received.length - 1], final.id)
})
