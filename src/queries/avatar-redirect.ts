// GET /avatar/{user_id or email}[/medium] (upstream zerver/views/users.py
// avatar): where a user's avatar is, for clients that were not sent
// avatar_url (user_avatar_url_field_optional) or only know an email. An
// unknown user gets the external avatar of the given string, as upstream
// treats it as a new address; a user the viewer may not access gets the
// unknown-user image.
import type { PrismaClient, Realm, User } from '../db/index.js'
import { accessibleUserIds, accessUserByEmail } from '../access/user.js'
import { avatarUrl, gravatarUrl, INACCESSIBLE_USER_AVATAR_URL } from '../present/user.js'
import { avatarUrlMedium } from '../present/user.js'
import { ApiError } from '../errors.js'

export interface AvatarLookupContext {
  prisma: PrismaClient
  realm: Realm
  /** undefined for a web-public visitor. */
  user: User | undefined
  config: { externalUrl: string }
}

const MAX_EMAIL_OR_ID_LENGTH = 254

export async function avatarRedirectUrl(ctx: AvatarLookupContext, emailOrId: string, medium: boolean): Promise<string> {
  const unknown = (): string => {
    const url = gravatarUrl(emailOrId.slice(0, MAX_EMAIL_OR_ID_LENGTH), 1)
    return medium ? url.replace('?d=identicon&', '?d=identicon&s=500&') : url
  }
  let target: User | null
  if (/^\d{1,9}$/.test(emailOrId)) {
    target = await ctx.prisma.user.findFirst({ where: { id: Number(emailOrId), realmId: ctx.realm.id } })
  } else if (ctx.user && emailOrId.length <= MAX_EMAIL_OR_ID_LENGTH) {
    target = await accessUserByEmail({ prisma: ctx.prisma, realm: ctx.realm, user: ctx.user, config: ctx.config }, emailOrId).catch((error: unknown) => {
      if (error instanceof ApiError) return null
      throw error
    })
  } else {
    target = emailOrId.length <= MAX_EMAIL_OR_ID_LENGTH ? await ctx.prisma.user.findFirst({ where: { realmId: ctx.realm.id, email: emailOrId } }) : null
  }
  if (!target) return unknown()
  if (ctx.user) {
    const accessible = await accessibleUserIds({ prisma: ctx.prisma, realm: ctx.realm, user: ctx.user })
    if (accessible && !accessible.has(target.id)) return INACCESSIBLE_USER_AVATAR_URL
  }
  return medium ? avatarUrlMedium(target) : avatarUrl(target)
}
