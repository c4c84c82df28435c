// The sender of wake-ups on shard channels (wake-sender.ts): the wake-ups of
// one event-loop turn share one SPUBLISH per channel, a failed one is sent
// again, and the listener reads a joined message as its parts in order, each
// with its own variants. The last test runs on one Redis server (sharded
// pub/sub works there too).
import { randomUUID } from 'node:crypto'
import t from 'tap'
import { RedisConnection, type RedisClient } from '../../src/redis-connection.js'
import { RedisSignals } from '../../src/events/queues/redis-signals.js'
import { WakeSender } from '../../src/events/queues/wake-sender.js'
import type { WakeSignal } from '../../src/events/queues/types.js'
import { eventually } from '../support/eventually.js'

const REDIS_URL = process.env.ROOST_TEST_REDIS_URL || 'redis://127.0.0.1:6379'

/** A stand-in for the connection: records SPUBLISHes; `failures` of them reject first. */
function fakeClient(failures = 0) {
  const published: [string, string][] = []
  let left = failures
  const client = {
    async spublish(channel: string, message: string) {
      if (left > 0) {
        left--
        throw new Error('connection lost')
      }
      published.push([channel, message])
      return 1
    },
  }
  return { client: client as unknown as RedisClient, published }
}

t.test('wake-ups of one turn share one SPUBLISH per channel, joined in order', async (t) => {
  const { client, published } = fakeClient()
  const sender = new WakeSender(client, true, (error) => t.fail(String(error)))
  await Promise.all([sender.send(['n:a', 'w q1', 'n:b', 'w q2']), sender.send(['n:a', 'w q3'])])
  t.same(published, [
    ['n:a', 'w q1\nw q3'],
    ['n:b', 'w q2'],
  ])
  await sender.send(['n:a', 'w q4'])
  t.same(published.slice(2), [['n:a', 'w q4']], 'a later turn sends its own')
})

t.test('a wake-up that fails is sent again; after close a failure is reported', async (t) => {
  const { client, published } = fakeClient(1)
  const errors: unknown[] = []
  const sender = new WakeSender(client, true, (error) => errors.push(error))
  await sender.send(['n:a', 'w q1'])
  t.same(published, [], 'the first attempt failed')
  await eventually('sent again', () => published.length > 0, { timeoutMs: 5_000, intervalMs: 50 }).catch(() => undefined)
  t.same(published, [['n:a', 'w q1']], 'sent again')
  t.same(errors, [])

  const failing = fakeClient(1)
  const closed = new WakeSender(failing.client, true, (error) => errors.push(error))
  closed.close()
  await closed.send(['n:a', 'w q2'])
  t.equal(errors.length, 1, 'reported, not retried, once closed')
})

t.test('a joined message on a shard channel is read as its parts: each part with its own variants', async (t) => {
  const connection = await RedisConnection.open({ kind: 'single', url: REDIS_URL })
  const signals = new RedisSignals(connection.client, { connectionName: 'test-wake-sender', onError: (error) => t.fail(String(error)), sharded: true })
  t.teardown(async () => {
    signals.close()
    await connection.close()
  })
  const channel = `test:${randomUUID()}:node:n1`
  const signalled: WakeSignal[] = []
  await signals.listen('n1', channel, (signal) => signalled.push(signal))
  const known = signals.knownBy('n1')!
  for (const queueId of ['q1', 'q2']) known.settle(known.ticket(queueId), { issued: 4, pruned: 4, events: [], aliveUntil: Date.now() + 60_000 }, [])
  // Two scripts' messages: both call their first variant "1", with different events.
  const first = ['v 1', '{"type":"alert_words","alert_words":["one"]}', 'e q1 5 1', '@1'].join('\n')
  const second = ['v 1', '{"type":"alert_words","alert_words":["two"]}', 'e q2 5 1', '@1'].join('\n')
  const sender = new WakeSender(connection.client, true, (error) => t.fail(String(error)))
  await Promise.all([sender.send([channel, first]), sender.send([channel, second])])
  await eventually('both signals', () => signalled.length >= 2, { timeoutMs: 5_000, intervalMs: 20 }).catch(() => undefined)
  t.same(signalled, [
    { kind: 'wake', queueId: 'q1' },
    { kind: 'wake', queueId: 'q2' },
  ])
  t.same(known.lookup('q1', Date.now())?.events, [{ id: 5, type: 'alert_words', alert_words: ['one'] }])
  t.same(known.lookup('q2', Date.now())?.events, [{ id: 5, type: 'alert_words', alert_words: ['two'] }])
})
