// A node's cache of data keyed by user that changes with rows other than the
// user's own: GET /users/me's newest received message, custom profile
// values and derived is_billing_admin (queries/users.ts), which the authentication cache's user row does
// not hold. One statement per request was most of that endpoint's cost.
//
// Invalidation, on the model of the authentication cache (auth-cache.ts):
// 1. Committed changes, from any node. Triggers (migration
//    *_user_data_invalidation) NOTIFY 'roost_user_data' at commit with the
//    IDs of the users whose user_message rows were inserted or deleted, or
//    whose profile values changed, or '*' (a field definition changed, or too
//    many users for one payload); migration *_derived_billing_admin adds
//    group membership rows (their users), subgroup edges and the realm's
//    can_manage_billing_group ('*'). Each node LISTENs on a connection of its
//    own and evicts those users. While that connection is down the cache is
//    bypassed, and it is flushed whenever listening starts or stops.
// 2. The requester's own writes on this node. A client that sends a message
//    and then reads its profile through the same node cannot wait for the
//    NOTIFY: the route layer evicts the requesting user after every
//    successful request other than a GET, before the answer is written
//    (route.ts). Any other user sees a change once its NOTIFY arrives,
//    milliseconds after the commit, on every node alike.
// 3. The generation guard. A read that was in flight when its user was
//    evicted, or when the cache was flushed, stores nothing: it may hold the
//    old rows. Only users with a read in flight are remembered, so a message
//    to many users costs one Map lookup per recipient and no memory.
// A safety TTL bounds the life of every entry in case an invalidation is ever
// lost, and the cache is bounded in entries and in estimated bytes (least
// recently used first). Stored values are frozen: concurrent requests share
// them.
import { LRUCache } from 'lru-cache'
import { NotifiedCache } from './notified-cache.js'
import type { RowListener, UserDataWatcher } from './row-listener.js'

export interface UserDataCacheOptions<T> {
  /** Entries held at most; the least recently used go first. */
  maxEntries?: number
  /** Estimated bytes held at most. */
  maxBytes?: number
  /** The estimated bytes of one value. */
  sizeOf: (value: T) => number
  /** Safety TTL of an entry. */
  ttlMs?: number
  /** Milliseconds clock (tests). */
  clock?: () => number
  /** Starts the invalidation listener, on the first read. */
  listen?: (cache: UserDataCache<T>) => RowListener
}

export const USER_DATA_CACHE_MAX_ENTRIES = 50_000
export const USER_DATA_CACHE_MAX_BYTES = 32 * 1024 * 1024
export const USER_DATA_CACHE_TTL_MS = 60_000

interface Entry<T> {
  value: T
  expiresAt: number
}

export class UserDataCache<T> extends NotifiedCache<UserDataCache<T>> implements UserDataWatcher {
  private readonly entries: LRUCache<number, Entry<T>>
  private readonly ttlMs: number
  private readonly clock: () => number
  /** Bumped by every flush; a read started before the last flush stores nothing. */
  private generation = 0
  /** User ID → reads in flight. */
  private readonly reading = new Map<number, number>()
  /** Users evicted while a read of theirs was in flight. */
  private readonly staleReads = new Set<number>()
  /** Reads answered from the cache, and those that went to the database (tests, metrics). */
  hits = 0
  misses = 0

  constructor(options: UserDataCacheOptions<T>) {
    super(options.listen)
    this.entries = new LRUCache({
      max: options.maxEntries ?? USER_DATA_CACHE_MAX_ENTRIES,
      maxSize: options.maxBytes ?? USER_DATA_CACHE_MAX_BYTES,
      sizeCalculation: (entry) => Math.max(1, options.sizeOf(entry.value) + 48),
    })
    this.ttlMs = options.ttlMs ?? USER_DATA_CACHE_TTL_MS
    this.clock = options.clock ?? Date.now
  }

  /** Entries currently held. */
  get size(): number {
    return this.entries.size
  }

  /** The user's value: cached, or loaded by `load` (and stored unless invalidated meanwhile). */
  async read(userId: number, load: () => Promise<T>): Promise<T> {
    this.startListening()
    if (!this.isActive) return load()
    const hit = this.entries.get(userId)
    if (hit !== undefined) {
      if (hit.expiresAt > this.clock()) {
        this.hits++
        return hit.value
      }
      this.entries.delete(userId)
    }
    this.misses++
    const generation = this.generation
    this.reading.set(userId, (this.reading.get(userId) ?? 0) + 1)
    let value: T
    let stale: boolean
    try {
      value = await load()
    } finally {
      stale = this.staleReads.has(userId)
      const left = (this.reading.get(userId) ?? 1) - 1
      if (left > 0) {
        this.reading.set(userId, left)
      } else {
        this.reading.delete(userId)
        this.staleReads.delete(userId)
      }
    }
    if (!stale && generation === this.generation && this.isActive) {
      this.entries.set(userId, { value: Object.freeze(value), expiresAt: this.clock() + this.ttlMs })
    }
    return value
  }

  /** This user's data may have changed: drop it, and let no read in flight store it. */
  evict(userId: number): void {
    this.entries.delete(userId)
    if (this.reading.has(userId)) this.staleReads.add(userId)
  }

  /** A committed change announced by the database. */
  userDataChanged(userIds: number[] | 'all'): void {
    if (userIds === 'all') {
      this.flush()
      return
    }
    for (const id of userIds) this.evict(id)
  }

  flush(): void {
    this.generation++
    this.entries.clear()
    // Reads in flight are already refused by the generation.
    this.staleReads.clear()
  }
}
