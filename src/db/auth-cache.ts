// The authentication cache of one node: API key → { user, realm } and realm
// string_id → realm, so an authenticated request needs no database round
// trip. Only the lookups are cached; authenticate() checks the cached rows on
// every request exactly as it checks fresh ones. Unknown keys and subdomains
// are never cached (a new user's key works at once).
//
// Never observably stale, by three mechanisms:
//
// 1. Other nodes' writes. Triggers on user_profile and realm NOTIFY
//    'u:<id>' / 'r:<id>' at commit (migration *_auth_cache_invalidation), and
//    one on user_settings 'u:<user_id>' when presence_enabled, which the
//    entries also hold, changes (migration *_presence_enabled_invalidation);
//    each node LISTENs on a connection of its own (db/row-listener.ts) and
//    evicts. While that connection is down the cache is bypassed entirely,
//    and it is flushed whenever listening starts or stops, since
//    notifications may have been lost meanwhile.
// 2. This node's writes. A write that reaches the next request on the same
//    node cannot wait for its NOTIFY. Every write to a user or realm row made
//    through the Database's Prisma client is seen by a query extension
//    (db/row-writes.ts), which tells the cache twice: when the statement
//    starts (the row is evicted and marked "writing": no lookup may store it
//    while the write is in flight) and when its transaction has ended —
//    committed or rolled back — (evicted again, the mark removed). From then
//    on any database read sees the outcome, so nothing stale can be stored:
//    there is no need to wait for the NOTIFY or a timer, and a rolled-back
//    transaction (which sends no NOTIFY) leaves no row marked.
// 3. The generation guard. Every eviction takes a new sequence number. A
//    lookup notes the sequence when it starts and stores its result only if
//    neither its user nor its realm (nor everything) was evicted since, and
//    neither is marked writing: a lookup that raced with an eviction may
//    hold the old row.
//
// A safety TTL bounds the life of every entry in case an invalidation is ever
// lost, and the caches are bounded in entries and in bytes (least recently
// used first). Only rows found are stored: unknown keys and subdomains cost
// no memory. Cached rows are frozen: they are shared by concurrent requests.
// The users of one realm share one realm object while its row is unchanged
// (a realm row is about three times a user's: held once per user, 64 MiB
// held some 8,800 users, and 10,000 users polling in turn missed on every
// request), so an entry costs its key and user row.
import { LRUCache } from 'lru-cache'
import { NotifiedCache } from './notified-cache.js'
import type { Database } from './client.js'
import { findRealmByStringId, findUserWithRealmByApiKey } from './hot-queries.js'
import type { Realm, User } from './index.js'
import type { RowListener } from './row-listener.js'
import type { RowChange } from './row-writes.js'

export interface UserWithRealm {
  user: User
  realm: Realm
  /** user_settings.presence_enabled: every presence ping asks (actions/update-presence.ts). */
  presenceEnabled: boolean
}

/** The uncached lookups. */
export interface AuthLookups {
  userWithRealmByApiKey(apiKey: string): Promise<UserWithRealm | null>
  realmByStringId(stringId: string): Promise<Realm | null>
}

export interface AuthCacheOptions {
  /** Entries per cache; the least recently used go first. */
  maxEntries?: number
  /** Estimated bytes per cache (keys and rows); the least recently used go first. */
  maxBytes?: number
  /** Safety TTL of an entry. */
  ttlMs?: number
  /** A lookup slower than this stores nothing (bounds how long eviction marks are kept). */
  maxLookupMs?: number
  /** Milliseconds clock (tests). */
  clock?: () => number
  /** Starts the invalidation listener, on the first lookup (so services never used for requests open no connection). */
  listen?: (cache: AuthCache) => RowListener
}

export const AUTH_CACHE_MAX_ENTRIES = 50_000
/** About 2 KB per cached user (the realm row is shared): 64 MiB holds some 30,000 active users. */
export const AUTH_CACHE_MAX_BYTES = 64 * 1024 * 1024
export const AUTH_CACHE_TTL_MS = 60_000
const MAX_LOOKUP_MS = 10_000

interface Entry<T> {
  value: T
  expiresAt: number
}

const ALL_USERS = 'u:*'
const ALL_REALMS = 'r:*'
const userMark = (id: number) => `u:${id}`
const realmMark = (id: number) => `r:${id}`

