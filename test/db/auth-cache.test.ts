// The authentication cache's own rules, on fake lookups and a fake clock:
// what it stores, the generation guard, writes in flight, eviction by user
// and by realm, TTL and size bounds. The invalidation itself is tested
// through HTTP in test/http/auth-cache.test.ts and test/cluster/auth-cache.test.ts.
import t from 'tap'
import { AuthCache, type UserWithRealm } from '../../src/db/auth-cache.js'
import type { Realm, User } from '../../src/db/index.js'
import { parseRowChange } from '../../src/db/row-listener.js'
import { changesOfModelOperation, changesOfRawSql } from '../../src/db/row-writes.js'

interface Deferred<T> {
  promise: Promise<T>
  resolve(value: T): void
}

function deferred<T>(): Deferred<T> {
  let resolve: (value: T) => void = () => {}
  const promise = new Promise<T>((r) => {
    resolve = r
  })
  return { promise, resolve }
}

const realm = (id: number, stringId = `realm${id}`): Realm => ({ id, stringId, deactivated: false }) as Realm
const user = (id: number, realmId: number, apiKey: string, extra: Partial<User> = {}): User => ({ id, realmId, apiKey, isActive: true, ...extra }) as User

/** A fake database: rows by key, each lookup counted; `hold()` makes the next lookups wait for release. */
function fakeLookups() {
  /** Rows by API key; presenceEnabled defaults to true (the column's default). */
  const users = new Map<string, Omit<UserWithRealm, 'presenceEnabled'> & { presenceEnabled?: boolean }>()
  const realms = new Map<string, Realm>()
  const calls = { users: 0, realms: 0 }
  let gate: Promise<void> | undefined
  return {
    users,
    realms,
    calls,
    hold(): () => void {
      const d = deferred<void>()
      gate = d.promise
      return () => {
        gate = undefined
        d.resolve()
      }
    },
    lookups: {
      async userWithRealmByApiKey(apiKey: string) {
        calls.users++
        const found = users.get(apiKey)
        const row = found ? { presenceEnabled: true, ...found } : null // read before waiting: the row as of the lookup's start
        if (gate) await gate
        return row
      },
      async realmByStringId(stringId: string) {
        calls.realms++
        const row = realms.get(stringId) ?? null
        if (gate) await gate
        return row
      },
    },
  }
}

function setup(options: { maxEntries?: number; maxBytes?: number; ttlMs?: number; maxLookupMs?: number } = {}) {
  const db = fakeLookups()
  let now = 1_000_000
  const cache = new AuthCache(db.lookups, { ...options, clock: () => now })
  cache.listening(true)
  const r1 = realm(1)
  const alice = { user: user(10, 1, 'a'.repeat(32)), realm: r1, presenceEnabled: true }
  db.users.set(alice.user.apiKey, alice)
  db.realms.set(r1.stringId, r1)
  return { db, cache, alice, r1, advance: (ms: number) => (now += ms) }
}

t.test('serves a second lookup from the cache, the same rows, frozen', async (t) => {
  const { db, cache, alice } = setup()
  const first = await cache.userWithRealmByApiKey(alice.user.apiKey)
  const second = await cache.userWithRealmByApiKey(alice.user.apiKey)
  t.same(second, alice)
  t.equal(first, second)
  t.equal(db.calls.users, 1)
  t.ok(Object.isFrozen(second?.user))
  t.ok(Object.isFrozen(second?.realm))
})

t.test("answers a cached user's presence_enabled, and nothing for a user it does not hold", async (t) => {
  const { db, cache, alice } = setup()
  const hidden = { user: user(12, 1, 'h'.repeat(32)), realm: alice.realm, presenceEnabled: false }
  db.users.set(hidden.user.apiKey, hidden)
  t.equal(cache.cachedPresenceEnabled(hidden.user), undefined, 'not looked up yet')
  await cache.userWithRealmByApiKey(hidden.user.apiKey)
  await cache.userWithRealmByApiKey(alice.user.apiKey)
  t.equal(cache.cachedPresenceEnabled(hidden.user), false)
  t.equal(cache.cachedPresenceEnabled(alice.user), true)
  t.equal(cache.cachedPresenceEnabled({ id: 99, apiKey: alice.user.apiKey }), undefined, "another user's key answers nothing")
  cache.changed({ table: 'user', id: hidden.user.id })
  t.equal(cache.cachedPresenceEnabled(hidden.user), undefined, 'evicted with the user')
  t.equal(db.calls.users, 2)
})

