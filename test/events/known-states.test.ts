// What a node remembers of the queues it read (pure bookkeeping; the Redis
// store's use of it is tested in redis-queue-store.test.ts).
import t from 'tap'
import { KnownStates, MAX_BYTES, MAX_BYTES_PER_QUEUE, type KnownState } from '../../src/events/queues/known-states.js'

const state = (issued: number, aliveUntil = 10_000): KnownState => ({ issued, pruned: issued, events: [], aliveUntil })
/** JSON lengths of `count` events, `size` characters each. */
const sizes = (count: number, size = 30): number[] => Array.from({ length: count }, () => size)
const events = (first: number, count: number) => () => Array.from({ length: count }, (_, i) => ({ id: first + i, type: 'alert_words' }))

t.test('remembers a read only while it listens', async (t) => {
  const known = new KnownStates()
  known.settle(known.ticket('q'), state(3), [])
  t.equal(known.lookup('q', 0), undefined, 'not listening yet')
  known.reset(true)
  known.settle(known.ticket('q'), state(3), [])
  t.same(known.lookup('q', 0), state(3))
})

t.test('a wake-up while the read is in flight keeps its result from being remembered', async (t) => {
  const known = new KnownStates()
  known.reset(true)
  const ticket = known.ticket('q')
  known.woken('q')
  known.settle(ticket, state(3), [])
  t.equal(known.lookup('q', 0), undefined)
  known.settle(known.ticket('q'), state(4), [])
  t.same(known.lookup('q', 0), state(4), 'a later read is remembered')
})

t.test('a wake-up forgets the remembered state', async (t) => {
  const known = new KnownStates()
  known.reset(true)
  known.settle(known.ticket('q'), state(3), [])
  known.woken('q')
  t.equal(known.lookup('q', 0), undefined)
})

t.test('a reconnection forgets everything, including reads in flight', async (t) => {
  const known = new KnownStates()
  known.reset(true)
  known.settle(known.ticket('a'), state(1), [])
  const inFlight = known.ticket('b')
  known.reset(false)
  t.equal(known.lookup('a', 0), undefined)
  known.reset(true)
  known.settle(inFlight, state(2), [])
  t.equal(known.lookup('b', 0), undefined, 'the read started before the reconnection')
})

t.test('a state is trusted only until the queue could expire, and touches extend it', async (t) => {
  const known = new KnownStates()
  known.reset(true)
  known.settle(known.ticket('q'), state(3, 1_000), [])
  t.ok(known.lookup('q', 999))
  t.equal(known.lookup('q', 1_000), undefined)
  known.extend('q', 5_000)
  t.ok(known.lookup('q', 4_999))
  known.forget('q')
  t.equal(known.lookup('q', 0), undefined)
})

t.test('keeps appended events that follow on, and acknowledges them', async (t) => {
  const known = new KnownStates()
  known.reset(true)
  known.settle(known.ticket('q'), state(3), [])
  known.appended('q', 4, sizes(2), events(4, 2))
  t.match(known.lookup('q', 0), { issued: 5, pruned: 3, events: [{ id: 4 }, { id: 5 }] })
  known.appended('q', 4, sizes(2), () => t.fail('already known: not parsed again') as never)
  t.match(known.lookup('q', 0), { issued: 5, events: [{ id: 4 }, { id: 5 }] }, 'the same events again change nothing')
  known.acknowledge('q', 4)
  t.match(known.lookup('q', 0), { issued: 5, pruned: 4, events: [{ id: 5 }] })
})

t.test('forgets the state on a gap in the IDs, or past the per-queue cap', async (t) => {
  const known = new KnownStates()
  known.reset(true)
  known.settle(known.ticket('q'), state(3), [])
  known.appended('q', 6, sizes(1), events(6, 1))
  t.equal(known.lookup('q', 0), undefined, 'event 4 and 5 were missed')
  known.settle(known.ticket('r'), state(0), [])
  known.appended('r', 1, sizes(101), events(1, 101))
  t.equal(known.lookup('r', 0), undefined, 'too many to hold')
})

t.test('an append while a read is in flight keeps the read from being remembered', async (t) => {
  const known = new KnownStates()
  known.reset(true)
  const ticket = known.ticket('q')
  known.appended('q', 0, sizes(1), events(0, 1))
  known.settle(ticket, state(-1), [])
  t.equal(known.lookup('q', 0), undefined)
})

