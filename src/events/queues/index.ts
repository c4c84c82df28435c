// Picks the queue store that matches the bus: the Redis bus carries its own
// store; any other bus (the in-process one) gets one in-process store,
// shared by every node (app) built on that bus instance.
import type { Config } from '../../config.js'
import type { EventBus } from '../bus.js'
import { RedisEventBus } from '../redis-bus.js'
import { EventQueues } from './event-queues.js'
import { MemoryQueueStore } from './memory-store.js'
import type { QueueStore } from './types.js'

const memoryStores = new WeakMap<EventBus, MemoryQueueStore>()

export function queueStoreFor(bus: EventBus): QueueStore {
  if (bus instanceof RedisEventBus) return bus.queues
  let store = memoryStores.get(bus)
  if (!store) {
    const created = new MemoryQueueStore()
    memoryStores.set(bus, created)
    bus.subscribe((item) => created.appendNow(item))
    store = created
  }
  return store
}

export function eventQueuesFor(bus: EventBus, config: Config, nodeId: string): EventQueues {
  const store = queueStoreFor(bus)
  store.setMaxEvents(config.eventQueueMaxEvents)
  store.setMaxQueuesPerUser(config.eventQueuesPerUser)
  return new EventQueues(store, {
    nodeId,
    defaultLifespanSecs: config.eventQueueTimeoutSeconds,
    heartbeatSecs: config.heartbeatIntervalSeconds,
    // Work a poll does after its answer (releasing its mark) reports its errors here.
    onError: bus instanceof RedisEventBus ? (error) => bus.onError(error) : (error) => process.stderr.write(`roost: event queues: ${String(error)}\n`),
  })
}

export { EventQueues } from './event-queues.js'
export type { GetEventsInput, RegisterQueueInput } from './event-queues.js'
export * from './types.js'
