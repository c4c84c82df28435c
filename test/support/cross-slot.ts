// Shared by the Redis queue-store tests: catches commands a cluster would refuse.
import type { Redis } from 'ioredis'
import { hashSlot } from '../../src/events/queues/slots.js'

/** Records every command sent on the connection whose keys span more than one cluster slot. */
export function crossSlotCommands(redis: Redis): string[] {
  const seen: string[] = []
  const send = redis.sendCommand.bind(redis)
  Object.assign(redis, {
    sendCommand: (...args: Parameters<typeof send>) => {
      const keys = args[0].getKeys().map(String)
      if (new Set(keys.map(hashSlot)).size > 1) seen.push(`${args[0].name} ${keys.join(' ')}`)
      return send(...args)
    },
  })
  return seen
}