/** An estimate of the heap a flat database row takes (V8 strings up to 2 bytes a character, and per-property overhead). */
function rowBytes(row: object): number {
  let bytes = 64
  for (const value of Object.values(row)) {
    bytes += 32
    if (typeof value === 'string') bytes += 2 * value.length
    else if (value !== null && typeof value === 'object' && !(value instanceof Date)) bytes += 2 * JSON.stringify(value).length
    else bytes += 16
  }
  return bytes
}

export class AuthCache extends NotifiedCache<AuthCache> {
  private readonly ttlMs: number
  private readonly maxLookupMs: number
  private readonly clock: () => number
  /** Lookups answered from the cache, and those that went to the database (metrics). */
  hits = 0
  misses = 0

  private seq = 0
  private flushedAt = 0
  /** 'u:<id>' / 'r:<id>' → { sequence of its last eviction, when }; kept maxLookupMs, oldest first. */
  private readonly evicted = new Map<string, { seq: number; at: number }>()
  /** 'u:<id>' / 'r:<id>' / 'u:*' / 'r:*' → writes in flight on this node. */
  private readonly writing = new Map<string, number>()

  private readonly byApiKey: LRUCache<string, Entry<UserWithRealm>>
  private readonly byStringId: LRUCache<string, Entry<Realm>>
  private readonly apiKeyOfUser = new Map<number, string>()
  private readonly apiKeysOfRealm = new Map<number, Set<string>>()
  private readonly stringIdOfRealm = new Map<number, string>()
  /** realm id → the frozen realm row its cached users share; dropped with the realm's last entry and on its eviction. */
  private readonly sharedRealms = new Map<number, Realm>()

  constructor(
    private readonly lookups: AuthLookups,
    options: AuthCacheOptions = {},
  ) {
    super(options.listen)
    const max = options.maxEntries ?? AUTH_CACHE_MAX_ENTRIES
    const maxSize = options.maxBytes ?? AUTH_CACHE_MAX_BYTES
    // Every removal (eviction, drop, flush) goes through dispose, which keeps the reverse indexes in step.
    this.byApiKey = new LRUCache({
      max,
      maxSize,
      // The realm row is shared (internRealm): an entry holds a reference to it.
      sizeCalculation: (entry, key) => Math.max(1, 2 * key.length + rowBytes(entry.value.user) + 32),
      dispose: (entry, key) => this.unindexApiKey(key, entry.value),
    })
    this.byStringId = new LRUCache({
      max,
      maxSize,
      sizeCalculation: (entry, key) => Math.max(1, 2 * key.length + rowBytes(entry.value)),
      dispose: (entry, key) => {
        if (this.stringIdOfRealm.get(entry.value.id) === key) this.stringIdOfRealm.delete(entry.value.id)
      },
    })
    this.ttlMs = options.ttlMs ?? AUTH_CACHE_TTL_MS
    this.maxLookupMs = options.maxLookupMs ?? MAX_LOOKUP_MS
    this.clock = options.clock ?? Date.now
  }

  /** Entries currently held (tests and metrics). */
  get size(): { apiKeys: number; realms: number } {
    return { apiKeys: this.byApiKey.size, realms: this.byStringId.size }
  }

  /** The cached entry of an API key, or undefined (then ask userWithRealmByApiKey): no promise when the cache answers. */
  cachedUserWithRealm(apiKey: string): UserWithRealm | undefined {
    const hit = this.liveEntry(apiKey)
    if (hit !== undefined) this.hits++
    return hit
  }

  /**
   * Whether the user shares presence, when the cache holds the user's entry
   * (evicted by every change to the setting, as to the user's row); undefined
   * when it does not (then ask the database). Asked after the request's own
   * authentication, so not counted as another lookup.
   */
  cachedPresenceEnabled(user: Pick<User, 'id' | 'apiKey'>): boolean | undefined {
    const hit = this.liveEntry(user.apiKey)
    return hit?.user.id === user.id ? hit.presenceEnabled : undefined
  }

  /**
   * A user's row by ID, when the cache holds the user's entry (the user
   * authenticated on this node within the TTL); undefined otherwise. Evicted
   * with the entry, so as fresh as authentication's. GET /messages presents
   * its senders from it (queries/messages.ts); not counted as a lookup.
   */
  cachedUserById(userId: number): User | undefined {
    const apiKey = this.apiKeyOfUser.get(userId)
    if (apiKey === undefined) return undefined
    const hit = this.liveEntry(apiKey)
    return hit?.user.id === userId ? hit.user : undefined
  }

