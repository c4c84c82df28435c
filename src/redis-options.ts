// Connection settings shared by every ioredis connection of a node (the event
// bus, its subscriber, the rate limiter). While Redis is unreachable a command
// waits for at most one reconnection attempt, then fails, and the request is
// answered 503 SERVER_NOT_READY; the connection keeps reconnecting (every
// second at most) for as long as it takes, and the node serves again as soon
// as Redis is back, with no restart.
import type { RedisOptions } from 'ioredis'

export const REDIS_RECONNECT_MAX_MS = 1_000

export const REDIS_OPTIONS: RedisOptions = {
  lazyConnect: true,
  maxRetriesPerRequest: 1,
  connectTimeout: 5_000,
  retryStrategy: (attempt: number) => Math.min(50 * 2 ** Math.min(attempt, 10), REDIS_RECONNECT_MAX_MS),
}
