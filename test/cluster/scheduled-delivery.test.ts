// Three nodes on one database and one Redis, each running its delivery loop:
// 200 messages due in the same second are each delivered exactly once.
import { randomUUID } from 'node:crypto'
import t from 'tap'
import { buildTestApp } from '../support/app.js'
import { as } from '../support/client.js'
import { expectSuccess } from '../support/expect.js'
import type { BusItem } from '../../src/events/bus.js'
import { startScheduledDelivery } from '../../src/scheduler/delivery.js'

const COUNT = 200

t.test('200 messages due in the same second are delivered once each across three nodes', async (t) => {
  const redisPrefix = `test:${randomUUID()}`
  const a = await buildTestApp(t, { bus: 'redis', redisPrefix })
  const b = await buildTestApp(t, { bus: 'redis', redisPrefix, fixture: a.fx })
  const c = await buildTestApp(t, { bus: 'redis', redisPrefix, fixture: a.fx })
  const nodes = [a, b, c]
  const { member, otherMember, owner, admin, moderator } = a.fx.users
  // Four senders, each under the per-user bound on waiting scheduled messages.
  const senders = [member, owner, admin, moderator]
  const marker = randomUUID().slice(0, 8)

  // Scheduled through all three nodes, then all moved to one second.
  const ids: number[] = []
  for (let i = 0; i < COUNT; i += 20) {
    const batch = await Promise.all(
      Array.from({ length: Math.min(20, COUNT - i) }, (_, k) => {
        const n = i + k
        const node = nodes[n % 3]!
        const params =
          n % 2 === 0
            ? { type: 'direct', to: [otherMember.id], content: `${marker} #${n}` }
            : { type: 'channel', to: a.fx.streams.general.id, topic: `batch ${marker}`, content: `${marker} #${n}` }
        return as(node.app, senders[n % senders.length]!).post('/scheduled_messages', { ...params, scheduled_delivery_timestamp: Math.floor(Date.now() / 1000) + 3600 })
      }),
    )
    for (const res of batch) ids.push(expectSuccess(t, res).scheduled_message_id as number)
  }
  const dueSecond = Math.floor(Date.now() / 1000) + 2
  await a.services.prisma.scheduledMessage.updateMany({ where: { id: { in: ids } }, data: { scheduledTimestamp: new Date(dueSecond * 1000) } })

  // Every node sees every item on the Redis bus; count on node A.
  const removals = new Map<number, BusItem[]>()
  const allRemoved = new Promise<number>((resolve) => {
    const off = a.services.bus.subscribe((item) => {
      if (item.event.type !== 'scheduled_messages' || item.event.op !== 'remove') return
      const id = item.event.scheduled_message_id as number
      removals.set(id, [...(removals.get(id) ?? []), item])
      if (ids.every((x) => removals.has(x))) {
        off()
        resolve(Date.now())
      }
    })
  })
  const workers = nodes.map((node) => startScheduledDelivery(node.services, { log: node.app.log, realmIds: [a.fx.realm.id] }))
  t.teardown(() => Promise.all(workers.map((w) => w.stop())))

  const timeout = new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`only ${removals.size} of ${COUNT} delivered`)), 60_000).unref())
  const finishedAt = await Promise.race([allRemoved, timeout])
  await Promise.all(workers.map((w) => w.stop()))
  // Let any stray duplicate publication arrive before counting.
  await new Promise((resolve) => setTimeout(resolve, 300))

  const rows = await a.services.prisma.scheduledMessage.findMany({ where: { id: { in: ids } } })
  t.equal(rows.length, COUNT)
  t.ok(rows.every((r) => r.delivered && !r.failed), 'every row delivered, none failed')
  const messageIds = rows.map((r) => r.deliveredMessageId)
  t.equal(new Set(messageIds).size, COUNT, 'each row points at its own message')

  const messages = await a.services.prisma.message.findMany({ where: { realmId: a.fx.realm.id, content: { startsWith: marker } } })
  t.equal(messages.length, COUNT, 'exactly one message per scheduled row')
  t.equal(new Set(messages.map((m) => m.content)).size, COUNT)
  t.ok(messages.every((m) => m.dateSent.getTime() >= dueSecond * 1000), 'none sent early')
  t.ok([...removals.values()].every((items) => items.length === 1), 'one remove event per row')

  const byNode = new Map<string, number>()
  for (const [item] of removals.values()) if (item) byNode.set(item.origin, (byNode.get(item.origin) ?? 0) + 1)
  const first = Math.min(...messages.map((m) => m.dateSent.getTime()))
  // How soon after the due second is a measurement, not an assertion: the machine may be busy.
  t.comment(`deliveries per node: ${[...byNode.values()].join(', ')}; first ${first - dueSecond * 1000} ms, all ${COUNT} done ${finishedAt - dueSecond * 1000} ms after the due second`)
})
