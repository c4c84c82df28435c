// Two nodes' backends as the server opens them (openBackends), on one fresh
// key prefix, for the topology tests: node B records the realm IDs of the bus
// items it receives; `reach()` publishes on node A until B has one.
import type { Test } from 'tap'
import { randomUUID } from 'node:crypto'
import { openBackends, type Backends } from '../../src/backends/index.js'
import type { Config } from '../../src/config.js'

export interface TwoNodes {
  a: Backends
  b: Backends
  /** Realm IDs of the items node B received, in order. */
  received: number[]
  /** Publishes items of realm `realmId` on node A every 50 ms until B received one (B subscribes in the background), or throws after 10 s. */
  reach(realmId: number): Promise<void>
}

export async function twoNodes(t: Test, config: Config): Promise<TwoNodes> {
  const prefix = `test:${randomUUID()}`
  const a = await openBackends(config, { redisPrefix: prefix })
  const b = await openBackends(config, { redisPrefix: prefix })
  t.teardown(async () => {
    await a.close()
    await b.close()
  })
  const received: number[] = []
  b.bus.subscribe((item) => received.push(item.realmId))
  return {
    a,
    b,
    received,
    async reach(realmId) {
      const deadline = Date.now() + 10_000
      while (!received.includes(realmId)) {
        if (Date.now() > deadline) throw new Error(`no item of realm ${realmId} reached node B`)
        await a.bus.publish({ realmId, userIds: [], event: { type: 'alert_words', alert_words: [] }, origin: 'a' })
        await new Promise((r) => setTimeout(r, 50))
      }
    },
  }
}
