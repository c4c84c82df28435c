// The user-data cache's own rules, on fake loads, a fake clock and a fake
// invalidation listener: bypass until the listener is up, eviction by user
// and flushes, the generation guard for reads in flight, TTL and size bounds,
// failed loads, close() and listener errors.
import t, { type Test } from 'tap'
import { UserDataCache, type UserDataCacheOptions } from '../../src/db/user-data-cache.js'

interface Deferred<T> {
  promise: Promise<T>
  resolve(value: T): void
  reject(error: unknown): void
}

function deferred<T>(): Deferred<T> {
  let resolve: (value: T) => void = () => {}
  let reject: (error: unknown) => void = () => {}
  const promise = new Promise<T>((res, rej) => {
    resolve = res
    reject = rej
  })
  return { promise, resolve, reject }
}

/** What the cache holds per user: a version, so that a reload is told from a cached value. */
interface Rows {
  userId: number
  version: number
}

/** Lets pending promise callbacks run (a whenListening() that should not have resolved yet). */
const settle = () => new Promise<void>((resolve) => setImmediate(resolve))

type Options = Partial<Pick<UserDataCacheOptions<Rows>, 'maxEntries' | 'maxBytes' | 'ttlMs' | 'sizeOf'>>

/** A cache on a fake clock and a fake listener; `listening` defaults to true (reported after construction). */
function setup(options: Options & { listening?: boolean } = {}) {
  let now = 1_000_000
  const listener = { started: 0, closed: 0, startedWith: undefined as unknown }
  const { listening = true, ...cacheOptions } = options
  const cache = new UserDataCache<Rows>({
    sizeOf: () => 100,
    ...cacheOptions,
    clock: () => now,
    listen: (c) => {
      listener.started++
      listener.startedWith = c
      return {
        async close() {
          listener.closed++
        },
      }
    },
  })
  if (listening) cache.listening(true)
  // Loads per user, each one answering a new version.
  const loads = new Map<number, number>()
  const load = (userId: number) => async (): Promise<Rows> => {
    const version = (loads.get(userId) ?? 0) + 1
    loads.set(userId, version)
    return { userId, version }
  }
  /** A load that waits for the test: `done(version)` answers it. */
  const held = (userId: number) => {
    const d = deferred<Rows>()
    let calls = 0
    return {
      calls: () => calls,
      load: () => {
        calls++
        return d.promise
      },
      done: (version: number) => d.resolve({ userId, version }),
      fail: (error: unknown) => d.reject(error),
    }
  }
  /** The next read of the user loads and stores; the one after is served from the cache. */
  const storesOnNextRead = async (t: Test, userId: number) => {
    const before = { hits: cache.hits, misses: cache.misses, loads: loads.get(userId) ?? 0 }
    t.same(await cache.read(userId, load(userId)), { userId, version: before.loads + 1 }, 'the next read loads')
    t.same(await cache.read(userId, load(userId)), { userId, version: before.loads + 1 }, 'the one after is a hit: it stored')
    t.strictSame({ hits: cache.hits, misses: cache.misses, loads: loads.get(userId) }, { hits: before.hits + 1, misses: before.misses + 1, loads: before.loads + 1 })
  }
  return { cache, listener, load, loads: (userId: number) => loads.get(userId) ?? 0, held, advance: (ms: number) => (now += ms), storesOnNextRead }
}

t.test('bypasses the cache until the listener reports listening, then serves a frozen value', async (t) => {
  const { cache, listener, load, loads } = setup({ listening: false })
  t.equal(listener.started, 0, 'no listener before the first read')
  t.equal(cache.isActive, false)
  const first = await cache.read(1, load(1))
  t.same(first, { userId: 1, version: 1 })
  t.equal(listener.started, 1, 'the first read starts the listener')
  t.equal(listener.startedWith, cache)
  t.notOk(Object.isFrozen(first), 'a bypassed value is not frozen')
  t.same(await cache.read(1, load(1)), { userId: 1, version: 2 }, 'loaded again')
  t.equal(loads(1), 2)
  t.equal(listener.started, 1, 'started once')
  t.equal(cache.size, 0, 'nothing stored')
  t.equal(cache.hits, 0)
  t.equal(cache.misses, 0, 'a bypassed read is neither a hit nor a miss')

  cache.listening(true)
  t.equal(cache.isActive, true)
  const stored = await cache.read(1, load(1))
  t.same(stored, { userId: 1, version: 3 })
  t.equal(cache.misses, 1)
  t.equal(cache.size, 1)
  const hit = await cache.read(1, load(1))
  t.equal(hit, stored, 'the same object')
  t.equal(loads(1), 3, 'not loaded')
  t.equal(cache.hits, 1)
  t.equal(cache.misses, 1)
  t.ok(Object.isFrozen(hit))
  t.equal(listener.started, 1)
})