  /** The entry of an API key while the cache is in use and the entry within its TTL. */
  private liveEntry(apiKey: string): UserWithRealm | undefined {
    this.startListening()
    if (!this.isActive) return undefined
    const hit = this.byApiKey.get(apiKey)
    if (hit === undefined) return undefined
    if (hit.expiresAt > this.clock()) return hit.value
    this.dropApiKey(apiKey)
    return undefined
  }

  async userWithRealmByApiKey(apiKey: string): Promise<UserWithRealm | null> {
    const hit = this.cachedUserWithRealm(apiKey)
    if (hit !== undefined) return hit
    if (!this.isActive) return this.lookups.userWithRealmByApiKey(apiKey)
    const now = this.clock()
    this.misses++
    const started = this.seq
    const found = await this.lookups.userWithRealmByApiKey(apiKey)
    if (found !== null && this.storable(started, now, [userMark(found.user.id), realmMark(found.realm.id), ALL_USERS, ALL_REALMS])) {
      const value = Object.freeze({ user: Object.freeze(found.user), realm: this.internRealm(found.realm), presenceEnabled: found.presenceEnabled })
      this.storeApiKey(apiKey, value, this.clock() + this.ttlMs)
      return value
    }
    return found
  }

  async realmByStringId(stringId: string): Promise<Realm | null> {
    this.startListening()
    if (!this.isActive) return this.lookups.realmByStringId(stringId)
    const now = this.clock()
    const hit = this.byStringId.get(stringId)
    if (hit !== undefined) {
      if (hit.expiresAt > now) {
        this.hits++
        return hit.value
      }
      this.dropStringId(stringId)
    }
    this.misses++
    const started = this.seq
    const found = await this.lookups.realmByStringId(stringId)
    if (found !== null && this.storable(started, now, [realmMark(found.id), ALL_REALMS])) {
      const value = Object.freeze(found)
      this.storeStringId(stringId, value, this.clock() + this.ttlMs)
      return value
    }
    return found
  }

  // ------------------------------------------------------------ invalidation

  /** A committed change announced by the database. */
  changed(change: RowChange): void {
    this.evict(change)
  }

  /** A write of this node is about to run: evict, and store nothing for these rows until it settles. */
  writeStarted(changes: readonly RowChange[]): void {
    for (const change of changes) {
      const mark = markOf(change)
      this.writing.set(mark, (this.writing.get(mark) ?? 0) + 1)
      this.evict(change)
    }
  }

  /** That write's transaction has ended: reads now see its outcome. */
  writeSettled(changes: readonly RowChange[]): void {
    for (const change of changes) {
      const mark = markOf(change)
      const left = (this.writing.get(mark) ?? 1) - 1
      if (left > 0) this.writing.set(mark, left)
      else this.writing.delete(mark)
      this.evict(change)
    }
  }

  flush(): void {
    this.seq++
    this.flushedAt = this.seq
    this.evicted.clear()
    this.byApiKey.clear()
    this.byStringId.clear()
    this.apiKeyOfUser.clear()
    this.apiKeysOfRealm.clear()
    this.stringIdOfRealm.clear()
    this.sharedRealms.clear()
  }

  private evict(change: RowChange): void {
    if (change.id === 'all') {
      this.flush()
      return
    }
    const mark = markOf(change)
    const now = this.clock()
    this.seq++
    this.evicted.delete(mark)
    this.evicted.set(mark, { seq: this.seq, at: now })
    this.pruneEvicted(now)
    if (change.table === 'user') {
      const apiKey = this.apiKeyOfUser.get(change.id)
      if (apiKey !== undefined) this.dropApiKey(apiKey)
    } else {
      this.sharedRealms.delete(change.id)
      for (const apiKey of [...(this.apiKeysOfRealm.get(change.id) ?? [])]) this.dropApiKey(apiKey)
      const stringId = this.stringIdOfRealm.get(change.id)
      if (stringId !== undefined) this.dropStringId(stringId)
    }
  }

  private pruneEvicted(now: number): void {
    for (const [mark, { at }] of this.evicted) {
      if (at > now - this.maxLookupMs) break
      this.evicted.delete(mark)
    }
  }

