// GET /invites: pending, unexpired invitations — all of the realm's for
// administrators, the user's own otherwise — and the lookup of a link's key
// for the registration pages. Email invitations and reusable links are
// separate id spaces, told apart by is_multiuse.
import type { Invitation, MultiuseInvite, PrismaClient, Realm, Tx, User } from '../db/index.js'
import { isAdmin } from '../domain/roles.js'
import { realmUrl } from '../present/realm.js'

/** Invitation.status / MultiuseInvite.status values. */
export const INVITE_STATUS = { PENDING: 0, USED: 1, REVOKED: 2 } as const

export const joinPath = (key: string): string => `/join/${key}`
export const inviteLinkUrl = (realm: Pick<Realm, 'stringId'>, externalUrl: string, key: string): string =>
  `${realmUrl(realm, externalUrl)}${joinPath(key)}`

const seconds = (d: Date): number => Math.floor(d.getTime() / 1000)

export function presentInvitation(row: Invitation): Record<string, unknown> {
  return {
    id: row.id,
    email: row.email,
    invited_by_user_id: row.invitedById,
    invited: seconds(row.createdAt),
    expiry_date: row.expiresAt ? seconds(row.expiresAt) : null,
    invited_as: row.inviteAs,
    is_multiuse: false,
    notify_referrer_on_join: row.notifyReferrerOnJoin,
  }
}

export function presentMultiuseInvite(row: MultiuseInvite, realm: Realm, externalUrl: string): Record<string, unknown> {
  return {
    id: row.id,
    invited_by_user_id: row.referredById,
    invited: seconds(row.createdAt),
    expiry_date: row.expiresAt ? seconds(row.expiresAt) : null,
    link_url: inviteLinkUrl(realm, externalUrl, row.key),
    invited_as: row.inviteAs,
    is_multiuse: true,
  }
}

export async function getInvites(
  ctx: { prisma: PrismaClient | Tx; realm: Realm; user: User; now: () => Date; config: { externalUrl: string } },
): Promise<Record<string, unknown>[]> {
  const now = ctx.now()
  const unexpired = { OR: [{ expiresAt: null }, { expiresAt: { gt: now } }] }
  const own = isAdmin(ctx.user.role) ? {} : { invitedById: ctx.user.id }
  const emails = await ctx.prisma.invitation.findMany({
    where: { realmId: ctx.realm.id, status: INVITE_STATUS.PENDING, ...unexpired, ...own },
    orderBy: { id: 'asc' },
  })
  const links = await ctx.prisma.multiuseInvite.findMany({
    where: { realmId: ctx.realm.id, status: INVITE_STATUS.PENDING, ...unexpired, ...(isAdmin(ctx.user.role) ? {} : { referredById: ctx.user.id }) },
    orderBy: { id: 'asc' },
  })
  return [...emails.map(presentInvitation), ...links.map((l) => presentMultiuseInvite(l, ctx.realm, ctx.config.externalUrl))]
}

export type InviteLookup =
  | { state: 'valid'; kind: 'email'; invitation: Invitation }
  | { state: 'valid'; kind: 'multiuse'; invite: MultiuseInvite }
  | { state: 'invalid' | 'expired' | 'revoked' | 'used' }

/** What a /join/{key} link stands for in this realm. */
export async function lookUpInviteKey(db: PrismaClient | Tx, realmId: number, key: string, now: Date): Promise<InviteLookup> {
  if (!/^[a-z0-9]{1,64}$/.test(key)) return { state: 'invalid' }
  const expired = (at: Date | null) => at !== null && at.getTime() <= now.getTime()
  const invitation = await db.invitation.findUnique({ where: { key } })
  if (invitation && invitation.realmId === realmId) {
    if (invitation.status === INVITE_STATUS.USED) return { state: 'used' }
    if (invitation.status === INVITE_STATUS.REVOKED) return { state: 'revoked' }
    if (expired(invitation.expiresAt)) return { state: 'expired' }
    return { state: 'valid', kind: 'email', invitation }
  }
  const invite = await db.multiuseInvite.findUnique({ where: { key } })
  if (invite && invite.realmId === realmId) {
    if (invite.status === INVITE_STATUS.REVOKED) return { state: 'revoked' }
    if (expired(invite.expiresAt)) return { state: 'expired' }
    return { state: 'valid', kind: 'multiuse', invite }
  }
  return { state: 'invalid' }
}
