import { randomUUID } from 'node:crypto'
import t from 'tap'
import { RedisEventBus } from '../../src/events/redis-bus.js'
import { queueStoreContract } from './queue-store.contract.js'

const REDIS_URL = process.env.ROOST_TEST_REDIS_URL || 'redis://127.0.0.1:6379'

queueStoreContract(t, async () => {
  const bus = await RedisEventBus.connect(REDIS_URL, { prefix: `test:${randomUUID()}` })
  return { store: bus.queues, close: () => bus.close() }
})