  /** The generation guard: may a lookup that started at `started` (sequence) and `startedAt` (clock) store its rows? */
  private storable(started: number, startedAt: number, marks: string[]): boolean {
    if (!this.isActive || this.flushedAt > started || this.clock() - startedAt >= this.maxLookupMs) return false
    for (const mark of marks) {
      if (this.writing.has(mark)) return false
      const evicted = this.evicted.get(mark)
      if (evicted !== undefined && evicted.seq > started) return false
    }
    return true
  }

  private storeApiKey(apiKey: string, value: UserWithRealm, expiresAt: number): void {
    // A user has one key: an entry under another key is older than this row.
    const previous = this.apiKeyOfUser.get(value.user.id)
    if (previous !== undefined) this.dropApiKey(previous)
    this.dropApiKey(apiKey)
    this.byApiKey.set(apiKey, { value, expiresAt })
    this.apiKeyOfUser.set(value.user.id, apiKey)
    const ofRealm = this.apiKeysOfRealm.get(value.realm.id) ?? new Set<string>()
    ofRealm.add(apiKey)
    this.apiKeysOfRealm.set(value.realm.id, ofRealm)
  }

  private storeStringId(stringId: string, realm: Realm, expiresAt: number): void {
    const previous = this.stringIdOfRealm.get(realm.id)
    if (previous !== undefined) this.dropStringId(previous)
    this.dropStringId(stringId)
    this.byStringId.set(stringId, { value: realm, expiresAt })
    this.stringIdOfRealm.set(realm.id, stringId)
  }

  private dropApiKey(apiKey: string): void {
    this.byApiKey.delete(apiKey)
  }

  private unindexApiKey(apiKey: string, { user, realm }: UserWithRealm): void {
    if (this.apiKeyOfUser.get(user.id) === apiKey) this.apiKeyOfUser.delete(user.id)
    const ofRealm = this.apiKeysOfRealm.get(realm.id)
    ofRealm?.delete(apiKey)
    if (ofRealm?.size === 0) {
      this.apiKeysOfRealm.delete(realm.id)
      if (this.sharedRealms.get(realm.id) === realm) this.sharedRealms.delete(realm.id)
    }
  }

  /**
   * The realm row as stored: the shared object when it holds the same values
   * (a row read later may differ only after a change, whose eviction drops
   * the shared one and the entries holding it), else this row, frozen, which
   * becomes the shared one.
   */
  private internRealm(row: Realm): Realm {
    const shared = this.sharedRealms.get(row.id)
    if (shared !== undefined && sameRow(shared, row)) return shared
    const frozen = Object.freeze(row)
    this.sharedRealms.set(row.id, frozen)
    return frozen
  }

  private dropStringId(stringId: string): void {
    this.byStringId.delete(stringId)
  }
}

/** Field by field; timestamps by their time. */
function sameRow(a: object, b: object): boolean {
  const left = a as Record<string, unknown>
  const right = b as Record<string, unknown>
  const keys = Object.keys(left)
  if (keys.length !== Object.keys(right).length) return false
  for (const key of keys) {
    const x = left[key]
    const y = right[key]
    if (x === y) continue
    if (x instanceof Date && y instanceof Date && x.getTime() === y.getTime()) continue
    if (x !== null && y !== null && typeof x === 'object' && typeof y === 'object' && JSON.stringify(x) === JSON.stringify(y)) continue
    return false
  }
  return true
}

function markOf(change: RowChange): string {
  if (change.id === 'all') return change.table === 'user' ? ALL_USERS : ALL_REALMS
  return change.table === 'user' ? userMark(change.id) : realmMark(change.id)
}

/** The cache of one node over a Database: its lookups are the hot queries, its invalidations the Database's row changes. */
export function createAuthCache(database: Database, options: Omit<AuthCacheOptions, 'listen'> = {}): AuthCache {
  return new AuthCache(
    {
      userWithRealmByApiKey: (apiKey) => findUserWithRealmByApiKey(database.prisma, apiKey),
      realmByStringId: (stringId) => findRealmByStringId(database.prisma, stringId),
    },
    { ...options, listen: (cache) => database.watchRowChanges(cache, { onError: (error) => cache.listenerError(error) }) },
  )
}