t.test("answers a cached user's row by ID until the entry goes, without counting a lookup", async (t) => {
  const { db, cache, alice, advance } = setup({ ttlMs: 1_000 })
  t.equal(cache.cachedUserById(alice.user.id), undefined, 'not looked up yet')
  await cache.userWithRealmByApiKey(alice.user.apiKey)
  t.equal(cache.cachedUserById(alice.user.id), (await cache.userWithRealmByApiKey(alice.user.apiKey))?.user, "the entry's own row")
  t.equal(cache.cachedUserById(99), undefined, 'nothing for a user it does not hold')
  t.equal(cache.hits, 1, 'only the lookup by key counted a hit')
  cache.changed({ table: 'user', id: alice.user.id })
  t.equal(cache.cachedUserById(alice.user.id), undefined, 'evicted with the user')
  await cache.userWithRealmByApiKey(alice.user.apiKey)
  t.ok(cache.cachedUserById(alice.user.id))
  cache.writeStarted([{ table: 'user', id: alice.user.id }])
  t.equal(cache.cachedUserById(alice.user.id), undefined, 'not while a write to the user is in flight')
  cache.writeSettled([{ table: 'user', id: alice.user.id }])
  await cache.userWithRealmByApiKey(alice.user.apiKey)
  advance(1_001)
  t.equal(cache.cachedUserById(alice.user.id), undefined, 'not past the TTL')
  cache.listening(false)
  t.equal(cache.cachedUserById(alice.user.id), undefined, 'not while the listener is down')
  t.equal(db.calls.users, 3)
})

t.test('never caches an unknown key or subdomain', async (t) => {
  const { db, cache } = setup()
  t.equal(await cache.userWithRealmByApiKey('b'.repeat(32)), null)
  db.users.set('b'.repeat(32), { user: user(11, 1, 'b'.repeat(32)), realm: realm(1) })
  t.equal((await cache.userWithRealmByApiKey('b'.repeat(32)))?.user.id, 11)
  t.equal(await cache.realmByStringId('nowhere'), null)
  db.realms.set('nowhere', realm(5, 'nowhere'))
  t.equal((await cache.realmByStringId('nowhere'))?.id, 5)
})

t.test('bypasses the cache while the listener is down, and flushes when it changes state', async (t) => {
  const { db, cache, alice } = setup()
  await cache.userWithRealmByApiKey(alice.user.apiKey)
  cache.listening(false)
  t.same(cache.size, { apiKeys: 0, realms: 0 })
  await cache.userWithRealmByApiKey(alice.user.apiKey)
  await cache.userWithRealmByApiKey(alice.user.apiKey)
  t.equal(db.calls.users, 3)
  t.same(cache.size, { apiKeys: 0, realms: 0 })
  cache.listening(true)
  await cache.userWithRealmByApiKey(alice.user.apiKey)
  await cache.userWithRealmByApiKey(alice.user.apiKey)
  t.equal(db.calls.users, 4)
})

t.test('generation guard: a lookup that started before an eviction stores nothing', async (t) => {
  const { db, cache, alice } = setup()
  const release = db.hold()
  const racing = cache.userWithRealmByApiKey(alice.user.apiKey)
  const deactivated = { user: { ...alice.user, isActive: false }, realm: alice.realm }
  db.users.set(alice.user.apiKey, deactivated)
  cache.changed({ table: 'user', id: alice.user.id })
  release()
  t.equal((await racing)?.user.isActive, true, 'the racing lookup answers its own request')
  t.equal((await cache.userWithRealmByApiKey(alice.user.apiKey))?.user.isActive, false, 'but did not store the old row')
  t.equal(db.calls.users, 2)
})

t.test("generation guard: an eviction of the user's realm counts too, an unrelated one does not", async (t) => {
  const { db, cache, alice } = setup()
  let release = db.hold()
  let racing = cache.userWithRealmByApiKey(alice.user.apiKey)
  cache.changed({ table: 'realm', id: alice.realm.id })
  release()
  await racing
  t.same(cache.size, { apiKeys: 0, realms: 0 })
  release = db.hold()
  racing = cache.userWithRealmByApiKey(alice.user.apiKey)
  cache.changed({ table: 'user', id: 999 })
  cache.changed({ table: 'realm', id: 998 })
  release()
  await racing
  t.same(cache.size, { apiKeys: 1, realms: 0 })
})