t.test('a prune made on another node drops the pruned events, or the state when it is behind', async (t) => {
  const known = new KnownStates()
  known.reset(true)
  known.settle(known.ticket('q'), { issued: 4, pruned: 1, events: events(2, 3)(), aliveUntil: 10_000 }, sizes(3))
  known.prunedElsewhere('q', 3)
  t.same(known.lookup('q', 0), { issued: 4, pruned: 3, events: events(4, 1)(), aliveUntil: 10_000 })
  known.prunedElsewhere('q', 2)
  t.equal(known.lookup('q', 0)?.pruned, 3, 'an older prune changes nothing')
  known.prunedElsewhere('q', 6)
  t.equal(known.lookup('q', 0), undefined, 'pruned past what this node has seen: forgotten')
})

t.test('a prune made on another node while a read is in flight keeps its result from being remembered', async (t) => {
  const known = new KnownStates()
  known.reset(true)
  const ticket = known.ticket('q')
  known.prunedElsewhere('q', 1)
  known.settle(ticket, { issued: 3, pruned: 0, events: events(1, 3)(), aliveUntil: 10_000 }, sizes(3))
  t.equal(known.lookup('q', 0), undefined)
})

t.test('forgets the state past the per-queue byte cap, whatever the event count', async (t) => {
  const known = new KnownStates()
  known.reset(true)
  known.settle(known.ticket('q'), state(0), [])
  known.appended('q', 1, sizes(2, MAX_BYTES_PER_QUEUE / 2), events(1, 2))
  t.match(known.lookup('q', 0), { issued: 2 }, 'exactly at the cap: kept')
  t.same(known.usage, { events: 2, bytes: MAX_BYTES_PER_QUEUE })
  known.appended('q', 3, sizes(1, 1), events(3, 1))
  t.equal(known.lookup('q', 0), undefined, 'one character more: forgotten')
  t.same(known.usage, { events: 0, bytes: 0 }, 'and its bytes freed')
  known.settle(known.ticket('r'), { issued: 1, pruned: 0, events: events(1, 1)(), aliveUntil: 10_000 }, sizes(1, MAX_BYTES_PER_QUEUE + 1))
  t.equal(known.lookup('r', 0), undefined, 'a read over the cap is not remembered')
})

t.test('acknowledging frees the bytes of the acknowledged events', async (t) => {
  const known = new KnownStates()
  known.reset(true)
  known.settle(known.ticket('q'), { issued: 3, pruned: 0, events: events(1, 3)(), aliveUntil: 10_000 }, [100, 200, 300])
  known.acknowledge('q', 2)
  t.same(known.usage, { events: 1, bytes: 300 })
  known.appended('q', 4, sizes(1, MAX_BYTES_PER_QUEUE - 300), events(4, 1))
  t.match(known.lookup('q', 0), { issued: 4, events: [{ id: 3 }, { id: 4 }] }, 'the freed bytes make room')
  known.woken('q')
  t.same(known.usage, { events: 0, bytes: 0 })
})

t.test('the node as a whole holds at most MAX_BYTES of events', async (t) => {
  const known = new KnownStates()
  known.reset(true)
  const perQueue = MAX_BYTES_PER_QUEUE
  const fit = MAX_BYTES / perQueue
  for (let i = 0; i < fit; i++) known.settle(known.ticket(`q${i}`), { issued: 1, pruned: 0, events: events(1, 1)(), aliveUntil: 10_000 }, [perQueue])
  t.same(known.usage, { events: fit, bytes: MAX_BYTES })
  known.settle(known.ticket('over'), { issued: 1, pruned: 0, events: events(1, 1)(), aliveUntil: 10_000 }, [1])
  t.equal(known.lookup('over', 0), undefined, 'one more character anywhere is not remembered')
  known.settle(known.ticket('empty'), state(5), [])
  known.appended('empty', 6, [1], events(6, 1))
  t.equal(known.lookup('empty', 0), undefined, 'nor appended')
  known.forget('q0')
  known.settle(known.ticket('over'), { issued: 1, pruned: 0, events: events(1, 1)(), aliveUntil: 10_000 }, [1])
  t.ok(known.lookup('over', 0), 'room again once a queue is forgotten')
})
