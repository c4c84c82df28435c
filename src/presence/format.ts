// Presence rows → the API's modern and legacy presence entries and the
// `presence` event (upstream-behaviour §2 presence, §10.2). Pure.
import { presenceEvent as buildPresenceEvent, type BuiltEvent } from '../events/schemas/index.js'
import type { PresenceRow } from './store.js'

export const OFFLINE_THRESHOLD_SECS = 200
export const PRESENCE_PING_INTERVAL_SECS = 60
/** A report counts as active in the legacy format when activity is this close to the last connection. */
export const LEGACY_ACTIVITY_OFFSET_SECS = 70
/** Rows older than this are left out of realm-wide presence. */
export const PRESENCE_WINDOW_SECS = 14 * 24 * 3600
/** Presence events go out only when the user comes back after this long (OFFLINE − PING − 10). */
export const COMING_ONLINE_SECS = OFFLINE_THRESHOLD_SECS - PRESENCE_PING_INTERVAL_SECS - 10
/** Presence events are not sent (unless forced) in realms with more active users. */
export const PRESENCE_EVENT_MAX_REALM_USERS = 100

export interface ModernPresence {
  active_timestamp: number
  idle_timestamp: number
}

export interface LegacyClientPresence {
  client: 'website'
  status: 'active' | 'idle' | 'offline'
  timestamp: number
  pushable?: boolean
}

export interface LegacyPresence {
  aggregated: Omit<LegacyClientPresence, 'pushable'>
  website: LegacyClientPresence
}

/** `{active_timestamp, idle_timestamp}`; a user never active reports its join time. */
export function modernPresence(row: PresenceRow, dateJoined: number): ModernPresence {
  return { active_timestamp: row.activeTime ?? dateJoined, idle_timestamp: row.lastConnectedTime }
}

function legacyStatus(row: PresenceRow): { status: 'active' | 'idle'; timestamp: number } {
  if (row.activeTime !== null && row.activeTime + LEGACY_ACTIVITY_OFFSET_SECS >= row.lastConnectedTime) {
    return { status: 'active', timestamp: row.activeTime }
  }
  return { status: 'idle', timestamp: row.lastConnectedTime }
}

export function legacyPresence(row: PresenceRow): LegacyPresence {
  const { status, timestamp } = legacyStatus(row)
  return { aggregated: { client: 'website', status, timestamp }, website: { client: 'website', status, timestamp, pushable: false } }
}

/**
 * A row's member of a realm-wide answer, as UTF-8 bytes: `"<email>":{…}`
 * (legacy) or `"<user id>":{…}` (modern). Kept per row object (rows are never
 * changed: a write makes a new one) with the user's email or join date it was
 * made with, so an answer serializes only the rows written since the last one.
 */
interface MemberBytes {
  legacy?: { email: string; bytes: Buffer }
  modern?: { joined: number; bytes: Buffer }
}
const memberBytes = new WeakMap<PresenceRow, MemberBytes>()

function bytesOf(row: PresenceRow): MemberBytes {
  let kept = memberBytes.get(row)
  if (kept === undefined) memberBytes.set(row, (kept = {}))
  return kept
}

export function legacyPresenceMember(row: PresenceRow, email: string): Buffer {
  const kept = bytesOf(row)
  if (kept.legacy?.email !== email) kept.legacy = { email, bytes: Buffer.from(`${JSON.stringify(email)}:${JSON.stringify(legacyPresence(row))}`) }
  return kept.legacy.bytes
}

export function modernPresenceMember(row: PresenceRow, dateJoined: number): Buffer {
  const kept = bytesOf(row)
  if (kept.modern?.joined !== dateJoined) kept.modern = { joined: dateJoined, bytes: Buffer.from(`"${row.userId}":${JSON.stringify(modernPresence(row, dateJoined))}`) }
  return kept.modern.bytes
}

/** GET /users/{id}/presence: like legacy, with `aggregated.status` offline once stale. */
export function singleUserPresence(row: PresenceRow, now: number): { website: { status: string; timestamp: number }; aggregated: { status: string; timestamp: number } } {
  const { status, timestamp } = legacyStatus(row)
  const aggregatedStatus = now - timestamp > OFFLINE_THRESHOLD_SECS ? 'offline' : status
  return {
    website: { client: 'website', status, timestamp, pushable: false } as { status: string; timestamp: number },
    aggregated: { client: 'website', status: aggregatedStatus, timestamp } as { status: string; timestamp: number },
  }
}

/** The legacy `presence` event; queues with slim_presence drop `email` (events/queues/filter.ts). */
export function presenceEvent(user: { id: number; email: string }, row: PresenceRow, serverTimestamp: number): BuiltEvent {
  const { status, timestamp } = legacyStatus(row)
  return buildPresenceEvent(user, { website: { client: 'website', status, timestamp, pushable: false } }, serverTimestamp)
}
