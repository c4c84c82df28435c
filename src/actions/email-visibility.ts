// A user's email_address_visibility changed (PATCH /settings): who may see
// the real address, and the address the API knows the user by, follow it
// (upstream do_change_user_setting: send_delivery_email_update_events, then,
// when "everyone" is the old or the new value, get_display_email_address and
// send_user_email_update_event and notify_avatar_url_change).
import type { Realm, Tx, User } from '../db/index.js'
import type { Emit } from './context.js'
import type { Config } from '../config.js'
import { usersWhoCanAccess } from '../presence/audience.js'
import { apiEmailFor, canSeeDeliveryEmail } from '../present/user.js'
import { fakeEmailDomain } from '../present/realm.js'
import { realmUserUpdateEvent } from '../events/schemas/index.js'
import { avatarPerson } from './avatar.js'
import { idsMatchingLower } from '../db/exact-match.js'
import { emailInUse } from '../errors.js'

export interface EmailVisibilityChange {
  user: User
  before: number
  after: number
}

/**
 * Tells those who can access the user whose view of the real address flipped
 * (`delivery_email`: the address, or null), rewrites the API email when it
 * moves between the real address and the stand-in, and tells everyone who
 * can access the user (`new_email`). Returns the user's API email after the
 * change.
 */
export async function applyEmailVisibilityChange(
  tx: Tx,
  ctx: { realm: Realm; config: Pick<Config, 'externalUrl'> },
  emit: Emit,
  change: EmailVisibilityChange,
): Promise<string> {
  const { user, before, after } = change
  if (before === after || user.isBot) return user.email
  const audience = await usersWhoCanAccess(tx, ctx.realm, user.id)
  const viewers = await tx.user.findMany({ where: { id: { in: audience } }, select: { id: true, role: true }, orderBy: { id: 'asc' } })
  const nowSeeing: number[] = []
  const noLongerSeeing: number[] = []
  for (const viewer of viewers) {
    const saw = canSeeDeliveryEmail(viewer, { ...user, emailAddressVisibility: before })
    const sees = canSeeDeliveryEmail(viewer, { ...user, emailAddressVisibility: after })
    if (saw !== sees) (sees ? nowSeeing : noLongerSeeing).push(viewer.id)
  }
  if (nowSeeing.length > 0) emit(realmUserUpdateEvent({ user_id: user.id, delivery_email: user.deliveryEmail }), nowSeeing)
  if (noLongerSeeing.length > 0) emit(realmUserUpdateEvent({ user_id: user.id, delivery_email: null }), noLongerSeeing)

  const apiEmail = apiEmailFor(user, after, fakeEmailDomain(ctx.realm, ctx.config.externalUrl))
  if (apiEmail === user.email) return apiEmail
  // Another account whose real address has the stand-in's shape (refused since
  // checkNotStandIn, but older rows may have one) would collide with it.
  const holders = await idsMatchingLower(tx, 'user_email', { realm_id: ctx.realm.id }, [apiEmail])
  if (holders.some((r) => r.id !== user.id)) throw emailInUse(apiEmail)
  await tx.user.update({ where: { id: user.id }, data: { email: apiEmail } })
  emit(realmUserUpdateEvent({ user_id: user.id, new_email: apiEmail }), audience)
  // Clients computing gravatar URLs (client_gravatar) hash the API email: they get the URL again, as upstream's notify_avatar_url_change.
  emit(realmUserUpdateEvent(avatarPerson(user)), audience)
  return apiEmail
}
