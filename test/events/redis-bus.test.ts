import t from 'tap'
import { TEST_REDIS_URL } from '../support/config.js'
import { busContract, redisBuses } from './bus.contract.js'

busContract(t, 'one Redis', redisBuses({ kind: 'single', url: TEST_REDIS_URL }))
