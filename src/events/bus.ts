// The event bus: how an action's events leave the node that produced them.
// Queue filtering and storage live in events/queues; the bus only carries items.

import type { ChatEvent } from './schemas/index.js'

export type { ChatEvent }

/**
 * An event as queues store and filter it: loose JSON (events/queues turn a
 * ChatEvent into the per-queue variants: rendered, flags added, internal
 * fields removed). Builders in events/schemas produce the typed ChatEvent.
 */
export interface WireEvent {
  type: string
  [key: string]: unknown
}

export interface BusItem {
  realmId: number
  /** Users whose event queues may receive the event. */
  userIds: number[]
  event: ChatEvent
  /** Fields merged into the event for one recipient (e.g. message flags), keyed by user ID. */
  perUser?: Record<number, Record<string, unknown>>
  /** For message events in a public channel: lets all_public_streams queues receive it. */
  publicStreamId?: number
  /** Node ID of the publisher. */
  origin: string
  /** The PostgreSQL transaction (pg_current_xact_id) whose commit this item reports. */
  xid?: string
}

export interface EventBus {
  publish(item: BusItem): Promise<void>
  /**
   * Several items of one realm and one action, in order (optional: else one
   * publish each). A bus may deliver each queue's share of them together.
   */
  publishMany?(items: BusItem[]): Promise<void>
  subscribe(onItem: (item: BusItem) => void): () => void
  /** Throws when the bus cannot carry events (readiness probe). */
  check(): Promise<void>
  close(): Promise<void>
}
