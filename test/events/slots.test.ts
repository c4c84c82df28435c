import t from 'tap'
import { groupBySlot, hashSlot } from '../../src/events/queues/slots.js'

t.test('computes the Redis Cluster slot of a key, hash tags included', async (t) => {
  // Values as Redis's CLUSTER KEYSLOT gives them.
  t.equal(hashSlot('foo'), 12182)
  t.equal(hashSlot('bar'), 5061)
  t.equal(hashSlot('{user1000}.following'), hashSlot('user1000'), 'only the tag is hashed')
  t.equal(hashSlot('{user1000}.following'), 3443)
  t.equal(hashSlot('x{}y'), 16116, 'an empty tag: the whole key')
  t.equal(hashSlot('a{b}c{d}'), hashSlot('b'), 'the first tag')
  t.equal(hashSlot('roost:q:{abc}'), hashSlot('roost:q:{abc}:e'), "a queue's keys share its slot")
})

t.test('groups by slot only when asked', async (t) => {
  const keys = ['p:q:{a}', 'p:q:{b}', 'p:q:{a}:e']
  t.same(groupBySlot(keys, (k) => k, false), [keys], 'one server: one group')
  t.same(groupBySlot(keys, (k) => k, true), [['p:q:{a}', 'p:q:{a}:e'], ['p:q:{b}']])
  t.same(groupBySlot([], (k: string) => k, false), [])
})
