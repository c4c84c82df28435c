// Invitations: POST /invites (one email invitation per address), POST
// /invites/multiuse (a reusable link), revoke and resend. Each change sends
// invites_changed to the realm's administrators and the inviter, whose
// clients refetch GET /invites. Mails go out after the commit.
import { checkCanAddMembersToGroups } from './user-groups-access.js'
import { holdsRealmPermission } from '../queries/realm-permissions.js'
import { randomBytes } from 'node:crypto'
import { requireMemberOrAdmin } from '../access/member-or-admin.js'
import type { Invitation, Realm, Tx, User } from '../db/index.js'
import { idsMatchingLower } from '../db/exact-match.js'
import type { ActionContext, Emit } from './context.js'
import { inTransaction } from './context.js'
import { checkStreamsByIds } from '../access/stream.js'
import { groupGrantsOf } from '../access/stream-grants.js'
import { canAddSubscribersTo } from '../domain/stream-access.js'
import { getDefaultStreamIds } from '../queries/streams.js'
import { isValidEmail, standInUserId } from '../access/user.js'
import { fakeEmailDomain } from '../present/realm.js'
import { isAdmin, isOwner, isRole, ROLE } from '../domain/roles.js'
import {
  accountTooNewToInvite,
  badRequest,
  insufficientPermission,
  invalidInviteAs,
  invitationAlreadyRevoked,
  invitationFailed,
  mustBeAdmin,
  mustBeOwner,
  noInviteeEmails,
  noSuchInvitation,
} from '../errors.js'
import { INVITE_STATUS, inviteLinkUrl } from '../queries/invites.js'
import { mailerFor, noreplyAddress } from '../mail/outbox.js'
import { invitesChangedEvent } from '../events/schemas/index.js'

/** Upstream's INVITES_DEFAULT_REALM_DAILY_MAX and INVITES_MIN_USER_AGE_DAYS. */
export const DEFAULT_DAILY_INVITE_LIMIT = 100
const MIN_INVITER_AGE_DAYS = 3
const DAY_MS = 86_400_000
/** A small sample of throwaway-mail domains (upstream ships a long list). */
const DISPOSABLE_DOMAINS = new Set(['mailinator.com', 'guerrillamail.com', 'yopmail.com', '10minutemail.com', 'trashmail.com', 'sharklasers.com', 'tempmail.com'])

export interface InviteOptions {
  /** null: never expires; undefined: the server default. */
  expiresInMinutes: number | null | undefined
  inviteAs: number
  streamIds: number[]
  /** Level 322: groups the new user joins; each must be a group the inviter may add members to. */
  groupIds: number[]
  includeRealmDefaultSubscriptions: boolean
}

export interface InviteUsersInput extends InviteOptions {
  inviteeEmails: string
  notifyReferrerOnJoin: boolean
}

export { invitesChangedEvent }

/** 24 lowercase base32 characters (120 bits), as upstream's confirmation keys. */
export function generateInviteKey(): string {
  const alphabet = 'abcdefghijklmnopqrstuvwxyz234567'
  return Array.from(randomBytes(24), (b) => alphabet[b & 31]).join('')
}

/** invites_changed to every active administrator (bots included) and the inviter. */
export async function emitInvitesChanged(tx: Tx, realmId: number, referrerId: number, emit: Emit): Promise<void> {
  const admins = await tx.user.findMany({ where: { realmId, isActive: true, role: { lte: ROLE.ADMIN } }, select: { id: true } })
  emit(invitesChangedEvent(), [...new Set([...admins.map((a) => a.id), referrerId])].sort((a, b) => a - b))
}

/** Addresses separated by commas or newlines, `Name <addr>` accepted, duplicates dropped. */
export function parseInviteeEmails(raw: string): string[] {
  const out: string[] = []
  for (const part of raw.split(/[,\n]/)) {
    const trimmed = part.trim()
    if (!trimmed) continue
    const angle = /<([^<>]*)>\s*$/.exec(trimmed)
    const email = (angle ? (angle[1] ?? '') : trimmed).trim()
    if (!out.some((e) => e.toLowerCase() === email.toLowerCase())) out.push(email)
  }
  return out
}

