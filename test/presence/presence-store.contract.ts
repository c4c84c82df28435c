// The presence store's behaviour, run against each implementation: in process
// and Redis (presence-store.test.ts), a Redis Cluster (test/topology).
import type { Test } from 'tap'
import { randomInt, randomUUID } from 'node:crypto'
import { PRESENCE_UPDATE_MIN_FREQ_SECONDS, type PresenceStore } from '../../src/presence/store.js'
import { RedisPresenceStore } from '../../src/presence/redis-store.js'
import { RedisConnection, type RedisTarget } from '../../src/redis-connection.js'

export interface PresenceHarness {
  /** Two nodes' stores over the same backend (the same object in process). */
  stores: [PresenceStore, PresenceStore]
  close(): Promise<void>
}

export function presenceStoreContract(t: Test, name: string, open: () => Promise<PresenceHarness>): void {
  t.test(`presence store: ${name}`, async (t) => {
    const { stores, close } = await open()
    t.teardown(close)
    const [a, b] = stores
    // Realm IDs of their own, so runs against a shared Redis do not meet.
    const realm = randomInt(1_000_000, 2 ** 31 - 1)
    const now = 1_700_000_000

    t.test('a first report writes the row; the other node reads it', async (t) => {
      const first = await a.report(realm, 1, 'active', now)
      t.equal(first.before, null)
      t.match(first.after, { userId: 1, activeTime: now, lastConnectedTime: now })
      t.equal(first.written, true)
      t.same(await b.get(realm, 1), first.after)
    })

    t.test('a report within the write interval changes nothing; after it, the row moves on with a new update ID', async (t) => {
      const before = await b.get(realm, 1)
      const quiet = await b.report(realm, 1, 'active', now + 10)
      t.equal(quiet.written, false)
      t.same(quiet.after, before)
      const idle = await b.report(realm, 1, 'idle', now + PRESENCE_UPDATE_MIN_FREQ_SECONDS)
      t.equal(idle.written, true)
      t.match(idle.after, { activeTime: now, lastConnectedTime: now + PRESENCE_UPDATE_MIN_FREQ_SECONDS })
      t.ok(idle.after.updateId > (before?.updateId ?? 0), 'the realm sequence advanced')
    })

    t.test('update IDs of one realm increase across users and nodes; list returns every row', async (t) => {
      const two = await a.report(realm, 2, 'idle', now)
      const three = await b.report(realm, 3, 'active', now)
      t.ok(three.after.updateId > two.after.updateId)
      t.same((await a.list(realm)).map((r) => r.userId).sort(), [1, 2, 3])
      t.same(await b.list(realm + 1), [], 'another realm is empty')
    })

    t.test('changedSince returns every row from -1, then only those written after an update ID, with the sequence', async (t) => {
      const all = await b.changedSince(realm, -1)
      t.same(all.rows.map((r) => r.userId).sort(), [1, 2, 3])
      t.equal(all.seq, Math.max(...all.rows.map((r) => r.updateId)))
      t.same(await a.changedSince(realm, all.seq), { seq: all.seq, rows: [] }, 'nothing new')
      const four = await a.report(realm, 4, 'active', now)
      const moved = await b.report(realm, 2, 'active', now + 2 * PRESENCE_UPDATE_MIN_FREQ_SECONDS)
      const since = await b.changedSince(realm, all.seq)
      t.same(since.rows.sort((x, y) => x.userId - y.userId), [moved.after, four.after])
      t.equal(since.seq, moved.after.updateId)
      t.same(await a.changedSince(realm + 1, -1), { seq: 0, rows: [] }, 'another realm has none')
    })

    t.test('replace overwrites the row', async (t) => {
      const row = await a.replace(realm, 2, null, now - 3600)
      t.match(row, { userId: 2, activeTime: null, lastConnectedTime: now - 3600 })
      t.same(await b.get(realm, 2), row)
    })
  })
}

/** Two nodes, each with its own connection to `target`, sharing a key prefix. */
export async function redisPresence(target: RedisTarget): Promise<PresenceHarness> {
  const prefix = `test:${randomUUID()}`
  const connections = [await RedisConnection.open(target), await RedisConnection.open(target)] as const
  return {
    stores: [new RedisPresenceStore(connections[0].client, prefix), new RedisPresenceStore(connections[1].client, prefix)],
    close: async () => {
      await Promise.all(connections.map((c) => c.close()))
    },
  }
}

