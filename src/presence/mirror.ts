// A node's copy of each realm's presence rows, brought up to date from the
// store on every read by asking only for the rows written since the last
// update ID it has (PresenceStore.changedSince): the realm-wide presence a
// ping answers costs a read of what changed, not of every row. No
// invalidation is needed: each read asks the store (shared by every node)
// what changed, so a write on any node is seen by the next read on every
// node. Reads are not coalesced: a read that started after a write always
// sees it. Results that arrive out of order are merged row by row (the
// higher update ID wins) and the sequence only moves forward.
//
// As a safety net (e.g. rows written by an older version that did not index
// them, during a rolling upgrade) a realm is read whole again when its last
// whole read is older than FULL_READ_MS.
import type { PresenceRow, PresenceStore } from './store.js'

export const FULL_READ_MS = 60_000

interface RealmRows {
  seq: number
  rows: Map<number, PresenceRow>
  /** User IDs in ascending order; undefined after a new user's row arrives. */
  sorted: PresenceRow[] | undefined
  fullReadAt: number
}

export class PresenceMirror {
  private readonly realms = new Map<number, RealmRows>()

  constructor(
    private readonly store: PresenceStore,
    /** Milliseconds clock (tests). */
    private readonly clock: () => number = Date.now,
  ) {}

  /** The realm's rows, sorted by user ID, as of a read of the store made now. Callers must not modify them. */
  async rows(realmId: number): Promise<readonly PresenceRow[]> {
    let realm = this.realms.get(realmId)
    const now = this.clock()
    const full = !realm || now - realm.fullReadAt >= FULL_READ_MS
    const changes = await this.store.changedSince(realmId, full ? -1 : (realm as RealmRows).seq)
    realm = this.realms.get(realmId)
    if (!realm) this.realms.set(realmId, (realm = { seq: -1, rows: new Map(), sorted: undefined, fullReadAt: now }))
    if (full) realm.fullReadAt = now
    for (const row of changes.rows) {
      const known = realm.rows.get(row.userId)
      if (known && known.updateId >= row.updateId) continue
      realm.rows.set(row.userId, row)
      // A changed row replaces its predecessor in place; only a new user needs a new order.
      if (!known) realm.sorted = undefined
      else if (realm.sorted) {
        const at = binarySearch(realm.sorted, row.userId)
        if (at >= 0) realm.sorted[at] = row
        else realm.sorted = undefined
      }
    }
    if (changes.seq > realm.seq) realm.seq = changes.seq
    realm.sorted ??= [...realm.rows.values()].sort((a, b) => a.userId - b.userId)
    return realm.sorted
  }
}

function binarySearch(rows: readonly PresenceRow[], userId: number): number {
  let lo = 0
  let hi = rows.length - 1
  while (lo <= hi) {
    const mid = (lo + hi) >> 1
    const id = (rows[mid] as PresenceRow).userId
    if (id === userId) return mid
    if (id < userId) lo = mid + 1
    else hi = mid - 1
  }
  return -1
}
