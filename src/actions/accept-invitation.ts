// Accepting an invitation (the /join/{key} registration page): creates the
// account with the invited role and channels (and the realm's default
// channels when the invitation says so), marks an email invitation used (and
// any other pending invitation of the same address revoked), then tells the
// referrer through the notification bot when asked.
import type { FastifyBaseLogger } from 'fastify'
import type { Realm, Tx, User } from '../db/index.js'
import { idsMatchingLower } from '../db/exact-match.js'
import type { Emit, Services } from './context.js'
import { inTransaction } from './context.js'
import { isUniqueViolation } from '../db/errors.js'
import { fakeEmailDomain } from '../present/realm.js'
import { insertUser } from './user-rows.js'
import { emitSubscriptions, emitUserAdded } from './create-user.js'
import { checkFullName } from '../domain/user-rules.js'
import { PASSWORD_MIN_LENGTH } from '../domain/credentials.js'
import { emitInvitesChanged } from './invites.js'
import { sendMessage } from './send-message.js'
import { isValidEmail, standInUserId } from '../access/user.js'
import { ApiError, emailNotAllowed } from '../errors.js'
import { userGroupMembersEvent } from '../events/schemas/index.js'
import { activeUserIds } from '../queries/user-groups.js'
import { INVITE_STATUS, lookUpInviteKey, type InviteLookup } from '../queries/invites.js'
import { watchBillingAdmins } from './billing-admin-events.js'

export interface AcceptInvitationInput {
  key: string
  fullName: string
  password: string
  /** Reusable links only: the address of the new account. */
  email?: string
}

/** Why the link or the form cannot be used; `field` names the form field at fault, if any. */
export class RegistrationError extends Error {
  constructor(
    message: string,
    readonly state: InviteLookup['state'] | 'form',
  ) {
    super(message)
  }
}

export type AcceptContext = Services & { realm: Realm; log: FastifyBaseLogger }

const STATE_MESSAGES: Record<Exclude<InviteLookup['state'], 'valid'>, string> = {
  invalid: 'This invitation link is not valid. Check that you copied the whole link, or ask for a new invitation.',
  expired: 'This invitation has expired. Ask the person who invited you for a new invitation.',
  revoked: 'This invitation has been revoked. Ask an administrator of the organization for a new invitation.',
  used: 'This invitation has already been used. If you created an account with it, log in instead.',
}

export const registrationStateMessage = (state: Exclude<InviteLookup['state'], 'valid'>): string => STATE_MESSAGES[state]

async function validLink(ctx: AcceptContext, key: string): Promise<Extract<InviteLookup, { state: 'valid' }>> {
  const found = await lookUpInviteKey(ctx.prisma, ctx.realm.id, key, ctx.now())
  if (found.state !== 'valid') throw new RegistrationError(STATE_MESSAGES[found.state], found.state)
  return found
}

function formError(error: unknown): never {
  if (error instanceof ApiError) throw new RegistrationError(error.msg, 'form')
  throw error
}

