// Sends the wake-ups queue scripts returned (lua.ts, WakingScript) when the
// node channels are shard channels (a Redis Cluster that knows SPUBLISH).
// The wake-ups of every script reply that arrives in one turn of the event
// loop (a fan-out's replies from one master come in one read) are sent
// together: per channel one SPUBLISH of their messages joined by newlines
// (each script's part defines its own variants before using them, so the
// joined message reads as its parts in order; redis-signals.ts), all issued
// at once, so auto-pipelining sends each master its share in one write.
// A fan-out to many queues thus costs one message per listening node and
// reply batch, never one per queue.
//
// A message that cannot be sent (the channel's master is failing over) is
// sent again a few times in the background; `send` resolves after the first
// attempt and never rejects, as the script's writes stand and the caller's
// answer does not depend on the wake-up. If the channel's master died, the
// listening node lost its subscription with it and has every held poll read
// its queue once it has subscribed again (redis-signals.ts); a poll still
// waiting wakes at its heartbeat at the latest.
import type { RedisClient } from '../../redis-connection.js'
import type { WakeRoute } from './lua.js'

/** Later attempts at a message that could not be sent: after these delays (ms). */
const RETRY_DELAYS_MS = [200, 500, 1_000, 2_000, 5_000]
/** Joined messages for one channel are cut at about this size (as a script caps its own, lua.ts WAKE). */
const JOINED_MAX_BYTES = 262_144

export class WakeSender implements WakeRoute {
  private readonly timers = new Set<NodeJS.Timeout>()
  private closed = false
  /** Messages waiting for the end of this turn of the event loop, by channel. */
  private pending = new Map<string, string[]>()
  private flushing: Promise<void> | undefined

  constructor(
    private readonly redis: RedisClient,
    /** true: SPUBLISH the wake-ups scripts return; false: the scripts PUBLISH them themselves. */
    readonly sharded: boolean,
    private readonly onError: (error: unknown) => void,
  ) {}

  /** Sends `wakes` (channel, message, channel, message…) with the others of this turn; resolves once they were sent (or failed). */
  send(wakes: string[]): Promise<void> {
    for (let i = 0; i + 1 < wakes.length; i += 2) {
      const channel = wakes[i] as string
      const messages = this.pending.get(channel)
      if (messages) messages.push(wakes[i + 1] as string)
      else this.pending.set(channel, [wakes[i + 1] as string])
    }
    this.flushing ??= new Promise<void>((resolve) => {
      setImmediate(() => {
        const batch = this.pending
        this.pending = new Map()
        this.flushing = undefined
        void this.publishAll(batch).then(resolve)
      })
    })
    return this.flushing
  }

  private async publishAll(batch: Map<string, string[]>): Promise<void> {
    const sends: Promise<void>[] = []
    for (const [channel, messages] of batch) {
      let joined = ''
      for (const message of messages) {
        if (joined !== '' && joined.length + message.length > JOINED_MAX_BYTES) {
          sends.push(this.attempt(channel, joined, 0))
          joined = ''
        }
        joined = joined === '' ? message : `${joined}\n${message}`
      }
      if (joined !== '') sends.push(this.attempt(channel, joined, 0))
    }
    await Promise.all(sends)
  }

  private async attempt(channel: string, message: string, retry: number): Promise<void> {
    try {
      await this.redis.spublish(channel, message)
    } catch (error) {
      const delay = RETRY_DELAYS_MS[retry]
      if (delay === undefined || this.closed) {
        this.onError(error)
        return
      }
      const timer = setTimeout(() => {
        this.timers.delete(timer)
        void this.attempt(channel, message, retry + 1)
      }, delay)
      this.timers.add(timer)
    }
  }

  /** Drops the messages still waiting for another attempt. */
  close(): void {
    this.closed = true
    for (const timer of this.timers) clearTimeout(timer)
    this.timers.clear()
  }
}