function checkInviteAs(user: User, inviteAs: number): void {
  if (!isRole(inviteAs)) throw invalidInviteAs()
  if (inviteAs === ROLE.OWNER && !isOwner(user.role)) throw mustBeOwner()
  if ((inviteAs === ROLE.ADMIN || inviteAs === ROLE.MODERATOR) && !isAdmin(user.role)) throw mustBeAdmin()
}

/** The invite's channels, each one the inviter can see; a non-empty list needs the right to subscribe others. */
/** Upstream's access_user_groups_for_invite: every group one the inviter may add members to. */
async function checkInviteGroups(ctx: ActionContext, groupIds: number[]): Promise<number[]> {
  const ids = [...new Set(groupIds)]
  if (ids.length === 0) return []
  await checkCanAddMembersToGroups(ctx, ctx.prisma, ids)
  return ids
}

/**
 * Each channel must be one the inviter may read and subscribe others to (level 342: the realm's
 * can_add_subscribers_group, or the channel's own, or administering it); default channels always.
 */
async function checkStreams(ctx: ActionContext, streamIds: number[]): Promise<number[]> {
  const ids = [...new Set(streamIds)]
  const accesses = await checkStreamsByIds(ctx.prisma, ctx.user, ids)
  const refused = [...accesses].find(([, access]) => access instanceof Error)
  if (refused) throw badRequest(`Invalid channel ID ${refused[0]}. No invites were sent.`)
  if (ids.length === 0 || (await holdsRealmPermission(ctx.prisma, ctx.realm, ctx.user, 'can_add_subscribers_group', ctx.now()))) return ids
  const defaults = new Set(await getDefaultStreamIds(ctx.prisma, ctx.realm.id))
  const grants = await groupGrantsOf(ctx.prisma, ctx.user)
  for (const [id, access] of accesses) {
    if (defaults.has(id) || access instanceof Error) continue
    if (!canAddSubscribersTo(ctx.user, grants(access.stream), false)) throw badRequest('You do not have permission to subscribe other users to channels.')
  }
  return ids
}

function expiryOf(ctx: ActionContext, minutes: number | null | undefined): Date | null {
  const value = minutes === undefined ? ctx.config.invitationLinkValidityMinutes : minutes
  if (value === null) return null
  if (!Number.isInteger(value) || value <= 0) throw badRequest('Invalid invite_expires_in_minutes')
  return new Date(ctx.now().getTime() + value * 60_000)
}

async function checkDailyLimit(ctx: ActionContext, adding: number): Promise<void> {
  const since = new Date(ctx.now().getTime() - DAY_MS)
  const sent = await ctx.prisma.invitation.count({ where: { realmId: ctx.realm.id, createdAt: { gt: since } } })
  if (sent + adding > (ctx.realm.maxInvitesPerDay ?? DEFAULT_DAILY_INVITE_LIMIT)) {
    throw invitationFailed(
      'To protect users, Roost limits the number of invitations you can send in one day. Because you have reached the limit, no invitations were sent.',
      { errors: [], sent_invitations: false, license_limit_reached: false, daily_limit_reached: true },
    )
  }
}

/** Why an address cannot be invited at all, or null. */
function addressProblem(realm: Realm, email: string, allowedDomains: string[], standInDomain: string): string | null {
  if (!isValidEmail(email)) return 'Invalid address.'
  // The shape of the realm's stand-in addresses (access/user.ts checkNotStandIn).
  if (standInUserId(email, standInDomain) !== undefined) return 'Not allowed in this organization.'
  const [local = '', domain = ''] = email.toLowerCase().split('@')
  if (realm.emailsRestrictedToDomains) {
    if (!allowedDomains.some((d) => domain === d || domain.endsWith(`.${d}`))) return 'Outside your domain.'
    if (local.includes('+')) return 'Email addresses containing + are not allowed.'
  }
  if (realm.disallowDisposableEmailAddresses && DISPOSABLE_DOMAINS.has(domain)) return 'Please use your real email address.'
  return null
}

