// Deactivation and reactivation: DELETE /users/{user_id} (administrators),
// DELETE /users/me (oneself) and POST /users/{user_id}/reactivate. A
// deactivated account fails authentication ("Account is deactivated"), its
// bots are deactivated with it and its pending invitations are revoked, as
// upstream does. Each account whose state flips is a realm_user update
// `{user_id, is_active}` (the level-228 form) to the active users who can
// access it. A reactivated account is back among the subscribers of its
// channels: those who follow the channels' subscribers get `peer_add` (upstream
// do_reactivate_user), as deactivation dropped it from every subscriber list.
// A deactivated account is a member of no user group (upstream level 303):
// its rows stay; clients that receive the is_active update drop it from every
// group and group-setting value themselves, those who cannot access it get
// user_group remove_members and the setting values it leaves
// (anonymous-setting-events.ts), and a reactivation tells everyone
// add_members for each of its direct groups and those setting values again.
import type { ActionContext, Emit, TxContext } from './context.js'
import { inTransaction } from './context.js'
import type { Tx, User } from '../db/index.js'
import { accessUserById } from '../access/user.js'
import { usersWhoCanAccess } from '../presence/audience.js'
import { canAdminUser, isLastOwner } from './update-user.js'
import { isOwner, ROLE } from '../domain/roles.js'
import { realmPermissionsOf } from '../queries/realm-permissions.js'
import {
  cannotDeactivateLastOwner,
  cannotDeactivateLastUser,
  insufficientPermission,
  mustBeAdmin,
  mustBeOwner,
  noSuchUser,
  principalDeactivated,
  userAlreadyActive,
} from '../errors.js'
import { isAdmin } from '../domain/roles.js'
import { invitesChangedEvent, realmUserUpdateEvent, userGroupMembersEvent } from '../events/schemas/index.js'
import { activeUserIds } from '../queries/user-groups.js'
import { getSubscriberIds } from '../queries/streams.js'
import { peerEvents } from './subscription-events.js'
import { directGroupsOf, emitAnonymousSettingUpdates } from './anonymous-setting-events.js'
import { revokeWebSessions } from './web-sessions.js'
import { watchBillingAdmins } from './billing-admin-events.js'

const INVITE_PENDING = 0
const INVITE_REVOKED = 2

/** DELETE /users/{user_id}: bots have their own endpoint upstream, so they are "No such user" here. */
export async function deactivateUser(ctx: ActionContext, userId: number): Promise<void> {
  const target = await accessUserById(ctx, userId)
  if (target.isBot) throw noSuchUser()
  if (!target.isActive) throw principalDeactivated()
  if (!canAdminUser(ctx.user, target)) throw insufficientPermission()
  if (isOwner(target.role) && !isOwner(ctx.user.role)) throw mustBeOwner()
  await inTransaction(ctx, async (tx, emit) => {
    if (await isLastOwner(tx, target)) throw cannotDeactivateLastOwner()
    await deactivateWithBots(tx, ctx, emit, target)
  })
}

/** DELETE /users/me: refused for the only owner and for the realm's only user. */
export async function deactivateOwnUser(ctx: ActionContext): Promise<void> {
  await inTransaction(ctx, async (tx, emit) => {
    const humans = await tx.user.count({ where: { realmId: ctx.realm.id, isActive: true, isBot: false } })
    if (humans <= 1 && !ctx.user.isBot) throw cannotDeactivateLastUser(false)
    if (await isLastOwner(tx, ctx.user)) throw cannotDeactivateLastUser(true)
    await deactivateWithBots(tx, ctx, emit, ctx.user)
  })
}