t.test('a write in flight on this node: evicted at once, nothing stored until it settles', async (t) => {
  const { db, cache, alice } = setup()
  await cache.userWithRealmByApiKey(alice.user.apiKey)
  const change = [{ table: 'user' as const, id: alice.user.id }]
  cache.writeStarted(change)
  t.same(cache.size, { apiKeys: 0, realms: 0 })
  await cache.userWithRealmByApiKey(alice.user.apiKey) // reads the committed (old) row: answered, not stored
  await cache.userWithRealmByApiKey(alice.user.apiKey)
  t.equal(db.calls.users, 3)
  t.same(cache.size, { apiKeys: 0, realms: 0 })
  db.users.set(alice.user.apiKey, { user: { ...alice.user, role: 200 }, realm: alice.realm })
  cache.writeSettled(change)
  t.equal((await cache.userWithRealmByApiKey(alice.user.apiKey))?.user.role, 200)
  t.equal((await cache.userWithRealmByApiKey(alice.user.apiKey))?.user.role, 200)
  t.equal(db.calls.users, 4)
})

t.test('a lookup in flight when a write settles stores nothing', async (t) => {
  const { db, cache, alice } = setup()
  const change = [{ table: 'user' as const, id: alice.user.id }]
  cache.writeStarted(change)
  const release = db.hold()
  const racing = cache.userWithRealmByApiKey(alice.user.apiKey)
  cache.writeSettled(change)
  release()
  await racing
  t.same(cache.size, { apiKeys: 0, realms: 0 })
})

t.test('two overlapping writes of one row: stored again only after both settle', async (t) => {
  const { cache, alice } = setup()
  const change = [{ table: 'user' as const, id: alice.user.id }]
  cache.writeStarted(change)
  cache.writeStarted(change)
  cache.writeSettled(change)
  await cache.userWithRealmByApiKey(alice.user.apiKey)
  t.same(cache.size, { apiKeys: 0, realms: 0 })
  cache.writeSettled(change)
  await cache.userWithRealmByApiKey(alice.user.apiKey)
  t.same(cache.size, { apiKeys: 1, realms: 0 })
})

t.test('a write to every row of a table flushes and blocks storing until it settles', async (t) => {
  const { cache, alice, r1 } = setup()
  await cache.userWithRealmByApiKey(alice.user.apiKey)
  await cache.realmByStringId(r1.stringId)
  const change = [{ table: 'user' as const, id: 'all' as const }]
  cache.writeStarted(change)
  t.same(cache.size, { apiKeys: 0, realms: 0 })
  await cache.userWithRealmByApiKey(alice.user.apiKey)
  await cache.realmByStringId(r1.stringId)
  t.same(cache.size, { apiKeys: 0, realms: 1 }, 'realms alone may be stored meanwhile')
  cache.writeSettled(change)
  await cache.userWithRealmByApiKey(alice.user.apiKey)
  t.same(cache.size, { apiKeys: 1, realms: 0 })
})

t.test("a realm's eviction drops its users' entries and its subdomain entry, not other realms'", async (t) => {
  const { db, cache, alice, r1 } = setup()
  const r2 = realm(2)
  const bob = { user: user(20, 2, 'c'.repeat(32)), realm: r2 }
  db.users.set(bob.user.apiKey, bob)
  db.realms.set(r2.stringId, r2)
  await cache.userWithRealmByApiKey(alice.user.apiKey)
  await cache.userWithRealmByApiKey(bob.user.apiKey)
  await cache.realmByStringId(r1.stringId)
  await cache.realmByStringId(r2.stringId)
  t.same(cache.size, { apiKeys: 2, realms: 2 })
  cache.changed({ table: 'realm', id: r1.id })
  t.same(cache.size, { apiKeys: 1, realms: 1 })
  const calls = db.calls.users
  await cache.userWithRealmByApiKey(bob.user.apiKey)
  t.equal(db.calls.users, calls)
})

