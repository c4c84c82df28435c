import type { BusItem, EventBus } from './bus.js'

/** In-process bus for the embedded single-node mode. Delivers on a microtask, never synchronously. */
export class MemoryEventBus implements EventBus {
  private readonly listeners = new Set<(item: BusItem) => void>()

  async publish(item: BusItem): Promise<void> {
    const listeners = [...this.listeners]
    queueMicrotask(() => {
      for (const listener of listeners) listener(item)
    })
  }

  subscribe(onItem: (item: BusItem) => void): () => void {
    this.listeners.add(onItem)
    return () => this.listeners.delete(onItem)
  }

  async check(): Promise<void> {}

  async close(): Promise<void> {
    this.listeners.clear()
  }
}
