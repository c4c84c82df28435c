// POST /users/me/presence (the report part) and the presence side of the
// presence_enabled setting. Presence lives in services.presence, not in the
// database; events follow upstream's rules (§2 presence, §10.2).
import type { ActionContext, RequestContext } from './context.js'
import { publishAll } from './context.js'
import type { User } from '../db/index.js'
import { fastRead } from '../db/fast-read.js'
import { botRequestsNotAccepted, invalidPresenceStatus } from '../errors.js'
import { usersWhoCanAccess } from '../presence/audience.js'
import { COMING_ONLINE_SECS, OFFLINE_THRESHOLD_SECS, PRESENCE_EVENT_MAX_REALM_USERS, presenceEvent } from '../presence/format.js'
import type { PresenceRow, PresenceStatus } from '../presence/store.js'

export const PRESENCE_STATUSES: readonly PresenceStatus[] = ['active', 'idle']

const seconds = (date: Date): number => Math.floor(date.getTime() / 1000)

async function publishPresence(ctx: RequestContext, user: Pick<User, 'id' | 'email'>, row: PresenceRow): Promise<void> {
  const audience = await usersWhoCanAccess(ctx.prisma, ctx.realm, user.id)
  await publishAll(ctx, [{ event: presenceEvent(user, row, ctx.now().getTime() / 1000), userIds: audience }])
}

/**
 * The user's presence_enabled. Every ping asks: the authentication cache holds
 * it with the user it just authenticated (db/auth-cache.ts); without an entry
 * (the cache bypassed, or the entry evicted since), a prepared statement.
 */
async function sharesPresence(ctx: ActionContext): Promise<boolean> {
  const cached = ctx.authCache.cachedPresenceEnabled(ctx.user)
  if (cached !== undefined) return cached
  const [settings] = await fastRead<{ presence_enabled: boolean }>(
    ctx.prisma,
    'presence-enabled',
    'SELECT presence_enabled FROM user_settings WHERE user_id = $1',
    [ctx.user.id],
  )
  return settings?.presence_enabled !== false
}

/** Records the user's report; sends a presence event when the user comes online (small realms only). */
export async function updatePresence(ctx: ActionContext, input: { status: string }): Promise<void> {
  if (ctx.user.isBot) throw botRequestsNotAccepted()
  if (!PRESENCE_STATUSES.includes(input.status as PresenceStatus)) throw invalidPresenceStatus(input.status)
  // Reports of users who do not share presence are ignored (their row stays idle and old).
  if (!(await sharesPresence(ctx))) return
  const now = seconds(ctx.now())
  const { before, after, written } = await ctx.presence.report(ctx.realm.id, ctx.user.id, input.status as PresenceStatus, now)
  if (!written) return
  const comingOnline = before === null || now - before.lastConnectedTime > COMING_ONLINE_SECS
  if (!comingOnline) return
  const realmUsers = await ctx.prisma.user.count({ where: { realmId: ctx.realm.id, isActive: true } })
  if (realmUsers > PRESENCE_EVENT_MAX_REALM_USERS) return
  await publishPresence(ctx, ctx.user, after)
}

/**
 * presence_enabled changed (upstream do_change_user_setting). Enabling records
 * the user active now; disabling replaces the row with one idle report old
 * enough to show offline. Either way everyone is told (a forced event).
 */
export async function applyPresenceEnabled(ctx: ActionContext, enabled: boolean): Promise<void> {
  const now = seconds(ctx.now())
  const row = enabled
    ? await ctx.presence.replace(ctx.realm.id, ctx.user.id, now, now)
    : await ctx.presence.replace(ctx.realm.id, ctx.user.id, null, now - (OFFLINE_THRESHOLD_SECS + 120))
  await publishPresence(ctx, ctx.user, row)
}
