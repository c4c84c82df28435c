import t from 'tap'
import { MemoryEventBus } from '../../src/events/memory-bus.js'
import { queueStoreFor } from '../../src/events/queues/index.js'
import { queueStoreContract } from './queue-store.contract.js'

queueStoreContract(t, async () => {
  const bus = new MemoryEventBus()
  return { store: queueStoreFor(bus), close: () => bus.close() }
})