t.test('whenListening() starts the listener and resolves only once it is up', async (t) => {
  const { cache, listener } = setup({ listening: false })
  let resolved = false
  const waiting = cache.whenListening().then(() => {
    resolved = true
  })
  t.equal(listener.started, 1)
  await settle()
  t.equal(resolved, false)
  cache.listening(false)
  await settle()
  t.equal(resolved, false, 'not on listening(false)')
  cache.listening(true)
  await waiting
  t.equal(resolved, true)
  await cache.whenListening() // already up: at once
  t.equal(listener.started, 1)
})

t.test('evict() and userDataChanged() drop exactly the named users; "all" drops everyone', async (t) => {
  const { cache, load, loads } = setup()
  for (const id of [1, 2, 3, 4]) await cache.read(id, load(id))
  t.equal(cache.size, 4)

  cache.evict(2)
  t.equal(cache.size, 3)
  cache.evict(99) // unknown: nothing
  t.equal(cache.size, 3)
  for (const id of [1, 3, 4]) await cache.read(id, load(id))
  t.same([loads(1), loads(3), loads(4)], [1, 1, 1], 'the others are hits')
  t.same(await cache.read(2, load(2)), { userId: 2, version: 2 }, 'the evicted user is loaded again')
  t.equal(cache.hits, 3)
  t.equal(cache.misses, 5)

  cache.userDataChanged([1, 3])
  t.equal(cache.size, 2)
  await cache.read(2, load(2))
  await cache.read(4, load(4))
  t.same([loads(2), loads(4)], [2, 1], 'users 2 and 4 stay')
  await cache.read(1, load(1))
  await cache.read(3, load(3))
  t.same([loads(1), loads(3)], [2, 2], 'users 1 and 3 reloaded')
  t.equal(cache.size, 4)

  cache.userDataChanged([])
  t.equal(cache.size, 4)
  cache.userDataChanged('all')
  t.equal(cache.size, 0)
  for (const id of [1, 2, 3, 4]) await cache.read(id, load(id))
  t.same([loads(1), loads(2), loads(3), loads(4)], [3, 3, 3, 2])
  t.equal(cache.hits, 5)
  t.equal(cache.misses, 11)
})

t.test('generation guard: a read in flight when its user is evicted stores nothing', async (t) => {
  const { cache, held, storesOnNextRead } = setup()
  const slow = held(1)
  const racing = cache.read(1, slow.load)
  cache.evict(1)
  slow.done(7)
  t.same(await racing, { userId: 1, version: 7 }, 'the racing read answers its own request')
  t.equal(cache.size, 0, 'but stores nothing')
  await storesOnNextRead(t, 1) // the stale mark went with the read
})

t.test('generation guard: a notification naming the user in flight counts too', async (t) => {
  const { cache, held, storesOnNextRead } = setup()
  const slow = held(1)
  const racing = cache.read(1, slow.load)
  cache.userDataChanged([5, 1])
  slow.done(7)
  t.same(await racing, { userId: 1, version: 7 })
  t.equal(cache.size, 0)
  await storesOnNextRead(t, 1)
})

t.test("generation guard: another user's eviction does not stop a read in flight from storing", async (t) => {
  const { cache, load, loads, held } = setup()
  await cache.read(1, load(1))
  const slow = held(2)
  const racing = cache.read(2, slow.load)
  cache.evict(1)
  cache.userDataChanged([3, 4])
  slow.done(7)
  t.same(await racing, { userId: 2, version: 7 })
  t.equal(cache.size, 1)
  const hit = await cache.read(2, load(2))
  t.same(hit, { userId: 2, version: 7 }, 'served from the cache')
  t.ok(Object.isFrozen(hit))
  t.equal(loads(2), 0)
  t.equal(cache.hits, 1)
  t.equal(cache.misses, 2)
})

