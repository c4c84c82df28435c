// The bus over Redis pub/sub: every item published on any node reaches the
// subscribers of every node through one channel, `<prefix>:items`. On a
// Redis Cluster the channel is a shard channel (SPUBLISH / SSUBSCRIBE), so an
// item travels to the one shard that owns the channel rather than to every
// node of the cluster. The bus carries items only: the queue store's fan-out
// runs before the publish (backends/index.ts puts the two together).
import type { BusItem, EventBus } from './bus.js'
import type { RedisClient, RedisConnection } from '../redis-connection.js'

export class RedisEventBus implements EventBus {
  private readonly listeners = new Set<(item: BusItem) => void>()
  private subscriber: RedisClient | undefined
  private listening: Promise<void> | undefined
  private closed = false

  constructor(
    private readonly connection: RedisConnection,
    private readonly prefix: string,
    private readonly onError: (error: unknown) => void,
  ) {}

  private get channel(): string {
    return `${this.prefix}:items`
  }

  async publish(item: BusItem): Promise<void> {
    await this.connection.publish(this.channel, JSON.stringify(item))
  }

  subscribe(onItem: (item: BusItem) => void): () => void {
    this.listeners.add(onItem)
    if (!this.listening && !this.closed) {
      this.listening = this.listen()
      this.listening.catch((error: unknown) => this.onError(error))
    }
    return () => {
      this.listeners.delete(onItem)
    }
  }

  /** Resolves once the subscription (if any) is active: items published after it are delivered. */
  async ready(): Promise<void> {
    await this.listening
  }

  /** One subscriber connection per bus, subscribed at the first subscribe() and resubscribed by ioredis after reconnects. */
  private async listen(): Promise<void> {
    const subscriber = this.connection.newSubscriber(`${this.prefix}:bus`)
    this.subscriber = subscriber
    subscriber.on('error', (error: unknown) => this.onError(error))
    const deliver = (channel: string, message: string) => {
      if (channel !== this.channel) return
      let item: BusItem
      try {
        item = JSON.parse(message) as BusItem
      } catch (error) {
        this.onError(error)
        return
      }
      for (const listener of [...this.listeners]) listener(item)
    }
    if (this.connection.sharded) {
      subscriber.on('smessage', deliver)
      await subscriber.ssubscribe(this.channel)
    } else {
      subscriber.on('message', deliver)
      await subscriber.subscribe(this.channel)
    }
  }

  async check(): Promise<void> {
    await this.connection.check()
  }

  /** Stops delivering; the connection belongs to the backends and is closed with them. */
  async close(): Promise<void> {
    this.closed = true
    this.listeners.clear()
    await this.listening?.catch(() => undefined)
    this.subscriber?.disconnect()
    this.subscriber = undefined
  }
}
