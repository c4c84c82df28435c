// POST /users: an administrator creates a person from an email, a password and
// a full name. The row, its settings, role group and default subscriptions go
// in one transaction; realm_user add, subscription add and peer_add follow.
import { isUniqueViolation } from '../db/errors.js'
import type { Realm, Stream, Subscription, Tx, User } from '../db/index.js'
import { idsMatchingLower } from '../db/exact-match.js'
import type { ActionContext, Emit } from './context.js'
import { inTransaction } from './context.js'
import { insertUser } from './user-rows.js'
import { isAdmin, isGuest, ROLE } from '../domain/roles.js'
import { checkFullName, checkRoleChange } from '../domain/user-rules.js'
import { PASSWORD_MIN_LENGTH } from '../domain/credentials.js'
import {
  badNameOrUsername,
  emailInUse,
  emailNotAllowed,
  mustBeAdmin,
  passwordTooWeak,
} from '../errors.js'
import { checkNotStandIn, isValidEmail } from '../access/user.js'
import { getBillingAdminIds } from '../queries/billing-admins.js'
import { canSeeDeliveryEmail, inaccessibleUserDict, realmUserAddPerson } from '../present/user.js'
import { realmUserAddEvent, userGroupMembersEvent } from '../events/schemas/index.js'
import { roleGroupName } from '../domain/system-groups.js'
import { fakeEmailDomain } from '../present/realm.js'
import { usersAmongWhoCanAccess } from '../presence/audience.js'
import type { Config } from '../config.js'
import { getStreamNotificationDefaults } from '../queries/user-settings.js'
import { subscriptionAddEvent, subscriptionPeerEvent } from '../events/schemas/index.js'
import { presentSubscription, type SubscriptionObject } from '../present/stream.js'
import { getStreamGroupContext, type StreamGroupContext } from '../queries/stream-permissions.js'

export interface CreateUserInput {
  email: string
  password: string
  fullName: string
  /** Default member; another role only from an owner (the admin CLI acts as one). */
  role?: number
}

async function checkEmailAllowed(tx: Tx, realm: Realm, email: string): Promise<void> {
  if (!realm.emailsRestrictedToDomains) return
  const domain = (email.split('@')[1] ?? '').toLowerCase()
  const domains = await tx.realmDomain.findMany({ where: { realmId: realm.id } })
  const allowed = domains.some((d) => d.domain === domain || (d.allowSubdomains && domain.endsWith(`.${d.domain}`)))
  if (!allowed) throw emailNotAllowed(email)
}

export async function createUser(ctx: ActionContext, input: CreateUserInput): Promise<User> {
  if (!isAdmin(ctx.user.role)) throw mustBeAdmin()
  const fullName = checkFullName(input.fullName)
  const email = input.email.trim()
  if (!isValidEmail(email)) throw badNameOrUsername()
  checkNotStandIn(email, fakeEmailDomain(ctx.realm, ctx.config.externalUrl))
  if (input.password.length < PASSWORD_MIN_LENGTH) throw passwordTooWeak()
  if (input.role !== undefined) checkRoleChange(ctx.user, { role: ROLE.MEMBER }, input.role)

  return inTransaction(ctx, async (tx, emit) => {
    await checkEmailAllowed(tx, ctx.realm, email)
    const existing = (await idsMatchingLower(tx, 'user_delivery_email', { realm_id: ctx.realm.id }, [email])).length > 0
    if (existing) throw emailInUse(email)
    const { user, subscribedStreamIds } = await insertUser(tx, ctx.realm, {
      email,
      fullName,
      password: input.password,
      role: input.role,
      dateJoined: ctx.now(),
      emailDomain: fakeEmailDomain(ctx.realm, ctx.config.externalUrl),
    })
    await emitUserAdded(tx, ctx, user, emit)
    await emitSubscriptions(tx, user, subscribedStreamIds, emit)
    return user
  }).catch((error: unknown) => {
    // A concurrent request created the same address between the check and the insert.
    if (isUniqueViolation(error)) throw emailInUse(email)
    throw error
  })
}