t.test('generation guard: a read in flight during a flush stores nothing', async (t) => {
  for (const [name, flush] of [
    ["userDataChanged('all')", (c: UserDataCache<Rows>) => c.userDataChanged('all')],
    ['listening(false) then listening(true)', (c: UserDataCache<Rows>) => {
      c.listening(false)
      c.listening(true)
    }],
    ['listening(true) again (a reconnection)', (c: UserDataCache<Rows>) => c.listening(true)],
    ['flush()', (c: UserDataCache<Rows>) => c.flush()],
  ] as const) {
    const { cache, load, loads, held } = setup()
    const slow = held(1)
    const other = held(2)
    const racing = cache.read(1, slow.load)
    const racingOther = cache.read(2, other.load)
    flush(cache)
    t.equal(cache.isActive, true, name)
    slow.done(7)
    other.done(8)
    t.same(await racing, { userId: 1, version: 7 }, name)
    t.same(await racingOther, { userId: 2, version: 8 }, name)
    t.equal(cache.size, 0, `${name}: neither user stored`)
    await cache.read(1, load(1))
    await cache.read(1, load(1))
    t.equal(loads(1), 1, `${name}: the next read loads and stores`)
    t.equal(cache.size, 1, name)
  }
})

t.test('two reads of one user with an eviction between them: neither stores, then reads store again', async (t) => {
  // Eviction while both are in flight, finishing in either order; and eviction
  // between the two starts (the second read may hold new rows: conservative).
  const orders = [
    { name: 'evicted with both in flight, first finishes first', evictAfterSecondStart: true, firstFinishesFirst: true },
    { name: 'evicted with both in flight, second finishes first', evictAfterSecondStart: true, firstFinishesFirst: false },
    { name: 'evicted between the two starts, first finishes first', evictAfterSecondStart: false, firstFinishesFirst: true },
    { name: 'evicted between the two starts, second finishes first', evictAfterSecondStart: false, firstFinishesFirst: false },
  ]
  for (const { name, evictAfterSecondStart, firstFinishesFirst } of orders) {
    const { cache, load, loads, held } = setup()
    const a = held(1)
    const b = held(1)
    const first = cache.read(1, a.load)
    if (!evictAfterSecondStart) cache.evict(1)
    const second = cache.read(1, b.load)
    if (evictAfterSecondStart) cache.evict(1)
    t.equal(cache.misses, 2, name)
    if (firstFinishesFirst) {
      a.done(10)
      t.same(await first, { userId: 1, version: 10 }, name)
      t.equal(cache.size, 0, `${name}: the first stored nothing`)
      b.done(20)
      t.same(await second, { userId: 1, version: 20 }, name)
    } else {
      b.done(20)
      t.same(await second, { userId: 1, version: 20 }, name)
      t.equal(cache.size, 0, `${name}: the second stored nothing`)
      a.done(10)
      t.same(await first, { userId: 1, version: 10 }, name)
    }
    t.equal(cache.size, 0, `${name}: neither stored`)
    t.same(await cache.read(1, load(1)), { userId: 1, version: 1 }, name)
    t.equal(cache.size, 1, `${name}: a new read stores`)
    await cache.read(1, load(1))
    t.equal(loads(1), 1, name)
    t.equal(cache.hits, 1, name)
    t.equal(cache.misses, 3, name)
  }
})

t.test('a flush forgets eviction marks: a read begun after it stores, while an older one is still in flight', async (t) => {
  const { cache, held } = setup()
  const old = held(1)
  const fresh = held(1)
  const first = cache.read(1, old.load)
  cache.evict(1)
  cache.userDataChanged('all')
  const second = cache.read(1, fresh.load)
  old.done(10)
  await first
  t.equal(cache.size, 0, 'the read begun before the flush stores nothing')
  fresh.done(20)
  await second
  t.equal(cache.size, 1, 'the read begun after it stores')
  t.same(await cache.read(1, async () => ({ userId: 1, version: 99 })), { userId: 1, version: 20 })
})

t.test('two reads of one user without an eviction both store; the last to finish stays', async (t) => {
  const { cache, load, loads, held } = setup()
  const a = held(1)
  const b = held(1)
  const first = cache.read(1, a.load)
  const second = cache.read(1, b.load)
  b.done(20)
  await second
  t.equal(cache.size, 1)
  a.done(10)
  await first
  t.same(await cache.read(1, load(1)), { userId: 1, version: 10 })
  t.equal(loads(1), 0)
  t.equal(cache.hits, 1)
  t.equal(cache.misses, 2)
})

