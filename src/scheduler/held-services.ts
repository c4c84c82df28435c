// Services whose database is one open transaction and whose bus holds events
// until that transaction commits. The delivery worker runs the ordinary send
// path (actions/send-message.ts) inside the transaction that claimed the
// scheduled row, so the message, its flags and the row's `delivered` mark
// commit together, and no event leaves before the commit.
import type { Services } from '../services.js'
import type { Tx } from '../db/index.js'
import { transactionAsClient } from '../db/transaction-client.js'
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

export function heldServices(services: Services, tx: Tx, bus: HeldBus): Services {
  return { ...services, prisma: transactionAsClient(tx), bus }
}
