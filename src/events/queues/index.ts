// The event queues of one node over a queue store (backends/index.ts picks
// the store from the configuration).
import type { Config } from '../../config.js'
import { EventQueues } from './event-queues.js'
import type { QueueStore } from './types.js'

export function eventQueuesFor(store: QueueStore, config: Config, nodeId: string, onError: (error: unknown) => void): EventQueues {
  store.setMaxEvents(config.eventQueueMaxEvents)
  store.setMaxBytes(config.eventQueueMaxBytes)
  store.setMaxQueuesPerUser(config.eventQueuesPerUser)
  return new EventQueues(store, {
    nodeId,
    defaultLifespanSecs: config.eventQueueTimeoutSeconds,
    heartbeatSecs: config.heartbeatIntervalSeconds,
    // Work a poll does after its answer (releasing its mark) reports its errors here.
    onError,
  })
}

export { EventQueues } from './event-queues.js'
export type { GetEventsInput, RegisterQueueInput } from './event-queues.js'
export * from './types.js'
