// The presence store: one row per user with the last time any of its clients
// reported `active` and the last time any reported at all, and a per-realm
// update sequence (upstream's UserPresence + PresenceSequence, §10.2). In
// process when embedded, a Redis hash when clustered, so every node answers
// the same. Times are UNIX seconds.

export type PresenceStatus = 'active' | 'idle'

/** Never changed once made: a write makes a new row (the answers' bytes are kept per row object, presence/format.ts). */
export interface PresenceRow {
  readonly userId: number
  /** Last `active` report; null when the user was never active. */
  readonly activeTime: number | null
  readonly lastConnectedTime: number
  /** Realm sequence value of the last write to this row. */
  readonly updateId: number
}

export interface PresenceReport {
  before: PresenceRow | null
  after: PresenceRow
  /** False when the report was within the write interval and changed nothing. */
  written: boolean
}

/** Upstream PRESENCE_UPDATE_MIN_FREQ_SECONDS: a time is rewritten at most this often. */
export const PRESENCE_UPDATE_MIN_FREQ_SECONDS = 55

export interface PresenceStore {
  report(realmId: number, userId: number, status: PresenceStatus, now: number): Promise<PresenceReport>
  /** Overwrites the row (disabling presence writes an old idle row). */
  replace(realmId: number, userId: number, activeTime: number | null, lastConnectedTime: number): Promise<PresenceRow>
  get(realmId: number, userId: number): Promise<PresenceRow | null>
  list(realmId: number): Promise<PresenceRow[]>
  /**
   * The realm's rows written after update `afterId` (every row when `afterId`
   * is negative) and the realm's sequence, read at one instant: every row
   * with an update ID up to `seq` is either returned or was written at or
   * before `afterId`.
   */
  changedSince(realmId: number, afterId: number): Promise<PresenceChanges>
}

export interface PresenceChanges {
  seq: number
  rows: PresenceRow[]
}

/** The pure write rule both stores follow. */
export function nextPresence(before: PresenceRow | null, status: PresenceStatus, now: number): { activeTime: number | null; lastConnectedTime: number } | null {
  const stale = (t: number | null | undefined): boolean => t === null || t === undefined || now - t >= PRESENCE_UPDATE_MIN_FREQ_SECONDS
  const bumpActive = status === 'active' && stale(before?.activeTime)
  const bumpConnected = bumpActive || stale(before?.lastConnectedTime)
  if (!bumpActive && !bumpConnected) return null
  return { activeTime: bumpActive ? now : (before?.activeTime ?? null), lastConnectedTime: bumpConnected ? now : (before?.lastConnectedTime ?? now) }
}

export class MemoryPresenceStore implements PresenceStore {
  private readonly realms = new Map<number, { seq: number; rows: Map<number, PresenceRow> }>()

  private realm(realmId: number) {
    let r = this.realms.get(realmId)
    if (!r) this.realms.set(realmId, (r = { seq: 0, rows: new Map() }))
    return r
  }

  async report(realmId: number, userId: number, status: PresenceStatus, now: number): Promise<PresenceReport> {
    const r = this.realm(realmId)
    const before = r.rows.get(userId) ?? null
    const next = nextPresence(before, status, now)
    if (!next) return { before, after: before as PresenceRow, written: false }
    const after = { userId, ...next, updateId: ++r.seq }
    r.rows.set(userId, after)
    return { before, after, written: true }
  }

  async replace(realmId: number, userId: number, activeTime: number | null, lastConnectedTime: number): Promise<PresenceRow> {
    const r = this.realm(realmId)
    const row = { userId, activeTime, lastConnectedTime, updateId: ++r.seq }
    r.rows.set(userId, row)
    return row
  }

  async get(realmId: number, userId: number): Promise<PresenceRow | null> {
    return this.realms.get(realmId)?.rows.get(userId) ?? null
  }

  async list(realmId: number): Promise<PresenceRow[]> {
    return [...(this.realms.get(realmId)?.rows.values() ?? [])]
  }

  async changedSince(realmId: number, afterId: number): Promise<PresenceChanges> {
    const r = this.realms.get(realmId)
    if (!r) return { seq: 0, rows: [] }
    return { seq: r.seq, rows: r.seq <= afterId ? [] : [...r.rows.values()].filter((row) => row.updateId > afterId) }
  }
}
