// The listening side of the Redis queue store: one subscribe-mode connection,
// the channel of each node listening through it, and what each such node
// knows of the queues it read (known-states.ts), kept current from the
// messages on its channel (format: lua.ts, WAKE). With `sharded` (a Redis
// Cluster that knows SPUBLISH) each node's channel is a shard channel:
// SSUBSCRIBEd on the master owning its slot, through ioredis's sharded
// subscribers (one connection per master).
import { subscriberOf, watchShardedSubscribers, watchSubscriptionMoves, type RedisClient } from '../../redis-connection.js'
import { KnownStates } from './known-states.js'
import type { WireEvent } from '../bus.js'
import type { QueuedEvent, WakeSignal } from './types.js'

/** After a failed resubscription (a shard's master still down), the next attempt. */
const RESUBSCRIBE_RETRY_MS = 500

export interface RedisSignalsOptions {
  /** CLIENT SETNAME of the subscriber connection(s). */
  connectionName: string
  onError: (error: unknown) => void
  /**
   * Whether a node may answer polls from what it knows (false: every poll
   * reads Redis). It may only when a script's wake-ups reach the node before
   * the script's reply reaches the node that ran it, as on one server.
   * Default true.
   */
  rememberStates?: boolean
  /** Sharded pub/sub (SSUBSCRIBE), on a cluster that knows it (RedisConnection.sharded). Default false. */
  sharded?: boolean
}

export class RedisSignals {
  /** Handlers of the subscriber connection, by channel. */
  private readonly channels = new Map<string, (message: string) => void>()
  private subscriber: RedisClient | undefined
  private unwatch: (() => void)[] = []
  /** Per listening node: what it knows of the queues it read, and its signal handler. */
  private readonly known = new Map<string, KnownStates>()
  private readonly handlers = new Map<string, (signal: WakeSignal) => void>()
  private readonly connectionName: string
  private readonly onError: (error: unknown) => void
  private readonly rememberStates: boolean
  private readonly sharded: boolean
  private resubscribing = false
  private resubscribeAgain = false
  /** Failed sharded resubscriptions in a row (expected while a master fails over; reported now and then). */
  private failedResubscriptions = 0
  private retryTimer: NodeJS.Timeout | undefined
  private closed = false

  constructor(
    private readonly redis: RedisClient,
    options: RedisSignalsOptions,
  ) {
    this.connectionName = options.connectionName
    this.onError = options.onError
    this.rememberStates = options.rememberStates ?? true
    this.sharded = options.sharded ?? false
  }

  /** What a listening node knows (undefined for a node that does not listen here). */
  knownBy(nodeId: string | undefined): KnownStates | undefined {
    return nodeId === undefined ? undefined : this.known.get(nodeId)
  }

  /** Every listening node's knowledge. */
  allKnown(): Iterable<KnownStates> {
    return this.known.values()
  }

  /** Delivers the signals on `channel` (a node's) to `onSignal`, keeping the node's knowledge current. */
  async listen(nodeId: string, channel: string, onSignal: (signal: WakeSignal) => void): Promise<() => Promise<void>> {
    const known = new KnownStates()
    this.known.set(nodeId, known)
    const unsubscribe = await this.onChannel(channel, (message) => deliver(known, message, onSignal))
    known.reset(this.rememberStates && this.subscriber?.status === 'ready')
    this.handlers.set(nodeId, onSignal)
    return async () => {
      if (this.known.get(nodeId) === known) this.known.delete(nodeId)
      if (this.handlers.get(nodeId) === onSignal) this.handlers.delete(nodeId)
      known.reset(false)
      await unsubscribe()
    }
  }

  /** Subscribes `handler` to a channel on the shared subscriber connection; returns the unsubscribe. */
  async onChannel(channel: string, handler: (message: string) => void): Promise<() => Promise<void>> {
    const subscriber = this.subscriberConnection()
    this.channels.set(channel, handler)
    await this.subscribe(subscriber, [channel])
    return async () => {
      if (this.channels.get(channel) !== handler) return
      this.channels.delete(channel)
      if (subscriber.status !== 'ready') return
      await (this.sharded ? subscriber.sunsubscribe(channel) : subscriber.unsubscribe(channel)).catch(this.onError)
    }
  }

  close(): void {
    this.closed = true
    if (this.retryTimer) clearTimeout(this.retryTimer)
    this.resetKnown(false)
    this.known.clear()
    this.handlers.clear()
    this.channels.clear()
    for (const unwatch of this.unwatch) unwatch()
    this.unwatch = []
    if (this.subscriber) {
      this.subscriber.disconnect()
      this.subscriber = undefined
    }
  }

  /** SUBSCRIBE, or SSUBSCRIBE one channel at a time (each node's channel is its own slot, and one SSUBSCRIBE names one slot). */
  private async subscribe(subscriber: RedisClient, channels: string[]): Promise<void> {
    if (this.sharded) await Promise.all(channels.map((channel) => subscriber.ssubscribe(channel)))
    else await subscriber.subscribe(...channels)
  }

