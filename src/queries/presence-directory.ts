// A node's cache of what realm-wide presence needs of each user: the API
// email (the legacy key), the join date (a never-active user's
// active_timestamp) and whether the user is listed at all (active, not a
// bot). Reading it from the database costs ~3 ms of CPU for 1,000 users, more
// than the whole answer may take, so each node keeps one copy per realm.
//
// Never observably stale, by the mechanisms of the authentication cache
// (db/auth-cache.ts), simplified to "drop everything":
// * committed changes of user rows on any node arrive as NOTIFY (the
//   *_auth_cache_invalidation triggers) on a listener of this cache's own,
//   and empty it; while that listener is down the cache is bypassed;
// * this node's writes to user rows empty it when they start and again when
//   their transaction ends, and nothing is stored while one is in flight;
// * a load stores its result only if nothing was dropped since it started.
// New users are inserted, which the triggers do not announce: a presence row
// of a user the copy does not know makes the next read load the realm again
// (and remember the user as unlisted if still unknown).
import { NotifiedCache } from '../db/notified-cache.js'
import type { Database } from '../db/client.js'
import { fastRead } from '../db/fast-read.js'
import type { PrismaClient } from '../db/index.js'
import type { RowListener } from '../db/row-listener.js'
import type { RowChange } from '../db/row-writes.js'

export interface DirectoryEntry {
  email: string
  /** date_joined in UNIX seconds (floored). */
  joined: number
  /** Active and not a bot: shown in realm-wide presence. */
  listed: boolean
}

export type Directory = ReadonlyMap<number, DirectoryEntry>

type Loader = (realmId: number) => Promise<Map<number, DirectoryEntry>>

export class PresenceDirectory extends NotifiedCache<PresenceDirectory> {
  private readonly realms = new Map<number, Map<number, DirectoryEntry>>()
  private generation = 0
  private writing = 0
  /** Loads from the database, and reads answered from the copy (tests, metrics). */
  loads = 0
  hits = 0

  constructor(
    private readonly load: Loader,
    listen?: (directory: PresenceDirectory) => RowListener,
  ) {
    super(listen)
  }

  /** The realm's directory, covering at least `userIds`. Callers must not modify it. */
  async forUsers(realmId: number, userIds: Iterable<number>): Promise<Directory> {
    this.startListening()
    const cached = this.isActive ? this.realms.get(realmId) : undefined
    if (cached && covers(cached, userIds)) {
      this.hits++
      return cached
    }
    const generation = this.generation
    this.loads++
    const loaded = await this.load(realmId)
    for (const id of userIds) if (!loaded.has(id)) loaded.set(id, { email: '', joined: 0, listed: false })
    if (this.isActive && generation === this.generation && this.writing === 0) this.realms.set(realmId, loaded)
    return loaded
  }

  changed(change: RowChange): void {
    if (change.table === 'user') this.flush()
  }

  writeStarted(changes: readonly RowChange[]): void {
    if (!changes.some((c) => c.table === 'user')) return
    this.writing++
    this.flush()
  }

  writeSettled(changes: readonly RowChange[]): void {
    if (!changes.some((c) => c.table === 'user')) return
    this.writing = Math.max(0, this.writing - 1)
    this.flush()
  }

  flush(): void {
    this.generation++
    this.realms.clear()
  }
}

function covers(directory: Map<number, DirectoryEntry>, userIds: Iterable<number>): boolean {
  for (const id of userIds) if (!directory.has(id)) return false
  return true
}

/** Every user of a realm: one prepared statement (db/fast-read.ts). */
export async function loadPresenceDirectory(prisma: PrismaClient, realmId: number): Promise<Map<number, DirectoryEntry>> {
  const rows = await fastRead<{ id: number; email: string; joined: number; listed: boolean }>(
    prisma,
    'presence-directory',
    'SELECT id, email, floor(extract(epoch FROM date_joined))::int AS joined, (is_active AND NOT is_bot) AS listed FROM user_profile WHERE realm_id = $1',
    [realmId],
  )
  return new Map(rows.map((r) => [r.id, { email: r.email, joined: r.joined, listed: r.listed }]))
}

export function createPresenceDirectory(database: Database): PresenceDirectory {
  return new PresenceDirectory(
    (realmId) => loadPresenceDirectory(database.prisma, realmId),
    (directory) => database.watchRowChanges(directory),
  )
}
