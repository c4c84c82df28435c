// PATCH /users/{user_id}: what an administrator (or a bot's owner) changes
// about another account — full name, role, custom profile data and (with
// can_change_user_emails) the real address. Each
// change is a realm_user update `person` form sent to those who can access
// the user. The role and name helpers also serve PATCH /bots/{bot_id}.
import type { ActionContext, Emit, TxContext } from './context.js'
import { inTransaction } from './context.js'
import type { Tx, User } from '../db/index.js'
import { checkFullName, checkRoleChange } from '../domain/user-rules.js'
import { roleGroupName } from '../domain/system-groups.js'
import { writeProfileData, type ProfileValueInput } from './custom-profile-fields.js'
import { accessUserById, accessibleUserIds } from '../access/user.js'
import { usersWhoCanAccess } from '../presence/audience.js'
import { activeUserIds } from '../queries/user-groups.js'
import { canSeeDeliveryEmail } from '../present/user.js'
import { userGroupMembersEvent } from '../events/schemas/index.js'
import { isAdmin, isOwner, ROLE } from '../domain/roles.js'
import { insufficientPermission, lastOwnerDemotion } from '../errors.js'
import { realmUserUpdateEvent } from '../events/schemas/index.js'
import { writeDeliveryEmail } from './change-user-email.js'
import { checkNotStandIn, isValidEmail } from '../access/user.js'
import { fakeEmailDomain } from '../present/realm.js'
import { isUniqueViolation } from '../db/errors.js'
import { emailInUse, invalidEmailAddress, userNotAuthorizedToChangeEmails } from '../errors.js'
import { watchBillingAdmins } from './billing-admin-events.js'

export interface UpdateUserInput {
  fullName?: string
  role?: number
  profileData?: { id: number; value: ProfileValueInput }[]
  /** A new real address (upstream level 313): administrators with can_change_user_emails only. */
  newEmail?: string
}

/**
 * Upstream can_admin_user: a realm administrator, or the owner of the bot.
 * Nobody administers a system bot (the notification bot): upstream's live in
 * another realm, out of every administrator's reach.
 */
export function canAdminUser(actor: Pick<User, 'id' | 'role'>, target: Pick<User, 'botOwnerId' | 'isSystemBot'>): boolean {
  if (target.isSystemBot) return false
  return isAdmin(actor.role) || (target.botOwnerId !== null && target.botOwnerId === actor.id)
}

/** Upstream level 313: only an administrator holding the server-granted can_change_user_emails gives another user a new address. */
export function checkMayChangeUserEmails(actor: Pick<User, 'role' | 'canChangeUserEmails'>): void {
  if (!isAdmin(actor.role) || !actor.canChangeUserEmails) throw userNotAuthorizedToChangeEmails()
}

/** The trimmed new address, or upstream's error for one that is not an address. */
function checkNewEmail(raw: string, domain: string): string {
  const email = raw.trim()
  if (!isValidEmail(email)) throw invalidEmailAddress()
  checkNotStandIn(email, domain)
  return email
}

/** Whether `target` is the realm's only active human owner (upstream check_last_owner). */
export async function isLastOwner(db: Pick<Tx, 'user'>, target: Pick<User, 'id' | 'realmId' | 'role' | 'isBot'>): Promise<boolean> {
  if (!isOwner(target.role) || target.isBot) return false
  const others = await db.user.count({ where: { realmId: target.realmId, role: ROLE.OWNER, isActive: true, isBot: false, id: { not: target.id } } })
  return others === 0
}

/**
 * A name for `target` from an administrator, or undefined when nothing
 * changes (upstream ignores a blank name here, and name_changes_disabled).
 */
export function adminFullName(target: Pick<User, 'fullName'>, raw: string | undefined): string | undefined {
  if (raw === undefined || raw.trim() === '') return undefined
  const name = checkFullName(raw)
  return name === target.fullName ? undefined : name
}

