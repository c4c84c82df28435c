// Picks the presence store for a node: Redis when the event bus is the Redis
// bus (REDIS_URL set), sharing its connection, key prefix and lifetime; in
// process otherwise.
import type { Redis } from 'ioredis'
import type { EventBus } from '../events/bus.js'
import { RedisPresenceStore } from './redis-store.js'
import { MemoryPresenceStore, type PresenceStore } from './store.js'

export * from './store.js'

interface RedisBacked {
  redis: Redis
  prefix: string
}

const isRedisBacked = (bus: EventBus): bus is EventBus & RedisBacked =>
  'redis' in bus && 'prefix' in bus && typeof (bus as { prefix: unknown }).prefix === 'string'

export function presenceStoreFor(bus: EventBus): PresenceStore {
  return isRedisBacked(bus) ? new RedisPresenceStore(bus.redis, bus.prefix) : new MemoryPresenceStore()
}