t.test('listening(false) flushes and bypasses the cache until listening(true)', async (t) => {
  const { cache, load, loads, listener } = setup()
  await cache.read(1, load(1))
  await cache.read(2, load(2))
  t.equal(cache.size, 2)
  cache.listening(false)
  t.equal(cache.isActive, false)
  t.equal(cache.size, 0, 'flushed')
  for (let i = 0; i < 3; i++) await cache.read(1, load(1))
  t.equal(loads(1), 4, 'every read loads')
  t.equal(cache.size, 0, 'and stores nothing')
  t.equal(cache.hits, 0)
  t.equal(cache.misses, 2, 'bypassed reads are not counted')
  t.equal(listener.started, 1, 'the listener reconnects by itself: not started again')

  let resolved = false
  const waiting = cache.whenListening().then(() => {
    resolved = true
  })
  await settle()
  t.equal(resolved, false)
  cache.listening(true)
  await waiting
  t.equal(resolved, true)
  t.equal(cache.isActive, true)
  await cache.read(1, load(1))
  await cache.read(1, load(1))
  t.equal(loads(1), 5)
  t.equal(cache.size, 1)
  t.equal(cache.hits, 1)
  t.equal(cache.misses, 3)
})

t.test('a read in flight when listening stops stores nothing, even once it is back', async (t) => {
  const { cache, held } = setup()
  const slow = held(1)
  const racing = cache.read(1, slow.load)
  cache.listening(false)
  slow.done(7)
  t.same(await racing, { userId: 1, version: 7 })
  t.equal(cache.size, 0)
  const slow2 = held(1)
  const racing2 = cache.read(1, slow2.load) // bypassed
  cache.listening(true)
  slow2.done(8)
  t.same(await racing2, { userId: 1, version: 8 })
  t.equal(cache.size, 0, 'a read that began bypassed never stores')
})

t.test('entries expire after the TTL', async (t) => {
  const { cache, load, loads, advance } = setup({ ttlMs: 1_000 })
  t.same(await cache.read(1, load(1)), { userId: 1, version: 1 })
  advance(999)
  t.same(await cache.read(1, load(1)), { userId: 1, version: 1 })
  t.equal(loads(1), 1)
  advance(1)
  t.same(await cache.read(1, load(1)), { userId: 1, version: 2 }, 'expired: loaded again')
  t.equal(loads(1), 2)
  t.equal(cache.size, 1, 'and stored anew')
  advance(999)
  t.same(await cache.read(1, load(1)), { userId: 1, version: 2 }, 'with a new TTL')
  advance(1)
  t.same(await cache.read(1, load(1)), { userId: 1, version: 3 })
  t.equal(cache.hits, 2)
  t.equal(cache.misses, 3)
})

t.test('holds at most maxEntries, dropping the least recently used', async (t) => {
  const { cache, load, loads } = setup({ maxEntries: 2 })
  await cache.read(1, load(1))
  await cache.read(2, load(2))
  await cache.read(1, load(1)) // 1 is now the most recently used
  t.equal(cache.hits, 1)
  await cache.read(3, load(3))
  t.equal(cache.size, 2)
  await cache.read(1, load(1))
  await cache.read(3, load(3))
  t.same([loads(1), loads(3)], [1, 1], '1 and 3 held')
  await cache.read(2, load(2))
  t.equal(loads(2), 2, '2 was dropped')
  t.equal(cache.size, 2)
  await cache.read(3, load(3))
  t.equal(loads(3), 1, '3 was used after 1')
  await cache.read(1, load(1))
  t.equal(loads(1), 2, 'so 1 went for 2')
  t.equal(cache.hits, 4)
  t.equal(cache.misses, 5)
})

t.test('holds at most maxBytes of estimated values', async (t) => {
  // 400 + 48 bytes of bookkeeping per entry: two fit in 1000, not three.
  const { cache, load, loads } = setup({ maxBytes: 1_000, sizeOf: () => 400 })
  await cache.read(1, load(1))
  await cache.read(2, load(2))
  t.equal(cache.size, 2)
  await cache.read(3, load(3))
  t.equal(cache.size, 2)
  await cache.read(2, load(2))
  await cache.read(3, load(3))
  t.same([loads(2), loads(3)], [1, 1])
  await cache.read(1, load(1))
  t.equal(loads(1), 2, 'the least recently used went')
  t.equal(cache.size, 2)
  t.equal(cache.hits, 2)
  t.equal(cache.misses, 4)
})

