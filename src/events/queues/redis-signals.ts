// The listening side of the Redis queue store: one subscribe-mode connection,
// the channel of each node listening through it, and what each such node
// knows of the queues it read (known-states.ts), kept current from the
// messages on its channel (format: lua.ts, WAKE).
import { subscriberOf, watchSubscriptionMoves, type RedisClient } from '../../backends/redis-connection.js'
import { KnownStates } from './known-states.js'
import type { WireEvent } from '../bus.js'
import type { QueuedEvent, WakeSignal } from './types.js'

export class RedisSignals {
  /** Handlers of the subscriber connection, by channel. */
  private readonly channels = new Map<string, (message: string) => void>()
  private subscriber: RedisClient | undefined
  private unwatchMoves: () => void = () => undefined
  /** Per listening node: what it knows of the queues it read, and its signal handler. */
  private readonly known = new Map<string, KnownStates>()
  private readonly handlers = new Map<string, (signal: WakeSignal) => void>()

  constructor(
    private readonly redis: RedisClient,
    private readonly connectionName: string,
    private readonly onError: (error: unknown) => void,
    /**
     * Whether a node may answer polls from what it knows (false: every poll
     * reads Redis). It may only when a script's wake-ups reach the node before
     * the script's reply reaches the node that ran it, as on one server.
     */
    private readonly rememberStates = true,
  ) {}

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
    await subscriber.subscribe(channel)
    return async () => {
      if (this.channels.get(channel) !== handler) return
      this.channels.delete(channel)
      if (subscriber.status === 'ready') await subscriber.unsubscribe(channel).catch(this.onError)
    }
  }

  close(): void {
    this.resetKnown(false)
    this.known.clear()
    this.handlers.clear()
    this.channels.clear()
    this.unwatchMoves()
    if (this.subscriber) {
      this.subscriber.disconnect()
      this.subscriber = undefined
    }
  }

  private subscriberConnection(): RedisClient {
    if (!this.subscriber) {
      const subscriber = subscriberOf(this.redis, this.connectionName)
      this.subscriber = subscriber
      subscriber.on('error', this.onError)
      subscriber.on('message', (channel: string, message: string) => this.channels.get(channel)?.(message))
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
      const resubscribed = () => {
        const channels = [...this.channels.keys()]
        if (channels.length === 0) return
        subscriber.subscribe(...channels).then(
          () => {
            this.resetKnown(this.rememberStates && subscriber.status === 'ready')
            for (const onSignal of this.handlers.values()) onSignal({ kind: 'resync' })
          },
          (error: unknown) => this.onError(error),
        )
      }
      subscriber.on('ready', () => {
        if (!lost) return
        lost = false
        resubscribed()
      })
      // On a cluster the subscription may move to another node without the
      // connection closing: the same then (forget, subscribe, resync).
      this.unwatchMoves = watchSubscriptionMoves(subscriber, () => {
        this.resetKnown(false)
        resubscribed()
      })
    }
    return this.subscriber
  }

  private resetKnown(live: boolean): void {
    for (const known of this.known.values()) known.reset(live)
  }
}

/** One message on a node's channel: updates what the node knows, then signals its polls. */
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
      const refs = lines.slice(i + 1, i + 1 + n)
      i += n
      known.appended(queueId, firstId, n, () => refs.map((ref, k) => queued(variants.get(ref.slice(1)) ?? '{}', firstId + k)))
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
