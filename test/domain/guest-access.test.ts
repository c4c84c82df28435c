import t from 'tap'
import { accessDelta, channelPeersAround, reachableUserIds, type SubscriptionChange } from '../../src/domain/guest-access.js'

const sorted = (s: Set<number>): number[] => [...s].sort((a, b) => a - b)

t.test('a restricted guest reaches itself, bots, channel peers and direct-message partners', async (t) => {
  t.same(sorted(reachableUserIds(1, { channelPeers: [1, 2], dmPartners: [1, 3], botIds: [9] })), [1, 2, 3, 9])
  t.same(sorted(reachableUserIds(1, { channelPeers: [], dmPartners: [], botIds: [] })), [1])
})

t.test('accessDelta ignores people still reachable another way', async (t) => {
  const before = { channelPeers: [1, 2, 3, 4], dmPartners: [3], botIds: [4] }
  const after = { channelPeers: [1, 5], dmPartners: [3], botIds: [4] }
  t.same(accessDelta(1, before, after), { gained: [5], lost: [2] })
  t.same(accessDelta(1, after, after), { gained: [], lost: [] })
})

t.test('channelPeersAround rebuilds the state before a change from the state after it', async (t) => {
  // Channels 10 and 11; guest 1 and guest 2 are watched.
  const cases: { name: string; change: SubscriptionChange; guestStreams: [number, number[]][]; subscribers: [number, number[]][]; want: Record<number, { before: number[]; after: number[] }> }[] = [
    {
      name: 'the guest joins a channel',
      change: { op: 'add', streamsByUser: new Map([[1, [11]]]) },
      guestStreams: [[1, [10, 11]]],
      subscribers: [[10, [1, 3]], [11, [1, 4, 5]]],
      want: { 1: { before: [1, 3], after: [1, 3, 4, 5] } },
    },
    {
      name: 'someone joins the guest\'s channel; a second guest joins too',
      change: { op: 'add', streamsByUser: new Map([[4, [10]], [2, [10]]]) },
      guestStreams: [[1, [10]], [2, [10]]],
      subscribers: [[10, [1, 2, 3, 4]]],
      want: { 1: { before: [1, 3], after: [1, 2, 3, 4] }, 2: { before: [], after: [1, 2, 3, 4] } },
    },
    {
      name: 'the guest leaves its last channel',
      change: { op: 'remove', streamsByUser: new Map([[1, [10]]]) },
      guestStreams: [[1, []]],
      subscribers: [[10, [3]]],
      want: { 1: { before: [1, 3], after: [] } },
    },
    {
      name: 'someone leaves a channel the guest shares with them elsewhere',
      change: { op: 'remove', streamsByUser: new Map([[3, [10]]]) },
      guestStreams: [[1, [10, 11]]],
      subscribers: [[10, [1]], [11, [1, 3]]],
      want: { 1: { before: [1, 3], after: [1, 3] } },
    },
  ]
  for (const c of cases) {
    const got = channelPeersAround(c.change, { guestStreams: new Map(c.guestStreams), subscribers: new Map(c.subscribers) })
    const plain = Object.fromEntries([...got].map(([id, { before, after }]) => [id, { before: sorted(before), after: sorted(after) }]))
    t.same(plain, c.want, c.name)
  }
})