t.test('a value larger than maxBytes is answered, never stored', async (t) => {
  const { cache, load, loads } = setup({ maxBytes: 1_000, sizeOf: (rows) => (rows.userId === 9 ? 5_000 : 100) })
  await cache.read(1, load(1))
  t.same(await cache.read(9, load(9)), { userId: 9, version: 1 })
  t.same(await cache.read(9, load(9)), { userId: 9, version: 2 })
  t.equal(cache.size, 1, 'and the others stay')
  await cache.read(1, load(1))
  t.equal(loads(1), 1)
})

t.test('a load that fails: the error propagates, nothing is stored, and later reads store', async (t) => {
  const { cache, storesOnNextRead } = setup()
  const failure = new Error('connection reset')
  let caught: unknown
  try {
    await cache.read(1, async () => {
      throw failure
    })
  } catch (error) {
    caught = error
  }
  t.equal(caught, failure)
  t.equal(cache.size, 0)
  t.equal(cache.misses, 1)
  await storesOnNextRead(t, 1) // the read in flight was forgotten
})

t.test('a failed load evicted while in flight leaves no stale mark behind', async (t) => {
  const { cache, held, storesOnNextRead } = setup()
  const slow = held(1)
  const racing = cache.read(1, slow.load)
  cache.evict(1)
  const failure = new Error('timeout')
  slow.fail(failure)
  await t.rejects(racing, failure)
  t.equal(cache.size, 0)
  await storesOnNextRead(t, 1)
})

t.test('a failed load beside a successful one of the same user', async (t) => {
  const { cache, load, loads, held } = setup()
  const failing = held(1)
  const good = held(1)
  const a = cache.read(1, failing.load)
  const b = cache.read(1, good.load)
  failing.fail(new Error('boom'))
  await t.rejects(a, { message: 'boom' })
  good.done(5)
  t.same(await b, { userId: 1, version: 5 })
  t.equal(cache.size, 1, 'no eviction: the good one stores')
  cache.evict(1)
  await cache.read(1, load(1))
  t.equal(cache.size, 1, 'and the user is not left marked stale')
  t.equal(loads(1), 1)
})

t.test('close(): the listener is closed, the cache flushed, and reads bypass it for good', async (t) => {
  const { cache, load, loads, listener, held } = setup()
  await cache.read(1, load(1))
  t.equal(listener.started, 1)
  const slow = held(2)
  const racing = cache.read(2, slow.load)
  await cache.close()
  t.equal(listener.closed, 1)
  t.equal(cache.isActive, false)
  t.equal(cache.size, 0)
  slow.done(7)
  await racing
  t.equal(cache.size, 0, 'a read in flight at close stores nothing')
  cache.listening(true) // a late report from the listener
  t.equal(cache.isActive, false)
  await cache.read(1, load(1))
  await cache.read(1, load(1))
  t.equal(loads(1), 3, 'every read loads')
  t.equal(cache.size, 0)
  t.equal(listener.started, 1, 'no new listener')
  t.equal(cache.hits, 0)
  t.equal(cache.misses, 2)
  await cache.close()
  t.equal(listener.closed, 1, 'closed once')
})

t.test('close() before any read never starts the listener', async (t) => {
  const { cache, load, listener } = setup({ listening: false })
  await cache.close()
  await cache.read(1, load(1))
  t.equal(listener.started, 0)
  t.equal(listener.closed, 0)
  t.equal(cache.size, 0)
})

t.test('listener errors are counted, and reported once a reporter is given', async (t) => {
  const { cache } = setup()
  t.equal(cache.listenerErrors, 0)
  const early = new Error('early')
  cache.listenerError(early)
  t.equal(cache.listenerErrors, 1, 'counted without a reporter')
  const reported: unknown[] = []
  cache.reportErrorsTo((error) => reported.push(error))
  const lost = new Error('connection lost')
  cache.listenerError(lost)
  t.equal(cache.listenerErrors, 2)
  t.same(reported, [lost])
  t.equal(reported[0], lost)
  cache.listenerError('refused')
  t.equal(cache.listenerErrors, 3)
  t.same(reported, [lost, 'refused'])
  t.equal(cache.isActive, true, 'an error alone changes nothing else: listening(false) does')
})
