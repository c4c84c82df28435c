// The queue store: one event queue per registered client, holding the events
// it accepted (after filtering) under strictly increasing IDs until the client
// acknowledges them. Two implementations: in-process (embedded) and Redis.
import type { NarrowTerm } from '../../domain/narrow.js'
import type { BusItem, WireEvent } from '../bus.js'

export const CLIENT_CAPABILITY_KEYS = [
  'notification_settings_null',
  'bulk_message_deletion',
  'user_avatar_url_field_optional',
  'stream_typing_notifications',
  'user_settings_object',
  'linkifier_url_template',
  'user_list_incomplete',
  'empty_topic_name',
  'archived_channels',
  'include_deactivated_groups',
] as const
export type ClientCapability = (typeof CLIENT_CAPABILITY_KEYS)[number]
export type ClientCapabilities = Record<ClientCapability, boolean>

export const NO_CAPABILITIES: ClientCapabilities = Object.fromEntries(CLIENT_CAPABILITY_KEYS.map((k) => [k, false])) as ClientCapabilities

/**
 * How long a store remembers that a queue was deleted (wasDeleted): far longer
 * than a held poll takes to be woken and read its queue again.
 */
export const DELETED_QUEUE_MEMORY_SECS = 600

/** Upstream's MAX_QUEUE_TIMEOUT_SECS: the longest lifespan a client may ask for. */
export const MAX_QUEUE_LIFESPAN_SECS = 7 * 24 * 3600

/** What a queue was registered with. Immutable after creation; the last touch lives in the store. */
export interface QueueDescriptor {
  queueId: string
  userId: number
  /** The user's API email when the queue was made (legacy settings events carry it). */
  userEmail: string
  realmId: number
  /** null: every type. */
  eventTypes: string[] | null
  narrow: NarrowTerm[]
  allPublicStreams: boolean
  capabilities: ClientCapabilities
  applyMarkdown: boolean
  clientExtavatar: boolean
  slimPresence: boolean
  /** Idle seconds before the queue is garbage-collected. */
  lifespanSecs: number
  /** UNIX milliseconds. */
  createdAt: number
}

export interface QueuedEvent extends WireEvent {
  id: number
}

export type FetchOutcome =
  /**
   * `ackOwed` (only when the fetch was asked to defer): nothing follows
   * last_event_id, which acknowledges events still to be pruned; the caller
   * parks its poll with ackAndPark(…, ackOwed), or fetches again without deferring.
   */
  | { kind: 'ok'; events: QueuedEvent[]; ackOwed?: number }
  /** Unknown, deleted, collected or dropped for exceeding the backlog cap. */
  | { kind: 'gone' }
  /** last_event_id is older than one already acknowledged. */
  | { kind: 'pruned'; newestPruned: number }
  /** last_event_id was never issued by this queue. */
  | { kind: 'ahead' }

/**
 * Sent to the node holding a long-poll: new events, or a newer poll took the
 * queue over; `resync`: signals may have been lost (the subscription dropped
 * and is back), so every held poll reads its queue again.
 */
export type WakeSignal = { kind: 'wake'; queueId: string } | { kind: 'supersede'; queueId: string; token: string } | { kind: 'resync' }

/** Identifies one held long-poll: the node that holds it and a token unique to the request. */
export interface Holder {
  nodeId: string
  token: string
}

/** A held long-poll of a queue, as its mark is released. */
export interface HeldPoll {
  desc: QueueDescriptor
  holder: Holder
}

export interface QueueStore {
  create(desc: QueueDescriptor): Promise<void>
  /** The descriptor of a live queue (no touch). */
  describe(queueId: string): Promise<QueueDescriptor | null>
  /**
   * The descriptor, possibly of a queue that has since gone (fetch and remove
   * then report it): may come from a cache, then without a promise.
   */
  descriptorOf(queueId: string): QueueDescriptor | null | Promise<QueueDescriptor | null>
  /**
   * Prunes events up to lastEventId, touches the queue and returns the rest.
   * `nodeId`: the reading node, once it listens for signals; a store may then
   * answer from what that node already knows of the queue. `deferAck`: a
   * long-poll about to park; when nothing is new but an acknowledgement is
   * owed, a store may leave it to ackAndPark (one round trip for both). An
   * answer from memory may come without a promise (a poll's hot path).
   */
  fetch(desc: QueueDescriptor, lastEventId: number, nodeId?: string, deferAck?: boolean): FetchOutcome | Promise<FetchOutcome>
  /** false when the queue did not exist. Remembers the removal for DELETED_QUEUE_MEMORY_SECS (wasDeleted). */
  remove(desc: QueueDescriptor): Promise<boolean>
  /**
   * Whether remove() took the queue away lately (not garbage collection, a
   * backlog cap or the per-user cap): a long-poll held on it then finishes
   * with no events, as upstream finishes the handler of a deleted queue.
   */
  wasDeleted(queueId: string): Promise<boolean>
  /** The live queues of a user, oldest first (the admin CLI lists them). */
  queuesOf(userId: number): Promise<QueueDescriptor[]>
  /** Fans one published item out to every queue that accepts it. */
  append(item: BusItem): Promise<void>
  /** Several items of one realm, in order, each queue's share in one append with one wake-up (optional: else one append each). */
  appendMany?(items: BusItem[]): Promise<void>
  /** Appends a heartbeat (bypasses filtering). */
  heartbeat(desc: QueueDescriptor): Promise<void>
  /** Marks the queue as held by `holder`; a previous holder is sent a supersede signal. false when the queue is gone. */
  park(desc: QueueDescriptor, holder: Holder): Promise<boolean>
  /**
   * Optional (with deferred acknowledgements): acknowledges up to `upTo` and
   * parks, atomically. 'stale': the queue moved on elsewhere, nothing was done
   * (read it, then park).
   */
  ackAndPark?(desc: QueueDescriptor, holder: Holder, upTo: number, nodeId: string): Promise<'parked' | 'gone' | 'stale'>
  /** Clears the marks of answered polls (those not taken over since). */
  unpark(released: HeldPoll[]): Promise<void>
  /** Receives the wake signals addressed to nodeId. */
  listen(nodeId: string, onSignal: (signal: WakeSignal) => void): Promise<() => Promise<void>>
  /** The unacknowledged-backlog cap (EVENT_QUEUE_MAX_EVENTS). */
  setMaxEvents(max: number): void
  /**
   * The unacknowledged-backlog cap in bytes (EVENT_QUEUE_MAX_BYTES: each
   * event's JSON, filter.ts eventBytes); past it the queue is dropped as past
   * the event cap.
   */
  setMaxBytes(max: number): void
  /**
   * Live queues per user (EVENT_QUEUES_PER_USER): create() past it drops the
   * user's oldest queues (by createdAt), which then answer as gone.
   */
  setMaxQueuesPerUser(max: number): void
  /** Remembers the database snapshot the queue's register state was read at (pg_current_snapshot text). */
  setSnapshot(queueId: string, snapshot: string, ttlSecs: number): Promise<void>
  snapshotOf(queueId: string): Promise<string | null>
}