  private subscriberConnection(): RedisClient {
    if (!this.subscriber) {
      const subscriber = subscriberOf(this.redis, this.connectionName, { sharded: this.sharded })
      this.subscriber = subscriber
      subscriber.on('error', this.onError)
      subscriber.on(this.sharded ? 'smessage' : 'message', (channel: string, message: string) => this.channels.get(channel)?.(message))
      // Signals sent while the connection was down are lost: forget every
      // remembered state, and trust new ones only once the channels are
      // subscribed again (our own SUBSCRIBE is answered after ioredis's
      // automatic resubscription, on the same connection); then every held
      // poll reads its queue again.
      let lost = false
      subscriber.on('close', () => {
        lost = true
        this.resetKnown(false)
      })
      if (this.sharded) {
        // A cluster's sharded subscribers: one connection per master, rebuilt
        // by ioredis when one is lost or the slots move (a failover). Each
        // rebuild may have lost messages of the channels it moved, so each is
        // followed by our own SSUBSCRIBEs and a resync of every held poll.
        this.unwatch.push(
          watchShardedSubscribers(subscriber, {
            lost: () => this.resetKnown(false),
            rebuilt: () => this.resubscribe(subscriber),
          }),
        )
      } else {
        subscriber.on('ready', () => {
          if (!lost) return
          lost = false
          this.resubscribe(subscriber)
        })
        // On a cluster the subscription may move to another node without the
        // connection closing: the same then (forget, subscribe, resync).
        this.unwatch.push(
          watchSubscriptionMoves(subscriber, () => {
            this.resetKnown(false)
            this.resubscribe(subscriber)
          }),
        )
      }
    }
    return this.subscriber
  }

  /**
   * Subscribes every channel again, then tells every listening node to
   * resync (its held polls read their queues). One attempt at a time; a
   * failed one (the channel's master still down) is tried again shortly,
   * and the resync waits for a successful one. (With sharded subscribers
   * ioredis records each SSUBSCRIBE's channels again, so its list of a slot's
   * channels grows by ours at each rebuild: a few entries per failover, and
   * SSUBSCRIBE of a channel twice is harmless.)
   */
  private resubscribe(subscriber: RedisClient): void {
    if (this.closed || this.channels.size === 0) return
    if (this.resubscribing) {
      this.resubscribeAgain = true
      return
    }
    this.resubscribing = true
    this.resubscribeAgain = false
    this.resetKnown(false)
    this.subscribe(subscriber, [...this.channels.keys()]).then(
      () => {
        this.resubscribing = false
        this.failedResubscriptions = 0
        if (this.closed) return
        this.resetKnown(this.rememberStates && subscriber.status === 'ready')
        for (const onSignal of this.handlers.values()) onSignal({ kind: 'resync' })
        if (this.resubscribeAgain) this.resubscribe(subscriber)
      },
      (error: unknown) => {
        this.resubscribing = false
        if (this.closed) return
        // On a cluster a rebuild follows once the failover is done; retry meanwhile too.
        if (this.sharded) {
          if (++this.failedResubscriptions % 20 === 0) this.onError(error)
          if (this.retryTimer) clearTimeout(this.retryTimer)
          this.retryTimer = setTimeout(() => {
            this.retryTimer = undefined
            this.resubscribe(subscriber)
          }, RESUBSCRIBE_RETRY_MS)
        } else {
          this.onError(error)
        }
      },
    )
  }

  private resetKnown(live: boolean): void {
    for (const known of this.known.values()) known.reset(live)
  }
}

/**
 * One message on a node's channel: updates what the node knows, then signals
 * its polls. A message may be several scripts' messages joined by newlines
 * (wake-sender.ts): each defines its variants before using them.
 */
function deliver(known: KnownStates, message: string, onSignal: (signal: WakeSignal) => void): void {
  const lines = message.split('\n')
  const variants = new Map<string, string>()
  const queued = queuedEventMaker()
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] as string
    if (line.startsWith('v ')) {
      variants.set(line.slice(2), lines[++i] ?? '{}')
    } else if (line.startsWith('e ')) {
      const [, queueId = '', first, count] = line.split(' ')
      const n = Number(count)
      const firstId = Number(first)
      // Resolved now: a later part of the message may define its own variants under the same numbers.
      const jsons = lines.slice(i + 1, i + 1 + n).map((ref) => variants.get(ref.slice(1)) ?? '{}')
      i += n
      known.appended(
        queueId,
        firstId,
        jsons.map((json) => json.length),
        () => jsons.map((json, k) => queued(json, firstId + k)),
      )
      onSignal({ kind: 'wake', queueId })
    } else if (line.startsWith('w ')) {
      const queueId = line.slice(2)
      known.woken(queueId)
      onSignal({ kind: 'wake', queueId })
    } else if (line.startsWith('p ')) {
      const [, queueId, upTo] = line.split(' ')
      if (queueId && upTo) known.prunedElsewhere(queueId, Number(upTo))
    } else if (line.startsWith('s ')) {
      const [, queueId, token] = line.split(' ')
      if (queueId && token) onSignal({ kind: 'supersede', queueId, token })
    }
  }
}

/**
 * Makes queued events from event JSON without an ID: each distinct JSON is
 * parsed once, however many queues got it, and their events share its
 * (read-only) fields. One per append or per message.
 */
export function queuedEventMaker(): (json: string, id: number) => QueuedEvent {
  const parsed = new Map<string, WireEvent>()
  return (json, id) => {
    let template = parsed.get(json)
    if (template === undefined) parsed.set(json, (template = JSON.parse(json) as WireEvent))
    return { id, ...template }
  }
}

/** The events of a FETCH reply: `[id, json, id, json, …]`, each distinct JSON parsed once. */
export function eventsFromPairs(flat: string[]): QueuedEvent[] {
  const queued = queuedEventMaker()
  const events: QueuedEvent[] = []
  for (let i = 0; i < flat.length; i += 2) events.push(queued(flat[i + 1] as string, Number(flat[i])))
  return events
}