export async function updateUser(ctx: ActionContext, userId: number, input: UpdateUserInput): Promise<void> {
  const target = await accessUserById(ctx, userId)
  if (input.newEmail !== undefined) checkMayChangeUserEmails(ctx.user)
  if (!canAdminUser(ctx.user, target)) throw insufficientPermission()
  const newEmail = input.newEmail === undefined ? undefined : checkNewEmail(input.newEmail, fakeEmailDomain(ctx.realm, ctx.config.externalUrl))
  // Everything that can be checked without writing is checked first.
  if (input.role !== undefined) checkRoleChange(ctx.user, target, input.role)
  const fullName = adminFullName(target, input.fullName)
  const roleChanges = input.role !== undefined && input.role !== target.role
  if (roleChanges && (await isLastOwner(ctx.prisma, target))) throw lastOwnerDemotion()

  const profileData = input.profileData ?? []
  if (!roleChanges && fullName === undefined && profileData.length === 0 && newEmail === undefined) return
  // One transaction: a refused profile value or address leaves the name and role unchanged too.
  await inTransaction(ctx, async (tx, emit) => {
    if (profileData.length > 0) await writeProfileData(tx, ctx, emit, target, profileData)
    const current = await tx.user.findUniqueOrThrow({ where: { id: target.id } })
    if (fullName !== undefined) await changeFullName(tx, ctx, emit, current, fullName)
    if (roleChanges) await changeRole(tx, ctx, emit, current, input.role as number)
    if (newEmail !== undefined) {
      const latest = await tx.user.findUniqueOrThrow({ where: { id: target.id } })
      if (latest.deliveryEmail !== newEmail) {
        const { emissions } = await writeDeliveryEmail(tx, ctx.realm, latest, newEmail)
        for (const { event, userIds, ...extra } of emissions) emit(event, userIds, extra)
      }
    }
  }).catch((error: unknown) => {
    // A concurrent request took the same address between the check and the update.
    if (newEmail !== undefined && isUniqueViolation(error)) throw emailInUse(newEmail)
    throw error
  })
}

export async function changeFullName(tx: Tx, ctx: TxContext, emit: Emit, target: User, fullName: string): Promise<void> {
  if (fullName === target.fullName) return
  await tx.user.update({ where: { id: target.id }, data: { fullName } })
  emit(realmUserUpdateEvent({ user_id: target.id, full_name: fullName }), await usersWhoCanAccess(tx, ctx.realm, target.id))
}

/**
 * Sets the role (the caller has checked the permission), moves the user
 * between role system groups, and tells the user which real addresses it
 * now sees or no longer sees.
 */
export async function changeRole(tx: Tx, ctx: TxContext, emit: Emit, target: User, role: number): Promise<void> {
  if (role === target.role) return
  if (await isLastOwner(tx, target)) throw lastOwnerDemotion() // re-checked under the transaction
  const billingAdminsChanged = await watchBillingAdmins(tx, ctx, emit)
  const updated = await tx.user.update({ where: { id: target.id }, data: { role } })
  emit(realmUserUpdateEvent({ user_id: target.id, role }), await usersWhoCanAccess(tx, ctx.realm, target.id))

  const groupRecipients = await activeUserIds(tx, ctx.realm.id)
  const oldGroup = await tx.userGroup.findUnique({ where: { realmId_name: { realmId: ctx.realm.id, name: roleGroupName(target.role) } } })
  const newGroup = await tx.userGroup.findUnique({ where: { realmId_name: { realmId: ctx.realm.id, name: roleGroupName(role) } } })
  if (oldGroup && oldGroup.id !== newGroup?.id) {
    const removed = await tx.userGroupMember.deleteMany({ where: { groupId: oldGroup.id, userId: target.id } })
    if (removed.count > 0) emit(userGroupMembersEvent('remove_members', oldGroup.id, [target.id]), groupRecipients)
  }
  if (newGroup && newGroup.id !== oldGroup?.id) {
    const existing = await tx.userGroupMember.findUnique({ where: { groupId_userId: { groupId: newGroup.id, userId: target.id } } })
    if (!existing) {
      await tx.userGroupMember.create({ data: { groupId: newGroup.id, userId: target.id } })
      emit(userGroupMembersEvent('add_members', newGroup.id, [target.id]), groupRecipients)
    }
  }
  if (!target.isBot && target.isActive) await emitDeliveryEmailChanges(tx, ctx, emit, target, updated)
  await billingAdminsChanged()
}

/** realm_user updates `{user_id, delivery_email}` to `before`/`after` (one user, two roles) for each address whose visibility flipped. */
async function emitDeliveryEmailChanges(tx: Tx, ctx: TxContext, emit: Emit, before: User, after: User): Promise<void> {
  const others = await tx.user.findMany({
    where: { realmId: ctx.realm.id, isActive: true, id: { not: after.id } },
    include: { settings: { select: { emailAddressVisibility: true } } },
    orderBy: { id: 'asc' },
  })
  const accessible = await accessibleUserIds({ prisma: tx, realm: ctx.realm, user: after })
  for (const { settings, ...other } of others) {
    if (accessible && !accessible.has(other.id)) continue
    const presentable = { ...other, emailAddressVisibility: settings?.emailAddressVisibility }
    const saw = canSeeDeliveryEmail(before, presentable)
    const sees = canSeeDeliveryEmail(after, presentable)
    if (saw === sees) continue
    emit(realmUserUpdateEvent({ user_id: other.id, delivery_email: sees ? other.deliveryEmail : null }), [after.id])
  }
}
