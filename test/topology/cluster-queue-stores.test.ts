// The queue-store contract on a real 3-master Redis Cluster (one stream per
// queue). On a cluster every poll reads Redis (answerFromMemory off) and work
// spanning queues or users is split per hash slot, so this exercises what one
// server cannot: MOVED routing of every script and multi-key command. The
// contract runs twice: with wake-ups on shard channels (as on Redis 7) and by
// plain PUBLISH (older servers).
import { randomUUID } from 'node:crypto'
import t from 'tap'
import { RedisConnection } from '../../src/redis-connection.js'
import { RedisQueueStore } from '../../src/events/queues/redis-store.js'
import { queueStoreContract } from '../events/queue-store.contract.js'
import { startRedisCluster } from '../support/redis-topology.js'

t.setTimeout(300_000)

const cluster = await startRedisCluster(t)

t.test('the cluster knows SPUBLISH (Redis 7)', async (t) => {
  const connection = await RedisConnection.open(cluster.target)
  t.equal(connection.sharded, true)
  await connection.close()
})

// Wake-ups on shard channels (SPUBLISH after each script, SSUBSCRIBE; Redis 7, as the
// server opens the stores), and by plain PUBLISH from the scripts (a cluster without SPUBLISH).
for (const sharded of [true, false]) {
  t.test(`one stream per queue, ${sharded ? 'sharded' : 'plain'} pub/sub`, async (t) => {
    queueStoreContract(t, async () => {
      const connection = await RedisConnection.open(cluster.target)
      const store = new RedisQueueStore(connection.client, `test:${randomUUID()}`, { sharded })
      return {
        store,
        async close() {
          await store.close()
          await connection.close()
        },
      }
    })
  })
}