t.test("the users of a realm share one realm object while its row is unchanged, and its bytes are not counted per user", async (t) => {
  // A realm row far larger than a user's: counted once per user, 20 of them would not fit in 200 KB.
  const { db, cache } = setup({ maxBytes: 200_000 })
  const big = (): Realm => ({ ...realm(3), description: 'x'.repeat(50_000) }) as Realm
  const keys = Array.from({ length: 20 }, (_, i) => `${String.fromCharCode(104 + i)}`.repeat(32))
  // Each lookup reads its own copy of the row, as the database does.
  keys.forEach((key, i) => db.users.set(key, { user: user(40 + i, 3, key), realm: big() }))
  const found: Array<UserWithRealm | null> = []
  for (const key of keys) found.push(await cache.userWithRealmByApiKey(key))
  t.equal(cache.size.apiKeys, 20, 'every user fits')
  t.ok(found.every((f) => f?.realm === found[0]?.realm), 'one realm object')
  t.ok(Object.isFrozen(found[0]?.realm))
  const calls = db.calls.users
  for (const key of keys) await cache.userWithRealmByApiKey(key)
  t.equal(db.calls.users, calls, 'all served from the cache')
  // The realm changes: its users' entries go, and they come back with the new row, not the old shared one.
  keys.forEach((key, i) => db.users.set(key, { user: user(40 + i, 3, key), realm: { ...big(), name: 'Renamed' } as Realm }))
  cache.changed({ table: 'realm', id: 3 })
  t.equal(cache.size.apiKeys, 0)
  const after = await cache.userWithRealmByApiKey(keys[0] as string)
  const again = await cache.userWithRealmByApiKey(keys[1] as string)
  t.equal(after?.realm.name, 'Renamed')
  t.equal(again?.realm, after?.realm, 'the new row is shared in turn')
})

t.test('a realm row read with other values than the shared one is not replaced by it', async (t) => {
  const { db, cache } = setup()
  const first = 'p'.repeat(32)
  const second = 'q'.repeat(32)
  db.users.set(first, { user: user(60, 4, first), realm: { ...realm(4), name: 'Old' } as Realm })
  db.users.set(second, { user: user(61, 4, second), realm: { ...realm(4), name: 'New' } as Realm })
  const a = await cache.userWithRealmByApiKey(first)
  const b = await cache.userWithRealmByApiKey(second)
  t.equal(a?.realm.name, 'Old')
  t.equal(b?.realm.name, 'New', 'each entry keeps the row its lookup read')
})

t.test("a user's new key replaces the entry under the old one", async (t) => {
  const { db, cache, alice } = setup()
  await cache.userWithRealmByApiKey(alice.user.apiKey)
  const newKey = 'd'.repeat(32)
  db.users.delete(alice.user.apiKey)
  db.users.set(newKey, { user: { ...alice.user, apiKey: newKey }, realm: alice.realm })
  await cache.userWithRealmByApiKey(newKey) // e.g. on a node whose NOTIFY is still on its way
  t.same(cache.size, { apiKeys: 1, realms: 0 })
  t.equal(await cache.userWithRealmByApiKey(alice.user.apiKey), null)
})

t.test('entries expire after the TTL', async (t) => {
  const { db, cache, alice, advance } = setup({ ttlMs: 1_000 })
  await cache.userWithRealmByApiKey(alice.user.apiKey)
  advance(999)
  await cache.userWithRealmByApiKey(alice.user.apiKey)
  t.equal(db.calls.users, 1)
  advance(1)
  await cache.userWithRealmByApiKey(alice.user.apiKey)
  t.equal(db.calls.users, 2)
})

t.test('holds at most maxEntries per map, dropping the oldest', async (t) => {
  const { db, cache } = setup({ maxEntries: 2 })
  const keys = ['e', 'f', 'g'].map((c) => c.repeat(32))
  keys.forEach((key, i) => db.users.set(key, { user: user(30 + i, 1, key), realm: realm(1) }))
  for (const key of keys) await cache.userWithRealmByApiKey(key)
  t.same(cache.size, { apiKeys: 2, realms: 0 })
  const calls = db.calls.users
  await cache.userWithRealmByApiKey(keys[2] as string)
  await cache.userWithRealmByApiKey(keys[1] as string)
  t.equal(db.calls.users, calls)
  await cache.userWithRealmByApiKey(keys[0] as string)
  t.equal(db.calls.users, calls + 1)
})

t.test('a lookup slower than maxLookupMs stores nothing (its eviction marks may be gone)', async (t) => {
  const { db, cache, alice, advance } = setup({ maxLookupMs: 100 })
  const release = db.hold()
  const slow = cache.userWithRealmByApiKey(alice.user.apiKey)
  advance(100)
  release()
  await slow
  t.same(cache.size, { apiKeys: 0, realms: 0 })
})