export async function inviteUsers(ctx: ActionContext, input: InviteUsersInput): Promise<void> {
  requireMemberOrAdmin(ctx)
  if (!(await holdsRealmPermission(ctx.prisma, ctx.realm, ctx.user, 'can_invite_users_group', ctx.now()))) throw insufficientPermission()
  if (input.inviteeEmails.trim() === '') throw noInviteeEmails()
  checkInviteAs(ctx.user, input.inviteAs)
  const expiresAt = expiryOf(ctx, input.expiresInMinutes)
  const streamIds = await checkStreams(ctx, input.streamIds)
  const groupIds = await checkInviteGroups(ctx, input.groupIds)
  const emails = parseInviteeEmails(input.inviteeEmails)
  if (emails.length === 0) throw noInviteeEmails()
  if (!ctx.realm.inviteRequired && !isAdmin(ctx.user.role) && ctx.now().getTime() - ctx.user.dateJoined.getTime() < MIN_INVITER_AGE_DAYS * DAY_MS) {
    throw accountTooNewToInvite()
  }

  const allowedDomains = (await ctx.prisma.realmDomain.findMany({ where: { realmId: ctx.realm.id } })).map((d) => d.domain.toLowerCase())
  const invalid: [string, string, boolean][] = []
  const existing: [string, string, boolean][] = []
  const toInvite: string[] = []
  const accounts = await ctx.prisma.user.findMany({
    where: { id: { in: (await idsMatchingLower(ctx.prisma, 'user_delivery_email', { realm_id: ctx.realm.id }, emails)).map((r) => r.id) } },
    select: { deliveryEmail: true, isActive: true, isSystemBot: true },
  })
  for (const email of emails) {
    const problem = addressProblem(ctx.realm, email, allowedDomains, fakeEmailDomain(ctx.realm, ctx.config.externalUrl))
    if (problem) {
      invalid.push([email, problem, false])
      continue
    }
    const account = accounts.find((a) => a.deliveryEmail.toLowerCase() === email.toLowerCase())
    if (account?.isSystemBot) existing.push([email, 'Reserved for system bots.', false])
    else if (account && !account.isActive) existing.push([email, 'Account has been deactivated.', true])
    else if (account) existing.push([email, 'Already has an account.', false])
    else toInvite.push(email)
  }
  const failure = { license_limit_reached: false, daily_limit_reached: false }
  if (invalid.length > 0) {
    throw invitationFailed("Some emails did not validate, so we didn't send any invitations.", { ...failure, errors: [...invalid, ...existing], sent_invitations: false })
  }
  if (toInvite.length === 0) {
    throw invitationFailed("We weren't able to invite anyone.", { ...failure, errors: existing, sent_invitations: false })
  }
  await checkDailyLimit(ctx, toInvite.length)

  const created = await inTransaction(ctx, async (tx, emit) => {
    // One INSERT; its rows take increasing IDs in the order of the addresses.
    const rows: Invitation[] = await tx.invitation.createManyAndReturn({
      data: toInvite.map((email) => ({
        realmId: ctx.realm.id,
        email,
        invitedById: ctx.user.id,
        inviteAs: input.inviteAs,
        streamIds,
        groupIds,
        includeRealmDefaultSubscriptions: input.includeRealmDefaultSubscriptions,
        notifyReferrerOnJoin: input.notifyReferrerOnJoin,
        key: generateInviteKey(),
        createdAt: ctx.now(),
        expiresAt,
      })),
    })
    rows.sort((a, b) => a.id - b.id)
    await emitInvitesChanged(tx, ctx.realm.id, ctx.user.id, emit)
    return rows
  })
  for (const row of created) await sendInvitationMail(ctx, row)
  if (existing.length > 0) {
    throw invitationFailed(
      "Some of those addresses are already using Roost, so we didn't send them an invitation. We did send invitations to everyone else!",
      { ...failure, errors: existing, sent_invitations: true },
    )
  }
}

export async function sendInvitationMail(ctx: ActionContext, row: Invitation): Promise<void> {
  const link = inviteLinkUrl(ctx.realm, ctx.config.externalUrl, row.key)
  const expiry = row.expiresAt ? `This invitation expires on ${row.expiresAt.toUTCString()}.` : 'This invitation does not expire.'
  const text = [
    'Hi,',
    '',
    `${ctx.user.fullName} (${ctx.user.deliveryEmail}) has invited you to join ${ctx.realm.name}, an organization on Roost.`,
    '',
    'To create your account, open this link:',
    link,
    '',
    expiry,
  ].join('\n')
  try {
    await mailerFor(ctx.config).send(
      { from: noreplyAddress(ctx.config.externalUrl), to: row.email, subject: `${ctx.user.fullName} invited you to join ${ctx.realm.name}`, text },
      ctx.now(),
    )
  } catch (error) {
    ctx.log.error({ err: error, invitation_id: row.id }, 'invitation mail not sent')
  }
}

