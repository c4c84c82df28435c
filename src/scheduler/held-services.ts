// Services whose database is one open transaction and whose bus holds events
// until that transaction commits. The delivery worker runs the ordinary send
// path (actions/send-message.ts) inside the transaction that claimed the
// scheduled row, so the message, its flags and the row's `delivered` mark
// commit together, and no event leaves before the commit.
//
// This is the one adapter that presents Prisma's transaction client as a
// PrismaClient: a nested `$transaction(fn)` runs `fn` in the same transaction.
import type { Services } from '../actions/context.js'
import type { PrismaClient, Tx } from '../db/index.js'
import type { BusItem, EventBus } from '../events/bus.js'

export class HeldBus implements EventBus {
  private held: BusItem[] = []

  constructor(private readonly inner: EventBus) {}

  async publish(item: BusItem): Promise<void> {
    this.held.push(item)
  }

  subscribe(onItem: (item: BusItem) => void): () => void {
    return this.inner.subscribe(onItem)
  }

  check(): Promise<void> {
    return this.inner.check()
  }

  async close(): Promise<void> {}

  /** Publishes what was held, in order (after the commit). */
  async release(): Promise<void> {
    const items = this.held
    this.held = []
    for (const item of items) await this.inner.publish(item)
  }

  discard(): void {
    this.held = []
  }
}

function transactionAsClient(tx: Tx): PrismaClient {
  const runInside = <T>(fn: (inner: Tx) => Promise<T>): Promise<T> => fn(tx)
  const client = new Proxy(tx, {
    get(target, property) {
      if (property === '$transaction') return runInside
      const value: unknown = Reflect.get(target, property)
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value
    },
  })
  return client as unknown as PrismaClient
}

export function heldServices(services: Services, tx: Tx, bus: HeldBus): Services {
  return { ...services, prisma: transactionAsClient(tx), bus }
}