t.test('stores nothing once closed', async (t) => {
  const { db, cache, alice } = setup()
  await cache.close()
  cache.listening(true)
  await cache.userWithRealmByApiKey(alice.user.apiKey)
  await cache.userWithRealmByApiKey(alice.user.apiKey)
  t.equal(db.calls.users, 2)
  t.equal(cache.isActive, false)
})

t.test('which Prisma operations report which rows', async (t) => {
  const cases: [string, string, unknown, unknown][] = [
    ['User', 'update', { where: { id: 4 }, data: {} }, [{ table: 'user', id: 4 }]],
    ['User', 'updateMany', { where: { id: { in: [1, 2] } }, data: {} }, [{ table: 'user', id: 1 }, { table: 'user', id: 2 }]],
    ['User', 'updateMany', { where: { id: 3, isActive: false }, data: {} }, [{ table: 'user', id: 3 }]],
    ['User', 'updateMany', { where: { realmId: 1 }, data: {} }, [{ table: 'user', id: 'all' }]],
    ['User', 'upsert', { where: { email: 'x' } }, [{ table: 'user', id: 'all' }]],
    ['User', 'delete', { where: { id: 4 } }, [{ table: 'user', id: 'all' }, { table: 'realm', id: 'all' }]],
    ['Realm', 'update', { where: { id: 7 }, data: {} }, [{ table: 'realm', id: 7 }]],
    ['Realm', 'update', { where: { stringId: 'x' }, data: {} }, [{ table: 'realm', id: 'all' }]],
    ['Stream', 'deleteMany', { where: { id: 1 } }, [{ table: 'user', id: 'all' }, { table: 'realm', id: 'all' }]],
    ['Stream', 'update', { where: { id: 1 }, data: {} }, []],
    ['User', 'create', { data: {} }, []],
    ['User', 'findUnique', { where: { id: 1 } }, []],
    ['Message', 'deleteMany', { where: {} }, []],
    // The cache holds presence_enabled: a settings write is a write of its user.
    ['UserSettings', 'update', { where: { userId: 5 }, data: { presenceEnabled: false } }, [{ table: 'user', id: 5 }]],
    ['UserSettings', 'upsert', { where: { userId: 6 }, create: {}, update: {} }, [{ table: 'user', id: 6 }]],
    ['UserSettings', 'updateMany', { where: { userId: { in: [7, 8] } }, data: {} }, [{ table: 'user', id: 7 }, { table: 'user', id: 8 }]],
    ['UserSettings', 'updateMany', { where: { presenceEnabled: false }, data: {} }, [{ table: 'user', id: 'all' }]],
    ['UserSettings', 'delete', { where: { userId: 9 } }, [{ table: 'user', id: 9 }]],
    ['UserSettings', 'create', { data: { userId: 9 } }, []],
  ]
  for (const [model, operation, args, expected] of cases) {
    t.same(changesOfModelOperation(model, operation, args), expected, `${model}.${operation} ${JSON.stringify(args)}`)
  }
  t.same(changesOfRawSql('UPDATE user_profile SET full_name = $1 WHERE id = $2'), [{ table: 'user', id: 'all' }, { table: 'realm', id: 'all' }])
  t.same(changesOfRawSql('delete from "realm" where id = 1'), [{ table: 'user', id: 'all' }, { table: 'realm', id: 'all' }])
  t.same(changesOfRawSql('INSERT INTO user_message (user_id, message_id) SELECT unnest($1::int[]), $2'), [])
  t.same(changesOfRawSql('UPDATE message SET stream_id = $1'), [])
  t.same(changesOfRawSql('UPDATE realm_emoji SET deactivated = true'), [])
  t.same(changesOfRawSql('UPDATE stream SET name = $1'), [])
  t.same(changesOfRawSql('UPDATE user_settings SET presence_enabled = false'), [{ table: 'user', id: 'all' }, { table: 'realm', id: 'all' }])
  t.same(changesOfRawSql('DELETE FROM public.stream WHERE id = 1'), [{ table: 'user', id: 'all' }, { table: 'realm', id: 'all' }])
})

t.test('notification payloads', async (t) => {
  t.same(parseRowChange('u:12'), [{ table: 'user', id: 12 }])
  t.same(parseRowChange('r:3'), [{ table: 'realm', id: 3 }])
  t.same(parseRowChange('garbage'), [{ table: 'user', id: 'all' }, { table: 'realm', id: 'all' }])
})
