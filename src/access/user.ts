// User lookups that throw ApiError when the requester may not see the user.
import { Prisma, type PrismaClient, type Realm, type Tx, type User } from '../db/index.js'
import {
  ApiError,
  authenticationFailed,
  emailNotAllowed,
  invalidEmailAddress,
  noSuchUser,
  passwordAuthDisabled,
  rateLimited,
  realmDeactivated,
  userDeactivated,
} from '../errors.js'
import { RATE_RULES, type RateLimiter } from '../ratelimit/limiter.js'
import { SYSTEM_GROUPS } from '../domain/system-groups.js'
import { hashPassword, randomAlphanumeric, verifyPassword } from '../domain/credentials.js'
import { isGuest, ROLE } from '../domain/roles.js'
import { reachableUserIds } from '../domain/guest-access.js'
import { roleMaySeeDeliveryEmail } from '../present/user.js'
import { fakeEmailDomain } from '../present/realm.js'
import { idMatchingLower } from '../db/exact-match.js'

/** A plain address check in the spirit of Django's EmailValidator: local@domain.tld, no spaces. */
export function isValidEmail(email: string): boolean {
  if (email.length > 254 || /\s/.test(email)) return false
  const at = email.lastIndexOf('@')
  if (at < 1 || at === email.length - 1) return false
  const local = email.slice(0, at)
  const domain = email.slice(at + 1)
  if (!/^[A-Za-z0-9!#$%&'*+/=?^_`{|}~.-]+$/.test(local) || local.startsWith('.') || local.endsWith('.') || local.includes('..')) return false
  const labels = domain.split('.')
  return labels.length >= 2 && labels.every((l) => /^[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?$/.test(l))
}

type Db = PrismaClient | Tx

export interface UserQueryContext {
  /** The client, or the transaction the caller runs in. */
  prisma: Db
  realm: Realm
  user: User
}

/** Whether the realm keeps guests from some users (can_access_all_users_group is not "everyone"). */
export async function guestsAreRestricted(db: Db, realm: Pick<Realm, 'canAccessAllUsersGroupId'>): Promise<boolean> {
  if (realm.canAccessAllUsersGroupId === null) return false
  const group = await db.userGroup.findUnique({ where: { id: realm.canAccessAllUsersGroupId }, select: { name: true } })
  return !!group && group.name !== SYSTEM_GROUPS.everyone && group.name !== SYSTEM_GROUPS.internet
}

/**
 * IDs of the users `viewer` may access, or undefined when every user of the realm
 * is accessible. Only guests can be restricted (can_access_all_users_group is
 * "everyone" or "members" upstream); see domain/guest-access.ts for the rule.
 */
export async function accessibleUserIds(ctx: UserQueryContext): Promise<Set<number> | undefined> {
  if (!(await isRestrictedGuest(ctx.prisma, ctx.realm, ctx.user))) return undefined
  const mine = await ctx.prisma.subscription.findMany({ where: { userId: ctx.user.id, active: true }, select: { streamId: true } })
  const peers = await ctx.prisma.subscription.findMany({
    where: { streamId: { in: mine.map((s) => s.streamId) }, active: true },
    select: { userId: true },
  })
  const bots = await ctx.prisma.user.findMany({ where: { realmId: ctx.realm.id, isBot: true }, select: { id: true } })
  const dms = await ctx.prisma.message.findMany({
    where: { realmId: ctx.realm.id, dmUserIds: { has: ctx.user.id } },
    select: { dmUserIds: true },
  })
  return reachableUserIds(ctx.user.id, {
    channelPeers: peers.map((p) => p.userId),
    dmPartners: dms.flatMap((m) => m.dmUserIds),
    botIds: bots.map((b) => b.id),
  })
}

/** Whether `viewer` is a guest the realm keeps from some users. */
export async function isRestrictedGuest(db: Db, realm: Pick<Realm, 'canAccessAllUsersGroupId'>, viewer: Pick<User, 'role'>): Promise<boolean> {
  return isGuest(viewer.role) && (await guestsAreRestricted(db, realm))
}

/**
 * A condition true when the user whose ID is `userId` (a column) is one the
 * restricted guest `guestId` may access, for filtering inside one statement:
 * the same rule as accessibleUserIds (domain/guest-access.ts).
 */
export function guestMayAccessSql(realmId: number, guestId: number | Prisma.Sql, userId: number | Prisma.Sql): Prisma.Sql {
  return Prisma.sql`(
    ${userId} = ${guestId}
    OR EXISTS (SELECT 1 FROM user_profile b WHERE b.id = ${userId} AND b.realm_id = ${realmId} AND b.is_bot)
    OR EXISTS (
      SELECT 1 FROM subscription mine JOIN subscription peer ON peer.stream_id = mine.stream_id
      WHERE mine.user_id = ${guestId} AND mine.active AND peer.user_id = ${userId} AND peer.active)
    OR EXISTS (
      SELECT 1 FROM message dm
      WHERE dm.realm_id = ${realmId} AND dm.dm_user_ids @> ARRAY[${guestId}::int, ${userId}::int]))`
}

/** Of `userIds`, those who may access `userId`: all but the restricted guests that may not, in one statement. */
export async function usersWhoMayAccess(db: Db, realm: Realm, userIds: readonly number[], userId: number): Promise<number[]> {
  if (userIds.length === 0 || !(await guestsAreRestricted(db, realm))) return [...userIds]
  const blind = await db.$queryRaw<{ id: number }[]>(Prisma.sql`
    SELECT g.id FROM user_profile g
    WHERE g.id = ANY(${[...new Set(userIds)]}::int[]) AND g.role = ${ROLE.GUEST}
      AND NOT ${guestMayAccessSql(realm.id, Prisma.raw('g.id'), userId)}`)
  const hidden = new Set(blind.map((r) => r.id))
  return userIds.filter((id) => !hidden.has(id))
}

/** Of `userIds`, those `viewer` may access, in one statement; all of them when the viewer is not a restricted guest. */
export async function accessibleAmong(db: Db, realm: Realm, viewer: Pick<User, 'id' | 'role'>, userIds: readonly number[]): Promise<Set<number>> {
  if (userIds.length === 0 || !(await isRestrictedGuest(db, realm, viewer))) return new Set(userIds)
  const rows = await db.$queryRaw<{ id: number }[]>(Prisma.sql`
    SELECT u.id FROM unnest(${[...new Set(userIds)]}::int[]) AS u(id)
    WHERE ${guestMayAccessSql(realm.id, viewer.id, Prisma.raw('u.id'))}`)
  return new Set(rows.map((r) => r.id))
}

/** A user of the requester's realm (active or not, bots included); `No such user` otherwise. */
export async function accessUserById(ctx: UserQueryContext, userId: number): Promise<User> {
  const user = await ctx.prisma.user.findUnique({ where: { id: userId } })
  return checkAccess(ctx, user)
}

/**
 * The user GET /users/{email} names, as upstream's access_user_by_email
 * (level 302): a stand-in `user{id}@{realm domain}` names user `id` whatever
 * their visibility; any other address is compared (case-insensitively) with the
 * real addresses of the users whose email_address_visibility lets the
 * requester's role see them (the requester's own included only so).
 */
export async function accessUserByEmail(ctx: UserQueryContext & { config: { externalUrl: string } }, email: string): Promise<User> {
  const wanted = email.trim()
  const standIn = standInUserId(wanted, fakeEmailDomain(ctx.realm, ctx.config.externalUrl))
  if (standIn !== undefined) return accessUserById(ctx, standIn)
  const deliveryId = await idMatchingLower(ctx.prisma, 'user_delivery_email', { realm_id: ctx.realm.id }, wanted)
  const byDelivery = deliveryId === undefined ? null : await ctx.prisma.user.findUnique({
    where: { id: deliveryId },
    include: { settings: { select: { emailAddressVisibility: true } } },
  })
  if (!byDelivery) throw noSuchUser()
  const { settings, ...user } = byDelivery
  if (!roleMaySeeDeliveryEmail(ctx.user.role, { ...user, emailAddressVisibility: settings?.emailAddressVisibility })) throw noSuchUser()
  return checkAccess(ctx, user)
}

/** The user ID of a stand-in address `user{id}@{domain}` (any case), or undefined for any other address. */
export function standInUserId(email: string, domain: string): number | undefined {
  const at = email.lastIndexOf('@')
  if (at < 0 || email.slice(at + 1).toLowerCase() !== domain.toLowerCase()) return undefined
  const match = /^user(\d{1,9})$/i.exec(email.slice(0, at))
  return match ? Number(match[1]) : undefined
}

/**
 * Refuses a real address shaped like the realm's stand-ins (`user{N}@{domain}`):
 * as someone's API email it would name user N for GET /users/{email} and could
 * collide with user N's stand-in once either hides an address.
 */
export function checkNotStandIn(email: string, domain: string): void {
  if (standInUserId(email, domain) !== undefined) throw emailNotAllowed(email)
}

async function checkAccess(ctx: UserQueryContext, user: User | null): Promise<User> {
  if (!user || user.realmId !== ctx.realm.id) throw noSuchUser()
  const accessible = await accessibleUserIds(ctx)
  if (accessible && !accessible.has(user.id)) throw noSuchUser()
  return user
}

// A fixed argon2id hash verified when no account matches, so that unknown
// addresses cost the same time as wrong passwords.
let dummyHash: Promise<string> | undefined
const timingDummy = (): Promise<string> => (dummyHash ??= hashPassword(randomAlphanumeric(32)))

/** Where refused password attempts are counted (the node's Metrics). */
export interface LoginRefusalCounter {
  loginRefused(code: string): void
  rateLimitRefused(limit: 'login'): void
}

export interface PasswordCheckContext {
  limiter: RateLimiter
  metrics: LoginRefusalCounter
  config: { rateLimiting: boolean }
  now: () => Date
}

export interface PasswordLoginContext extends PasswordCheckContext {
  prisma: PrismaClient
  realm: Realm
}

/**
 * Runs one password check under upstream's authenticate_by_username limit
 * (5 failures per account in 30 minutes) and a per-client-address limit,
 * both counted cluster-wide by the rate limiter. The limits are checked
 * BEFORE the password is verified, so during a lockout even the right
 * password is refused (429 RATE_LIMIT_HIT with retry-after); only failures
 * are counted.
 */
export async function checkPasswordThrottled(
  ctx: PasswordCheckContext,
  who: { realmId: number; email: string; clientAddress: string },
  verify: () => Promise<boolean>,
): Promise<boolean> {
  if (!ctx.config.rateLimiting) return verify()
  const buckets = [
    { key: `auth:${who.realmId}:${who.email.trim().toLowerCase()}`, rules: RATE_RULES.authenticateByUsername },
    { key: `authip:${who.clientAddress}`, rules: RATE_RULES.authenticateByIp },
  ]
  const now = ctx.now().getTime()
  const before = await Promise.all(buckets.map((b) => ctx.limiter.peek(b.key, b.rules, now)))
  const blocked = before.filter((d) => !d.allowed)
  if (blocked.length > 0) {
    ctx.metrics.rateLimitRefused('login')
    throw rateLimited(Math.max(...blocked.map((d) => d.retryAfter)))
  }
  const ok = await verify()
  if (!ok) await Promise.all(buckets.map((b) => ctx.limiter.hit(b.key, b.rules, now)))
  return ok
}

/**
 * The user whose delivery email and password match, for POST /fetch_api_key.
 * Unknown address, bot (no password) and wrong password fail alike; the
 * address is compared exactly (case-insensitively), never as a pattern.
 */
export async function accessUserByPassword(ctx: PasswordLoginContext, username: string, password: string, clientAddress: string): Promise<User> {
  try {
    return await checkPasswordLogin(ctx, username, password, clientAddress)
  } catch (error) {
    if (error instanceof ApiError) ctx.metrics.loginRefused(error.code)
    throw error
  }
}

async function checkPasswordLogin(ctx: PasswordLoginContext, username: string, password: string, clientAddress: string): Promise<User> {
  const email = username.trim()
  if (!isValidEmail(email)) throw invalidEmailAddress()
  if (!ctx.realm.passwordAuthEnabled) throw passwordAuthDisabled()
  const userId = await idMatchingLower(ctx.prisma, 'user_delivery_email', { realm_id: ctx.realm.id }, email)
  const user = userId === undefined ? null : await ctx.prisma.user.findUnique({ where: { id: userId } })
  const matches = await checkPasswordThrottled(ctx, { realmId: ctx.realm.id, email, clientAddress }, async () =>
    user?.passwordHash ? verifyPassword(user.passwordHash, password) : (await verifyPassword(await timingDummy(), password), false),
  )
  if (!user || !matches) throw authenticationFailed()
  if (!user.isActive) throw userDeactivated()
  if (ctx.realm.deactivated) throw realmDeactivated()
  return user
}
