// What a node remembers of the queues it read (pure bookkeeping; the Redis
// store's use of it is tested in redis-queue-store.test.ts).
import t from 'tap'
import { KnownStates, type KnownState } from '../../src/events/queues/known-states.js'

const state = (issued: number, aliveUntil = 10_000): KnownState => ({ issued, pruned: issued, events: [], aliveUntil })
const events = (first: number, count: number) => () => Array.from({ length: count }, (_, i) => ({ id: first + i, type: 'alert_words' }))

t.test('remembers a read only while it listens', async (t) => {
  const known = new KnownStates()
  known.settle(known.ticket('q'), state(3))
  t.equal(known.lookup('q', 0), undefined, 'not listening yet')
  known.reset(true)
  known.settle(known.ticket('q'), state(3))
  t.same(known.lookup('q', 0), state(3))
})

t.test('a wake-up while the read is in flight keeps its result from being remembered', async (t) => {
  const known = new KnownStates()
  known.reset(true)
  const ticket = known.ticket('q')
  known.woken('q')
  known.settle(ticket, state(3))
  t.equal(known.lookup('q', 0), undefined)
  known.settle(known.ticket('q'), state(4))
  t.same(known.lookup('q', 0), state(4), 'a later read is remembered')
})

t.test('a wake-up forgets the remembered state', async (t) => {
  const known = new KnownStates()
  known.reset(true)
  known.settle(known.ticket('q'), state(3))
  known.woken('q')
  t.equal(known.lookup('q', 0), undefined)
})

t.test('a reconnection forgets everything, including reads in flight', async (t) => {
  const known = new KnownStates()
  known.reset(true)
  known.settle(known.ticket('a'), state(1))
  const inFlight = known.ticket('b')
  known.reset(false)
  t.equal(known.lookup('a', 0), undefined)
  known.reset(true)
  known.settle(inFlight, state(2))
  t.equal(known.lookup('b', 0), undefined, 'the read started before the reconnection')
})

t.test('a state is trusted only until the queue could expire, and touches extend it', async (t) => {
  const known = new KnownStates()
  known.reset(true)
  known.settle(known.ticket('q'), state(3, 1_000))
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
  known.settle(known.ticket('q'), state(3))
  known.appended('q', 4, 2, events(4, 2))
  t.match(known.lookup('q', 0), { issued: 5, pruned: 3, events: [{ id: 4 }, { id: 5 }] })
  known.appended('q', 4, 2, () => t.fail('already known: not parsed again') as never)
  t.match(known.lookup('q', 0), { issued: 5, events: [{ id: 4 }, { id: 5 }] }, 'the same events again change nothing')
  known.acknowledge('q', 4)
  t.match(known.lookup('q', 0), { issued: 5, pruned: 4, events: [{ id: 5 }] })
})

t.test('forgets the state on a gap in the IDs, or past the per-queue cap', async (t) => {
  const known = new KnownStates()
  known.reset(true)
  known.settle(known.ticket('q'), state(3))
  known.appended('q', 6, 1, events(6, 1))
  t.equal(known.lookup('q', 0), undefined, 'event 4 and 5 were missed')
  known.settle(known.ticket('r'), state(0))
  known.appended('r', 1, 101, events(1, 101))
  t.equal(known.lookup('r', 0), undefined, 'too many to hold')
})

t.test('an append while a read is in flight keeps the read from being remembered', async (t) => {
  const known = new KnownStates()
  known.reset(true)
  const ticket = known.ticket('q')
  known.appended('q', 0, 1, events(0, 1))
  known.settle(ticket, state(-1))
  t.equal(known.lookup('q', 0), undefined)
})

t.test('a prune made on another node drops the pruned events, or the state when it is behind', async (t) => {
  const known = new KnownStates()
  known.reset(true)
  known.settle(known.ticket('q'), { issued: 4, pruned: 1, events: events(2, 3)(), aliveUntil: 10_000 })
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
  known.settle(ticket, { issued: 3, pruned: 0, events: events(1, 3)(), aliveUntil: 10_000 })
  t.equal(known.lookup('q', 0), undefined)
})
