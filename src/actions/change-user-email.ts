// Changing a user's email address (upstream's do_change_user_delivery_email):
// the real address mail goes to, and the API email too while it is the real
// one (not a dummy address hidden by the email visibility setting). Those
// who may see the real address get `realm_user` update `{user_id,
// delivery_email}`; when the API email changed, everyone who can see the
// user gets `{user_id, new_email}`, and with a Gravatar (which follows the
// address) the new avatar fields, as upstream. Used by the confirmation link of a
// user's own change (update-settings.ts) and by an administrator
// (`roost user change-email`: upstream's change_user_email command).
import type { Realm, Tx, User } from '../db/index.js'
import { idsMatchingLower } from '../db/exact-match.js'
import type { ActionContext, Emission } from './context.js'
import { inTransaction } from './context.js'
import { checkNotStandIn, isValidEmail } from '../access/user.js'
import { fakeEmailDomain } from '../present/realm.js'
import { isAdmin } from '../domain/roles.js'
import { emailInUse, invalidEmailAddress, mustBeAdmin, noSuchUser } from '../errors.js'
import { usersWhoCanAccess } from '../presence/audience.js'
import { canSeeDeliveryEmail } from '../present/user.js'
import { realmUserUpdateEvent } from '../events/schemas/index.js'
import { avatarPerson } from './avatar.js'

/**
 * Inside a transaction: refuses an address another account of the
 * organization has (exactly, case-insensitively; never as a pattern), writes
 * the new address and returns the updated row and the events to publish.
 */
export async function writeDeliveryEmail(tx: Tx, realm: Realm, user: User, newEmail: string): Promise<{ row: User; emissions: Emission[] }> {
  const taken = (await idsMatchingLower(tx, 'user_delivery_email', { realm_id: realm.id }, [newEmail])).some((r) => r.id !== user.id)
  if (taken) throw emailInUse(newEmail)
  const apiEmailIsReal = user.email.toLowerCase() === user.deliveryEmail.toLowerCase()
  const updated = await tx.user.update({
    where: { id: user.id },
    data: { deliveryEmail: newEmail, ...(apiEmailIsReal ? { email: newEmail } : {}) },
    include: { settings: { select: { emailAddressVisibility: true } } },
  })
  const audience = await usersWhoCanAccess(tx, realm, user.id)
  const viewers = await tx.user.findMany({ where: { id: { in: audience } }, select: { id: true, role: true } })
  const presentable = { ...updated, emailAddressVisibility: updated.settings?.emailAddressVisibility }
  const seeing = viewers.filter((v) => canSeeDeliveryEmail(v, presentable)).map((v) => v.id)
  const emissions: Emission[] = [{ event: realmUserUpdateEvent({ user_id: user.id, delivery_email: newEmail }), userIds: seeing }]
  // A Gravatar follows the address: its URL changed.
  if (updated.avatarSource === 'G') emissions.push({ event: realmUserUpdateEvent(avatarPerson(updated)), userIds: audience })
  if (apiEmailIsReal) emissions.push({ event: realmUserUpdateEvent({ user_id: user.id, new_email: newEmail }), userIds: audience })
  const { settings: _settings, ...row } = updated
  return { row, emissions }
}

/** An administrator changes another account's address, without a confirmation mail; returns the updated user. */
export async function changeUserDeliveryEmail(ctx: ActionContext, userId: number, email: string): Promise<User> {
  if (!isAdmin(ctx.user.role)) throw mustBeAdmin()
  const newEmail = email.trim()
  if (!isValidEmail(newEmail)) throw invalidEmailAddress()
  checkNotStandIn(newEmail, fakeEmailDomain(ctx.realm, ctx.config.externalUrl))
  return inTransaction(ctx, async (tx, emit) => {
    const user = await tx.user.findUnique({ where: { id: userId } })
    if (!user || user.realmId !== ctx.realm.id) throw noSuchUser()
    if (user.deliveryEmail === newEmail) return user
    const { row, emissions } = await writeDeliveryEmail(tx, ctx.realm, user, newEmail)
    for (const { event, userIds, ...extra } of emissions) emit(event, userIds, extra)
    return row
  })
}
