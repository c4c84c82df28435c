import t from 'tap'
import { MemoryEventBus } from '../../src/events/memory-bus.js'
import { busContract } from './bus.contract.js'

busContract(t, 'in process', async () => {
  // Nodes in one process share one bus.
  const bus = new MemoryEventBus()
  return { nodes: [bus, bus], settled: async () => undefined, close: () => bus.close() }
})