export async function createMultiuseInvite(ctx: ActionContext, input: InviteOptions): Promise<string> {
  requireMemberOrAdmin(ctx)
  if (!(await holdsRealmPermission(ctx.prisma, ctx.realm, ctx.user, 'create_multiuse_invite_group', ctx.now()))) throw insufficientPermission()
  checkInviteAs(ctx.user, input.inviteAs)
  const expiresAt = expiryOf(ctx, input.expiresInMinutes)
  const streamIds = await checkStreams(ctx, input.streamIds)
  const groupIds = await checkInviteGroups(ctx, input.groupIds)
  const row = await inTransaction(ctx, async (tx, emit) => {
    const created = await tx.multiuseInvite.create({
      data: {
        realmId: ctx.realm.id,
        referredById: ctx.user.id,
        inviteAs: input.inviteAs,
        streamIds,
        groupIds,
        includeRealmDefaultSubscriptions: input.includeRealmDefaultSubscriptions,
        key: generateInviteKey(),
        createdAt: ctx.now(),
        expiresAt,
      },
    })
    await emitInvitesChanged(tx, ctx.realm.id, ctx.user.id, emit)
    return created
  })
  return inviteLinkUrl(ctx.realm, ctx.config.externalUrl, row.key)
}

/** Someone else's invitation needs an administrator, and an owner for an owner's invitation. */
function checkMayManage(ctx: ActionContext, inviterId: number, inviteAs: number): void {
  if (inviterId === ctx.user.id) return
  if (!isAdmin(ctx.user.role)) throw mustBeAdmin()
  if (inviteAs === ROLE.OWNER && !isOwner(ctx.user.role)) throw mustBeOwner()
}

async function pendingInvitation(ctx: ActionContext, id: number): Promise<Invitation> {
  const row = await ctx.prisma.invitation.findFirst({ where: { id, realmId: ctx.realm.id, status: INVITE_STATUS.PENDING } })
  if (!row) throw noSuchInvitation()
  checkMayManage(ctx, row.invitedById, row.inviteAs)
  return row
}

export async function revokeInvitation(ctx: ActionContext, id: number): Promise<void> {
  requireMemberOrAdmin(ctx)
  const row = await pendingInvitation(ctx, id)
  await inTransaction(ctx, async (tx, emit) => {
    const { count } = await tx.invitation.updateMany({ where: { id, status: INVITE_STATUS.PENDING }, data: { status: INVITE_STATUS.REVOKED } })
    if (count === 0) throw noSuchInvitation()
    await emitInvitesChanged(tx, ctx.realm.id, row.invitedById, emit)
  })
}

export async function revokeMultiuseInvite(ctx: ActionContext, id: number): Promise<void> {
  requireMemberOrAdmin(ctx)
  const row = await ctx.prisma.multiuseInvite.findFirst({ where: { id, realmId: ctx.realm.id } })
  if (!row) throw noSuchInvitation()
  checkMayManage(ctx, row.referredById, row.inviteAs)
  await inTransaction(ctx, async (tx, emit) => {
    const { count } = await tx.multiuseInvite.updateMany({ where: { id, status: INVITE_STATUS.PENDING }, data: { status: INVITE_STATUS.REVOKED } })
    if (count === 0) throw invitationAlreadyRevoked()
    await emitInvitesChanged(tx, ctx.realm.id, row.referredById, emit)
  })
}

export async function resendInvitation(ctx: ActionContext, id: number): Promise<void> {
  requireMemberOrAdmin(ctx)
  const row = await pendingInvitation(ctx, id)
  await checkDailyLimit(ctx, 1)
  const updated = await inTransaction(ctx, async (tx, emit) => {
    const fresh = await tx.invitation.update({ where: { id: row.id }, data: { createdAt: ctx.now() } })
    await emitInvitesChanged(tx, ctx.realm.id, row.invitedById, emit)
    return fresh
  })
  const inviter = row.invitedById === ctx.user.id ? ctx.user : await ctx.prisma.user.findUniqueOrThrow({ where: { id: row.invitedById } })
  await sendInvitationMail({ ...ctx, user: inviter }, updated)
}
