// Presence as the API reads it: realm-wide (POST /users/me/presence, GET
// /realm/presence, the register `presence` key) and for one user.
import type { PrismaClient, Realm, User } from '../db/index.js'
import { accessibleUserIds } from '../access/user.js'
import { noPresenceData, presenceNotForBots } from '../errors.js'
import { legacyPresenceMember, modernPresenceMember, PRESENCE_WINDOW_SECS, singleUserPresence } from '../presence/format.js'
import { rawObject, type RawJson } from '../present/raw-json.js'
import type { PresenceStore } from '../presence/store.js'
import type { PresenceMirror } from '../presence/mirror.js'
import { loadPresenceDirectory, type PresenceDirectory } from './presence-directory.js'

export interface PresenceQueryContext {
  prisma: PrismaClient
  presence: PresenceStore
  presenceMirror: PresenceMirror
  /** Absent: the users are read through `prisma` (inside the register snapshot's transaction). */
  presenceDirectory?: PresenceDirectory
  realm: Realm
  user: User
  now: () => Date
}

export interface PresenceOptions {
  /** Modern entries keyed by user ID (slim_presence or last_update_id given); else legacy keyed by email. */
  modern: boolean
  /** Only rows written after this update ID (the modern protocol). */
  lastUpdateId?: number
  /**
   * Level 288: only users connected within this many days (default 14). As
   * upstream, the age limit applies only while the client has no presence
   * data yet (no last_update_id, or one of 0 or below).
   */
  historyLimitDays?: number
}

export interface RealmPresence {
  /** Pre-serialized: each listed row's member bytes, kept per row (presence/format.ts). */
  presences: RawJson
  presence_last_update_id: number
}

/**
 * The rows realm-wide presence lists, in user ID order (as the object's keys
 * come in the modern format, integer keys, and in the legacy one, insertion
 * order), and the newest update ID among them (or the client's, or -1, when
 * none).
 *
 * Users who turned presence_enabled off are listed too, as upstream does: their
 * row was replaced by one idle report old enough to read as offline
 * (applyPresenceEnabled) and their later reports are ignored.
 *
 * The rows come from this node's mirror of the store and the users' emails
 * and join dates from its directory cache (no database read for a member's
 * ping; a restricted guest's reachable users are read as before).
 */
export async function getRealmPresence(ctx: PresenceQueryContext, options: PresenceOptions): Promise<RealmPresence> {
  const fallbackId = options.lastUpdateId ?? -1
  if (ctx.realm.presenceDisabled) return { presences: rawObject([]), presence_last_update_id: fallbackId }
  const windowSecs = options.historyLimitDays !== undefined ? options.historyLimitDays * 24 * 3600 : PRESENCE_WINDOW_SECS
  const oldest = options.lastUpdateId !== undefined && options.lastUpdateId > 0 ? -Infinity : Math.floor(ctx.now().getTime() / 1000) - windowSecs
  const after = options.lastUpdateId ?? -1
  const rows = (await ctx.presenceMirror.rows(ctx.realm.id)).filter((r) => r.lastConnectedTime >= oldest && r.updateId > after)
  const accessible = await accessibleUserIds(ctx)
  const directory = ctx.presenceDirectory
    ? await ctx.presenceDirectory.forUsers(ctx.realm.id, rows.map((r) => r.userId))
    : await loadPresenceDirectory(ctx.prisma, ctx.realm.id)
  const members: Buffer[] = []
  let maxId = -1
  for (const row of rows) {
    const user = directory.get(row.userId)
    if (!user?.listed || (accessible && !accessible.has(row.userId))) continue
    if (row.updateId > maxId) maxId = row.updateId
    members.push(options.modern ? modernPresenceMember(row, user.joined) : legacyPresenceMember(row, user.email))
  }
  return { presences: rawObject(members), presence_last_update_id: maxId >= 0 ? maxId : fallbackId }
}

/** The register `presence` key: presences, presence_last_update_id, server_timestamp. */
export async function fetchPresenceState(
  ctx: PresenceQueryContext,
  options: { slimPresence: boolean; historyLimitDays?: number },
): Promise<RealmPresence & { server_timestamp: number }> {
  const state = await getRealmPresence(ctx, { modern: options.slimPresence, historyLimitDays: options.historyLimitDays })
  return { ...state, server_timestamp: ctx.now().getTime() / 1000 }
}

/** GET /users/{id}/presence for a user the requester may access. */
export async function getUserPresence(ctx: PresenceQueryContext, target: User): Promise<Record<string, unknown>> {
  if (target.isBot) throw presenceNotForBots()
  const row = await ctx.presence.get(ctx.realm.id, target.id)
  const settings = await ctx.prisma.userSettings.findUnique({ where: { userId: target.id }, select: { presenceEnabled: true } })
  if (!row || settings?.presenceEnabled === false || ctx.realm.presenceDisabled) throw noPresenceData(target.email)
  return singleUserPresence(row, Math.floor(ctx.now().getTime() / 1000))
}
