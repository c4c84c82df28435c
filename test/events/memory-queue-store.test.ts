import t from 'tap'
import { MemoryEventBus } from '../../src/events/memory-bus.js'
import { memoryQueueStoreOf } from '../../src/backends/index.js'
import { queueStoreContract } from './queue-store.contract.js'

queueStoreContract(t, async () => {
  const bus = new MemoryEventBus()
  return { store: memoryQueueStoreOf(bus), close: () => bus.close(), answersFromMemory: true }
})