async function deactivateWithBots(tx: Tx, ctx: TxContext, emit: Emit, target: User): Promise<void> {
  const bots = await tx.user.findMany({ where: { realmId: ctx.realm.id, isBot: true, botOwnerId: target.id, isActive: true }, orderBy: { id: 'asc' } })
  const ids = [target.id, ...bots.map((b) => b.id)]
  const billingAdminsChanged = await watchBillingAdmins(tx, ctx, emit)
  await tx.user.updateMany({ where: { id: { in: ids } }, data: { isActive: false } })
  await revokeWebSessions(tx, ids)
  const everyone = await activeUserIds(tx, ctx.realm.id)
  const groupsOf = await directGroupsOf(tx, ids)
  for (const id of ids) {
    const audience = await usersWhoCanAccess(tx, ctx.realm, id)
    emit(realmUserUpdateEvent({ user_id: id, is_active: false }), audience)
    const others = everyone.filter((u) => !audience.includes(u) && !ids.includes(u))
    if (others.length === 0) continue
    for (const groupId of groupsOf.get(id)?.named ?? []) emit(userGroupMembersEvent('remove_members', groupId, [id]), others)
    await emitAnonymousSettingUpdates(tx, emit, ctx.realm.id, groupsOf.get(id)?.anonymous ?? [], others)
  }
  const invites = await tx.invitation.updateMany({ where: { invitedById: { in: ids }, status: INVITE_PENDING }, data: { status: INVITE_REVOKED } })
  const links = await tx.multiuseInvite.updateMany({ where: { referredById: { in: ids }, status: INVITE_PENDING }, data: { status: INVITE_REVOKED } })
  if (invites.count + links.count > 0) {
    const admins = await tx.user.findMany({ where: { realmId: ctx.realm.id, isActive: true, role: { lte: ROLE.ADMIN } }, select: { id: true } })
    emit(invitesChangedEvent(), admins.map((a) => a.id))
  }
  await billingAdminsChanged()
}

/** POST /users/{user_id}/reactivate: administrators only; bots come back without their owner's say. */
export async function reactivateUser(ctx: ActionContext, userId: number): Promise<void> {
  if (!isAdmin(ctx.user.role)) throw mustBeAdmin()
  const target = await accessUserById(ctx, userId)
  if (target.isSystemBot) throw insufficientPermission()
  if (target.isActive) throw userAlreadyActive()
  if (target.isBot) await checkMayCreateBot(ctx, target.botType)
  await inTransaction(ctx, async (tx, emit) => {
    const billingAdminsChanged = await watchBillingAdmins(tx, ctx, emit)
    const changed = await tx.user.updateMany({ where: { id: target.id, isActive: false }, data: { isActive: true } })
    if (changed.count === 0) throw userAlreadyActive()
    emit(realmUserUpdateEvent({ user_id: target.id, is_active: true }), await usersWhoCanAccess(tx, ctx.realm, target.id))
    await emitSubscriberReturns(tx, ctx, emit, target.id)
    const everyone = await activeUserIds(tx, ctx.realm.id)
    const groups = (await directGroupsOf(tx, [target.id])).get(target.id)
    for (const groupId of groups?.named ?? []) emit(userGroupMembersEvent('add_members', groupId, [target.id]), everyone)
    await emitAnonymousSettingUpdates(tx, emit, ctx.realm.id, groups?.anonymous ?? [], everyone)
    await billingAdminsChanged()
  })
}

/** Upstream's bot type of incoming-webhook bots, which can only send messages. */
const INCOMING_WEBHOOK_BOT = 2

/**
 * Reactivating a bot needs the permission to create one (upstream
 * reactivate_user_backend → check_can_create_bot, level 344):
 * can_create_bots_group, or can_create_write_only_bots_group for an
 * incoming-webhook bot.
 */
async function checkMayCreateBot(ctx: ActionContext, botType: number | null): Promise<void> {
  const holds = await realmPermissionsOf(ctx.prisma, ctx.realm, ctx.user, ctx.now())
  if (holds('can_create_bots_group')) return
  if (botType === INCOMING_WEBHOOK_BOT && holds('can_create_write_only_bots_group')) return
  throw insufficientPermission()
}

/** peer_add for each active channel the reactivated user is still subscribed to. */
async function emitSubscriberReturns(tx: Tx, ctx: TxContext, emit: Emit, userId: number): Promise<void> {
  const subs = await tx.subscription.findMany({ where: { userId, active: true, stream: { deactivated: false } }, select: { stream: true } })
  if (subs.length === 0) return
  const streams = subs.map((s) => s.stream).sort((a, b) => a.id - b.id)
  const realmUsers = await tx.user.findMany({ where: { realmId: ctx.realm.id, isActive: true }, select: { id: true, role: true } })
  const subscribersAfter = await getSubscriberIds(tx, streams.map((s) => s.id))
  const changes = streams.map((stream) => ({ stream, userIds: [userId] }))
  for (const { event, userIds } of peerEvents('peer_add', changes, realmUsers, subscribersAfter)) emit(event, userIds)
}