export async function acceptInvitation(ctx: AcceptContext, input: AcceptInvitationInput): Promise<User> {
  const link = await validLink(ctx, input.key)
  let fullName: string
  try {
    fullName = checkFullName(input.fullName)
  } catch (error) {
    formError(error)
  }
  if (input.password.length < PASSWORD_MIN_LENGTH) throw new RegistrationError(`The password must be at least ${PASSWORD_MIN_LENGTH} characters long.`, 'form')
  const email = link.kind === 'email' ? link.invitation.email : (input.email ?? '').trim()
  if (!isValidEmail(email)) throw new RegistrationError('Enter a valid email address.', 'form')
  if (standInUserId(email, fakeEmailDomain(ctx.realm, ctx.config.externalUrl)) !== undefined) throw new RegistrationError(emailNotAllowed(email).msg, 'form')
  const invite = link.kind === 'email' ? link.invitation : link.invite
  const referrerId = link.kind === 'email' ? link.invitation.invitedById : link.invite.referredById

  const user = await inTransaction(ctx, async (tx, emit) => {
    if (link.kind === 'email') {
      // Claims the invitation: a second submission of the same link finds it used.
      const { count } = await tx.invitation.updateMany({ where: { id: link.invitation.id, status: INVITE_STATUS.PENDING }, data: { status: INVITE_STATUS.USED } })
      if (count === 0) throw new RegistrationError(STATE_MESSAGES.used, 'used')
    }
    const taken = (await idsMatchingLower(tx, 'user_delivery_email', { realm_id: ctx.realm.id }, [email])).length > 0
    if (taken) throw new RegistrationError(`An account for ${email} already exists in this organization. Log in instead.`, 'form')
    const live = await tx.stream.findMany({ where: { id: { in: invite.streamIds }, realmId: ctx.realm.id, deactivated: false }, select: { id: true } })
    const defaults = invite.includeRealmDefaultSubscriptions ? (await tx.defaultStream.findMany({ where: { realmId: ctx.realm.id } })).map((d) => d.streamId) : []
    const { user: created, subscribedStreamIds } = await insertUser(tx, ctx.realm, {
      email,
      fullName,
      password: input.password,
      role: invite.inviteAs,
      streamIds: [...new Set([...live.map((s) => s.id), ...defaults])],
      dateJoined: ctx.now(),
      emailDomain: fakeEmailDomain(ctx.realm, ctx.config.externalUrl),
    })
    await tx.invitation.updateMany({
      where: { status: INVITE_STATUS.PENDING, id: { in: (await idsMatchingLower(tx, 'invitation_email', { realm_id: ctx.realm.id }, [email])).map((r) => r.id) } },
      data: { status: INVITE_STATUS.REVOKED },
    })
    await emitUserAdded(tx, ctx, created, emit)
    await emitSubscriptions(tx, created, subscribedStreamIds, emit)
    // The add event showed the user before the invitation's groups, which can make it a billing admin.
    const billingAdminsChanged = invite.groupIds.length > 0 ? await watchBillingAdmins(tx, ctx, emit) : null
    await joinInvitedGroups(tx, ctx.realm.id, created.id, invite.groupIds, emit)
    await billingAdminsChanged?.()
    if (link.kind === 'email') await emitInvitesChanged(tx, ctx.realm.id, referrerId, emit)
    return created
  }).catch((error: unknown) => {
    if (isUniqueViolation(error)) throw new RegistrationError(`An account for ${email} already exists in this organization. Log in instead.`, 'form')
    throw error
  })

  if (link.kind === 'email' && link.invitation.notifyReferrerOnJoin) await notifyReferrer(ctx, referrerId, user)
  return user
}

/** Level 322: the invitation's groups that are still active, each told as user_group add_members. */
async function joinInvitedGroups(tx: Tx, realmId: number, userId: number, groupIds: number[], emit: Emit): Promise<void> {
  if (groupIds.length === 0) return
  const groups = await tx.userGroup.findMany({ where: { id: { in: groupIds }, realmId, deactivated: false, isAnonymous: false, isSystemGroup: false }, orderBy: { id: 'asc' } })
  if (groups.length === 0) return
  await tx.userGroupMember.createMany({ data: groups.map((g) => ({ groupId: g.id, userId })), skipDuplicates: true })
  const recipients = await activeUserIds(tx, realmId)
  for (const group of groups) emit(userGroupMembersEvent('add_members', group.id, [userId]), recipients)
}

async function notifyReferrer(ctx: AcceptContext, referrerId: number, user: User): Promise<void> {
  const botId = ctx.realm.notificationBotId
  if (botId === null) return
  const [bot, referrer] = await Promise.all([ctx.prisma.user.findUnique({ where: { id: botId } }), ctx.prisma.user.findUnique({ where: { id: referrerId } })])
  if (!bot || !referrer?.isActive) return
  try {
    await sendMessage(
      { ...ctx, user: bot, clientName: 'Internal' },
      { type: 'private', to: JSON.stringify([referrerId]), content: `@_**${user.fullName}|${user.id}** accepted your invitation to join Roost!` },
    )
  } catch (error) {
    ctx.log.error({ err: error, user_id: user.id }, 'referrer notification not sent')
  }
}
