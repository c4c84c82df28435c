// The EventBus contract (bus.ts), run against every implementation: in process
// (memory-bus.test.ts), one Redis (redis-bus.test.ts), a Redis Cluster and
// Sentinel (test/topology). A bus carries items from any node to the
// subscribers of every node; queue filtering is not its business.
import type { Test } from 'tap'
import { randomUUID } from 'node:crypto'
import type { BusItem, EventBus } from '../../src/events/bus.js'
import { RedisEventBus } from '../../src/events/redis-bus.js'
import { RedisConnection, type RedisTarget } from '../../src/redis-connection.js'

export interface BusHarness {
  /** The buses of two nodes on one backend (in process: the same bus). */
  nodes: [EventBus, EventBus]
  /** Resolves once the subscriptions made so far are active (items published after it are delivered). */
  settled(): Promise<void>
  close(): Promise<void>
}

const WAIT_MS = 5_000

function item(overrides: Partial<BusItem> = {}): BusItem {
  return { realmId: 7, userIds: [1, 2], event: { type: 'alert_words', alert_words: [randomUUID()] }, origin: 'contract', ...overrides }
}

/** Collects what a subscriber receives; `next(n)` resolves with the first n items, or rejects after WAIT_MS. */
function collector(bus: EventBus) {
  const received: BusItem[] = []
  let wake: (() => void) | undefined
  const stop = bus.subscribe((i) => {
    received.push(i)
    wake?.()
  })
  return {
    received,
    stop,
    async next(n: number): Promise<BusItem[]> {
      const deadline = Date.now() + WAIT_MS
      while (received.length < n) {
        const left = deadline - Date.now()
        if (left <= 0) throw new Error(`${received.length} of ${n} items within ${WAIT_MS} ms`)
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, left)
          wake = () => {
            clearTimeout(timer)
            resolve()
          }
        })
      }
      return received.slice(0, n)
    },
  }
}

export function busContract(t: Test, name: string, open: () => Promise<BusHarness>): void {
  t.test(`event bus: ${name}`, async (t) => {
    t.test('an item reaches the subscribers of every node, every field intact', async (t) => {
      const h = await open()
      t.teardown(() => h.close())
      const [a, b] = h.nodes
      const onA = collector(a)
      const onB = collector(b)
      await h.settled()
      const sent = item({ perUser: { 1: { flags: ['read'] } }, publicStreamId: 3, xid: '812' })
      await a.publish(sent)
      t.same(await onA.next(1), [sent], 'the publishing node')
      t.same(await onB.next(1), [sent], 'another node')
    })

    t.test('never delivers during publish() itself', async (t) => {
      const h = await open()
      t.teardown(() => h.close())
      const [a] = h.nodes
      const on = collector(a)
      await h.settled()
      const publishing = a.publish(item())
      t.equal(on.received.length, 0, 'nothing delivered synchronously')
      await publishing
      await on.next(1)
    })

    t.test("one publisher's items arrive in the order published", async (t) => {
      const h = await open()
      t.teardown(() => h.close())
      const [a, b] = h.nodes
      const on = collector(b)
      await h.settled()
      const sent = Array.from({ length: 50 }, (_, i) => item({ realmId: i }))
      await Promise.all(sent.map((i) => a.publish(i)))
      t.same((await on.next(50)).map((i) => i.realmId), sent.map((i) => i.realmId))
    })

    t.test('an unsubscribed listener hears nothing more; the others still do', async (t) => {
      const h = await open()
      t.teardown(() => h.close())
      const [a, b] = h.nodes
      const gone = collector(b)
      const stays = collector(b)
      await h.settled()
      gone.stop()
      await a.publish(item())
      await stays.next(1)
      // The item reached node B: a listener still subscribed would have had it by now.
      t.equal(gone.received.length, 0)
    })

    t.test('check() passes on a working bus; close() stops delivery', async (t) => {
      const h = await open()
      const [a, b] = h.nodes
      await a.check()
      await b.check()
      const on = collector(a)
      await h.settled()
      await h.close()
      t.equal(on.received.length, 0)
      t.pass('closed')
    })
  })
}

/** Two nodes' Redis buses on `target`, each with its own connection, sharing a prefix. */
export function redisBuses(target: RedisTarget): () => Promise<BusHarness> {
  return async () => {
    const prefix = `test:${randomUUID()}`
    const connections = [await RedisConnection.open(target), await RedisConnection.open(target)]
    const errors: unknown[] = []
    const buses = connections.map((c) => new RedisEventBus(c, prefix, (error) => errors.push(error)))
    return {
      nodes: [buses[0] as RedisEventBus, buses[1] as RedisEventBus],
      settled: async () => {
        await Promise.all(buses.map((b) => b.ready()))
      },
      async close() {
        await Promise.all(buses.map((b) => b.close()))
        await Promise.all(connections.map((c) => c.close()))
      },
    }
  }
}
