// User lookups that throw ApiError when the requester may not see the user.
import type { PrismaClient, Realm, Tx, User } from '../db/index.js'
import {
  authenticationFailed,
  invalidEmailAddress,
  noSuchUser,
  passwordAuthDisabled,
  rateLimited,
  realmDeactivated,
  userDeactivated,
} from '../errors.js'
import { RATE_RULES, type RateLimiter } from '../ratelimit/limiter.js'
import { SYSTEM_GROUPS, hashPassword, randomAlphanumeric, verifyPassword } from '../actions/user-rows.js'
import { isGuest } from '../domain/roles.js'
import { reachableUserIds } from '../domain/guest-access.js'
import { canSeeDeliveryEmail } from '../present/user.js'

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
  prisma: PrismaClient
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
  if (!isGuest(ctx.user.role) || !(await guestsAreRestricted(ctx.prisma, ctx.realm))) return undefined
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

/** A user of the requester's realm (active or not, bots included); `No such user` otherwise. */
export async function accessUserById(ctx: UserQueryContext, userId: number): Promise<User> {
  const user = await ctx.prisma.user.findUnique({ where: { id: userId } })
  return checkAccess(ctx, user)
}

/**
 * By API email or, when the requester may see it, real address (case-insensitive),
 * as upstream's GET /users/{email} does.
 */
export async function accessUserByEmail(ctx: UserQueryContext, email: string): Promise<User> {
  const wanted = email.trim()
  const byApiEmail = await ctx.prisma.user.findFirst({ where: { realmId: ctx.realm.id, email: { equals: wanted, mode: 'insensitive' } } })
  if (byApiEmail) return checkAccess(ctx, byApiEmail)
  const byDelivery = await ctx.prisma.user.findFirst({
    where: { realmId: ctx.realm.id, deliveryEmail: { equals: wanted, mode: 'insensitive' } },
    include: { settings: { select: { emailAddressVisibility: true } } },
  })
  if (!byDelivery) throw noSuchUser()
  const { settings, ...user } = byDelivery
  if (!canSeeDeliveryEmail(ctx.user, { ...user, emailAddressVisibility: settings?.emailAddressVisibility })) throw noSuchUser()
  return checkAccess(ctx, user)
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

export interface PasswordLoginContext {
  prisma: PrismaClient
  realm: Realm
  limiter: RateLimiter
  config: { rateLimiting: boolean }
  now: () => Date
}

/**
 * The user whose delivery email and password match, for POST /fetch_api_key.
 * Unknown address, bot (no password) and wrong password fail alike.
 */
export async function accessUserByPassword(ctx: PasswordLoginContext, username: string, password: string): Promise<User> {
  const email = username.trim()
  if (!isValidEmail(email)) throw invalidEmailAddress()
  if (!ctx.realm.passwordAuthEnabled) throw passwordAuthDisabled()
  const user = await ctx.prisma.user.findFirst({ where: { realmId: ctx.realm.id, deliveryEmail: { equals: email, mode: 'insensitive' } } })
  const matches = user?.passwordHash ? await verifyPassword(user.passwordHash, password) : (await verifyPassword(await timingDummy(), password), false)
  if (!user || !matches) {
    if (ctx.config.rateLimiting) {
      const decision = await ctx.limiter.hit(`auth:${ctx.realm.id}:${email.toLowerCase()}`, RATE_RULES.authenticateByUsername, ctx.now().getTime())
      if (!decision.allowed) throw rateLimited(decision.retryAfter)
    }
    throw authenticationFailed()
  }
  if (!user.isActive) throw userDeactivated()
  if (ctx.realm.deactivated) throw realmDeactivated()
  return user
}
