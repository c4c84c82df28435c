import t from 'tap'
import { MemoryPresenceStore } from '../../src/presence/store.js'
import { TEST_REDIS_URL } from '../support/config.js'
import { presenceStoreContract, redisPresence } from './presence-store.contract.js'

presenceStoreContract(t, 'in process', async () => {
  const store = new MemoryPresenceStore()
  return { stores: [store, store], close: async () => undefined }
})

presenceStoreContract(t, 'Redis', () => redisPresence({ kind: 'single', url: TEST_REDIS_URL }))
