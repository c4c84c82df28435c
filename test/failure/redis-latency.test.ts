// Redis made slow (a TCP proxy holding every chunk 25 ms each way, so every
// round trip takes 50 ms more) under a three-node cluster: everything still
// works, only slower. No request fails, /readyz stays ready, and events
// published on one node reach long-polls held on the others exactly once.
import t from 'tap'
import { Client, delayProxy, isReply, readiness, startCluster, startPostgres, startRedis, type Json, type RoostNode } from './processes.js'

const DELAY_MS = 25

t.test(`Redis ${2 * DELAY_MS} ms slower per round trip`, async (t) => {
  const redis = await startRedis(t)
  const proxy = await delayProxy(t, redis.port, DELAY_MS)
  const postgres = await startPostgres(t)
  const nodes = await startCluster(t, { databaseUrl: postgres.url, redisUrl: proxy.url })
  const [a, b, c] = nodes as [RoostNode, RoostNode, RoostNode]
  const owner = await Client.login(a)
  t.teardown(() => owner.close())
  await owner.ok(a, 'POST', '/users/me/subscriptions', { subscriptions: [{ name: 'slow' }] })

  // One queue per node, each polled on the next node; messages sent through the third.
  const queues = await Promise.all(nodes.map((node) => owner.ok(node, 'POST', '/register', { event_types: ['message'] })))
  const received: number[][] = queues.map(() => [])
  const cursors = queues.map(() => -1)
  const sent: number[] = []
  const timings: number[] = []
  for (let round = 0; round < 12; round++) {
    const start = Date.now()
    const polls = queues.map((q, i) => owner.call(nodes[(i + 1 + round) % 3] as RoostNode, 'GET', '/events', { queue_id: q.queue_id, last_event_id: cursors[i] }))
    const res = await owner.ok(nodes[round % 3] as RoostNode, 'POST', '/messages', { type: 'stream', to: 'slow', topic: 'latency', content: `round ${round}` })
    sent.push(res.id as number)
    const answers = await Promise.all(polls)
    timings.push(Date.now() - start)
    answers.forEach((answer, i) => {
      t.ok(isReply(answer) && answer.status === 200 && answer.body.result === 'success', `round ${round}, queue ${i}: ${JSON.stringify(answer).slice(0, 200)}`)
      if (!isReply(answer) || answer.status !== 200) return
      for (const e of answer.body.events as Json[]) {
        cursors[i] = e.id as number
        if (e.type === 'message') received[i]?.push(e.message.id as number)
      }
    })
  }
  t.comment(`send → delivered on three nodes: ${timings.join(', ')} ms (not asserted)`)
  t.same(received, queues.map(() => sent), 'every queue got every message once, in order')

  // The rest of the queue life cycle, and readiness.
  for (const node of nodes) t.equal(await readiness(node), 200, `${node.name} stays ready`)
  const empty = await owner.ok(b, 'GET', '/events', { queue_id: queues[0]?.queue_id, last_event_id: cursors[0], dont_block: true })
  t.same(empty.events, [])
  await owner.ok(c, 'DELETE', '/events', { queue_id: queues[0]?.queue_id })
  t.match(await owner.call(a, 'GET', '/events', { queue_id: queues[0]?.queue_id, last_event_id: cursors[0], dont_block: true }), {
    status: 400,
    body: { result: 'error', code: 'BAD_EVENT_QUEUE_ID' },
  })
  t.ok(proxy.relayed() > 0, `the nodes' Redis traffic went through the delaying proxy (${proxy.relayed()} bytes)`)
})
