// PostgreSQL transaction snapshots (pg_current_snapshot(): "xmin:xmax:xip,…"):
// whether a transaction's changes are visible in a snapshot. Register uses it
// to drop the events of changes its initial state already contains.

export interface PgSnapshot {
  xmin: bigint
  xmax: bigint
  inProgress: Set<bigint>
}

export function parsePgSnapshot(text: string): PgSnapshot {
  const [xmin, xmax, xip = ''] = text.split(':')
  if (xmin === undefined || xmax === undefined || !/^\d+$/.test(xmin) || !/^\d+$/.test(xmax)) throw new Error(`not a snapshot: ${text}`)
  return { xmin: BigInt(xmin), xmax: BigInt(xmax), inProgress: new Set(xip.split(',').filter(Boolean).map((x) => BigInt(x))) }
}

/** Did the transaction `xid` commit before the snapshot was taken? (Only committed transactions publish events.) */
export function committedBefore(snapshot: PgSnapshot, xid: string): boolean {
  const id = BigInt(xid)
  if (id < snapshot.xmin) return true
  if (id >= snapshot.xmax) return false
  return !snapshot.inProgress.has(id)
}
