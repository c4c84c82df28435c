// Presence as upstream's web app reads it: each user's newest active and idle
// report times, judged against the server's clock of the newest presence data
// (register, each POST /users/me/presence answer, each presence event). Pure.
import type { State } from './state.js'

export type PresenceLabel = 'active' | 'idle' | 'offline'

/** A user's newest reports (UNIX seconds), as the modern presence format gives them. */
export interface PresenceTimes { activeTimestamp?: number; idleTimestamp?: number }

/** The modern entry of register and POST /users/me/presence. */
export interface ModernPresence { active_timestamp: number; idle_timestamp: number }
/** The legacy per-client entry (presence events, and register without slim_presence). */
export type LegacyPresence = Record<string, { status: string; timestamp: number }>

/** What a presence answer carries (POST /users/me/presence without ping_only). */
export interface PresenceAnswer { presences?: Record<string, ModernPresence | LegacyPresence>; server_timestamp?: number; presence_last_update_id?: number }

/** The settings register gives for presence and typing (`realm`), with upstream's values for servers that send none. */
export interface Timing {
  presencePingSeconds: number
  presenceOfflineSeconds: number
  typingExpiryMs: number
  typingStartedWaitMs: number
  typingStoppedWaitMs: number
}

export function timingOf(r: Record<string, unknown>): Timing {
  const n = (key: string, fallback: number) => (typeof r[key] === 'number' ? (r[key] as number) : fallback)
  return {
    presencePingSeconds: n('server_presence_ping_interval_seconds', 60),
    presenceOfflineSeconds: n('server_presence_offline_threshold_seconds', 140),
    typingExpiryMs: n('server_typing_started_expiry_period_milliseconds', 15_000),
    typingStartedWaitMs: n('server_typing_started_wait_period_milliseconds', 10_000),
    typingStoppedWaitMs: n('server_typing_stopped_wait_period_milliseconds', 5_000),
  }
}

/** Folds legacy per-client reports into the newest active and idle times. */
function foldLegacy(times: PresenceTimes, clients: LegacyPresence): PresenceTimes {
  const out = { ...times }
  for (const c of Object.values(clients)) {
    if (c.status === 'active' && c.timestamp > (out.activeTimestamp ?? 0)) out.activeTimestamp = c.timestamp
    if (c.status === 'idle' && c.timestamp > (out.idleTimestamp ?? 0)) out.idleTimestamp = c.timestamp
  }
  return out
}

function timesOf(value: ModernPresence | LegacyPresence): PresenceTimes {
  if (typeof value.active_timestamp === 'number' || typeof value.idle_timestamp === 'number') {
    const modern = value as ModernPresence
    return { activeTimestamp: modern.active_timestamp, idleTimestamp: modern.idle_timestamp }
  }
  return foldLegacy({}, value as LegacyPresence)
}

/**
 * Applies a presence answer: the users it lists get their times, the others
 * keep theirs (with last_update_id the server lists only what changed) and
 * are judged again at the answer's server time.
 */
export function applyPresences(state: State, answer: PresenceAnswer): void {
  for (const [id, value] of Object.entries(answer.presences ?? {})) state.presence.set(Number(id), timesOf(value))
  if (answer.server_timestamp !== undefined && answer.server_timestamp > state.presenceServerTime) state.presenceServerTime = answer.server_timestamp
  if (answer.presence_last_update_id !== undefined) state.presenceLastUpdateId = answer.presence_last_update_id
}

/** A presence event: a newer active or idle report of one user. */
export function applyPresenceEvent(state: State, userId: number, presence: LegacyPresence, serverTimestamp: number): void {
  state.presence.set(userId, foldLegacy(state.presence.get(userId) ?? {}, presence))
  if (serverTimestamp > state.presenceServerTime) state.presenceServerTime = serverTimestamp
}

/**
 * Upstream's rule: active while the newest active report is younger than the
 * offline threshold, else idle while the newest idle report is, else offline.
 * The user sees themself active when sharing presence, offline when not.
 */
export function presenceStatus(state: State, userId: number): PresenceLabel {
  if (userId === state.selfId) return state.settings.presence_enabled === false ? 'offline' : 'active'
  const times = state.presence.get(userId)
  if (!times) return 'offline'
  const age = (timestamp: number | undefined) => state.presenceServerTime - (timestamp ?? 0)
  if (age(times.activeTimestamp) < state.timing.presenceOfflineSeconds) return 'active'
  if (age(times.idleTimestamp) < state.timing.presenceOfflineSeconds) return 'idle'
  return 'offline'
}