/**
 * realm_user add to every active user, with delivery_email hidden from those
 * who may not see it. Guests a realm keeps from this user (can_access_all_users_group)
 * get the "Unknown user" placeholder instead, marked so that queues with
 * user_list_incomplete skip it. Then user_group add_members of the user's
 * role group to every active user, as upstream's do_create_user. Call after
 * the user's subscriptions exist: a guest sharing one of its channels may
 * access it.
 */
export async function emitUserAdded(tx: Tx, ctx: { realm: Realm; config: Pick<Config, 'externalUrl'> }, user: User, emit: Emit): Promise<void> {
  const { realm } = ctx
  const settings = await tx.userSettings.findUnique({ where: { userId: user.id }, select: { emailAddressVisibility: true } })
  const billingAdmins = await getBillingAdminIds(tx, realm.id, [user.id])
  const target = { ...user, emailAddressVisibility: settings?.emailAddressVisibility, isBillingAdmin: billingAdmins.has(user.id) }
  const viewers = await tx.user.findMany({ where: { realmId: realm.id, isActive: true }, select: { id: true, role: true }, orderBy: { id: 'asc' } })
  const accessing = new Set(await usersAmongWhoCanAccess(tx, realm, user.id, viewers))
  const seeing = viewers.filter((v) => accessing.has(v.id) && canSeeDeliveryEmail(v, target)).map((v) => v.id)
  const notSeeing = viewers.filter((v) => accessing.has(v.id) && !canSeeDeliveryEmail(v, target)).map((v) => v.id)
  const kept = viewers.filter((v) => !accessing.has(v.id)).map((v) => v.id)
  const person = realmUserAddPerson(target, null, realm)
  emit(realmUserAddEvent({ ...person, delivery_email: user.deliveryEmail }), seeing)
  emit(realmUserAddEvent({ ...person, delivery_email: null }), notSeeing)
  if (kept.length > 0) {
    const placeholder = inaccessibleUserDict(user.id, fakeEmailDomain(realm, ctx.config.externalUrl))
    emit(realmUserAddEvent(placeholder, { inaccessible: true }), kept)
  }
  // insertUser made the user a member of its role's system group: everyone's realm_user_groups change too.
  const group = await tx.userGroup.findUnique({ where: { realmId_name: { realmId: realm.id, name: roleGroupName(user.role) } }, select: { id: true } })
  if (group) emit(userGroupMembersEvent('add_members', group.id, [user.id]), viewers.map((v) => v.id))
}

/** subscription add to the new user for its default channels, peer_add to those who may know the subscribers. */
export async function emitSubscriptions(tx: Tx, user: User, streamIds: number[], emit: Emit): Promise<void> {
  if (streamIds.length === 0) return
  const streams = await tx.stream.findMany({
    where: { id: { in: streamIds } },
    include: { subscriptions: { where: { active: true }, select: { userId: true } } },
    orderBy: { name: 'asc' },
  })
  const subs = await tx.subscription.findMany({ where: { userId: user.id, streamId: { in: streamIds } } })
  const subByStream = new Map(subs.map((s) => [s.streamId, s]))
  const groups = await getStreamGroupContext(tx, user.realmId, streams)
  const dicts = streams.flatMap((stream) => {
    const sub = subByStream.get(stream.id)
    return sub ? [subscriptionDict(stream, sub, groups, stream.subscriptions.map((s) => s.userId))] : []
  })
  const defaults = (await getStreamNotificationDefaults(tx, [user.id])).get(user.id)
  emit(subscriptionAddEvent(dicts, defaults), [user.id])

  const everyone = await tx.user.findMany({ where: { realmId: user.realmId, isActive: true }, select: { id: true, role: true } })
  for (const stream of streams) {
    const subscriberIds = stream.subscriptions.map((s) => s.userId)
    const audience = new Set(subscriberIds)
    if (!stream.inviteOnly) for (const u of everyone) if (stream.isWebPublic || !isGuest(u.role)) audience.add(u.id)
    audience.delete(user.id)
    emit(subscriptionPeerEvent('peer_add', [stream.id], [user.id]), [...audience].sort((a, b) => a - b))
  }
}

// The subscription object of upstream's `subscription add` (upstream-behaviour §2).
function subscriptionDict(stream: Stream, sub: Subscription, groups: StreamGroupContext, subscribers: number[]): SubscriptionObject {
  return presentSubscription(sub, stream, groups, { subscribers: [...subscribers].sort((a, b) => a - b) })
}
