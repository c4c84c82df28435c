// realm_user add/remove to restricted guests whose access to other users a
// subscription change altered (upstream §3 "realm_user", the events of
// send_user_creation_events_on_adding_subscriptions and
// send_user_remove_events_on_removing_subscriptions). A guest who starts
// sharing a channel with someone it could not access gets the full person; a
// guest who stops sharing the last channel with someone, and has no other
// reason to access them (domain/guest-access.ts), gets the "Unknown user"
// remove. Only active users are reported, as upstream.
//
// Called after the change, inside the transaction, with what the caller has
// already read: without an active guest among the changed users or the
// changed channels' subscribers this costs nothing; otherwise the realm's
// restriction is checked (one lookup) before any further query.
import type { Realm, Tx } from '../db/index.js'
import type { Emit } from './context.js'
import { guestsAreRestricted } from '../access/user.js'
import { accessDelta, channelPeersAround, type ChannelSnapshot, type SubscriptionChange } from '../domain/guest-access.js'
import { ROLE, isGuest } from '../domain/roles.js'
import { getBillingAdminIds } from '../queries/billing-admins.js'
import { INACCESSIBLE_USER_NAME, presentUser, type PresentableUser } from '../present/user.js'
import { profileDataFor } from '../queries/users.js'
import type { RealmUserInfo } from './subscription-events.js'
import { realmUserAddEvent, realmUserRemoveEvent } from '../events/schemas/index.js'

export interface GuestAccessArgs {
  realm: Realm
  change: SubscriptionChange
  /** The realm's active users. */
  realmUsers: RealmUserInfo[]
  /** Active subscribers after the change, of at least every changed channel. */
  subscribersAfter: Map<number, number[]>
}

export async function emitGuestAccessChanges(tx: Tx, emit: Emit, args: GuestAccessArgs): Promise<void> {
  const { realm, change, realmUsers, subscribersAfter } = args
  const guestIds = new Set(realmUsers.filter((u) => isGuest(u.role)).map((u) => u.id))
  if (guestIds.size === 0) return
  const watched = new Set<number>()
  for (const [userId, streamIds] of change.streamsByUser) {
    if (guestIds.has(userId)) watched.add(userId)
    for (const streamId of streamIds) for (const id of subscribersAfter.get(streamId) ?? []) if (guestIds.has(id)) watched.add(id)
  }
  if (watched.size === 0 || !(await guestsAreRestricted(tx, realm))) return

  const around = channelPeersAround(change, await snapshot(tx, [...watched], change, subscribersAfter))
  const candidates = new Set<number>()
  for (const { before, after } of around.values()) {
    for (const id of after) if (!before.has(id)) candidates.add(id)
    for (const id of before) if (!after.has(id)) candidates.add(id)
  }
  if (candidates.size === 0) return

  // Only the candidates matter from here on: their rows (bots stay accessible)
  // and the direct messages between them and the watched guests.
  const rows = await tx.user.findMany({
    where: { id: { in: [...candidates] } },
    include: { settings: { select: { emailAddressVisibility: true } } },
  })
  const botIds = rows.filter((r) => r.isBot).map((r) => r.id)
  const billingAdmins = await getBillingAdminIds(tx, realm.id, rows.filter((r) => r.isActive).map((r) => r.id))
  const active = new Map(
    rows.filter((r) => r.isActive).map(({ settings, ...user }) => [user.id, { ...user, emailAddressVisibility: settings?.emailAddressVisibility, isBillingAdmin: billingAdmins.has(user.id) }]),
  )
  const dms = await tx.message.findMany({
    where: { realmId: realm.id, AND: [{ dmUserIds: { hasSome: [...watched] } }, { dmUserIds: { hasSome: [...candidates] } }] },
    select: { dmUserIds: true },
  })

  const gainedBy = new Map<number, number[]>()
  const lostBy = new Map<number, number[]>()
  for (const [guestId, { before, after }] of around) {
    const dmPartners = dms.filter((m) => m.dmUserIds.includes(guestId)).flatMap((m) => m.dmUserIds)
    const { gained, lost } = accessDelta(guestId, { channelPeers: before, dmPartners, botIds }, { channelPeers: after, dmPartners, botIds })
    for (const id of gained) if (active.has(id)) addTo(gainedBy, id, guestId)
    for (const id of lost) if (active.has(id)) addTo(lostBy, id, guestId)
  }
  await emitAdds(tx, emit, realm, gainedBy, active)
  for (const [userId, guests] of lostBy) {
    emit(realmUserRemoveEvent(userId, INACCESSIBLE_USER_NAME), guests.sort((a, b) => a - b))
  }
}

function addTo(lists: Map<number, number[]>, key: number, value: number): void {
  const list = lists.get(key)
  if (list) list.push(value)
  else lists.set(key, [value])
}

/** The watched guests' channels and the subscribers of those and of the changed channels, all after the change. */
async function snapshot(tx: Tx, guestIds: number[], change: SubscriptionChange, known: Map<number, number[]>): Promise<ChannelSnapshot> {
  const guestStreams = new Map<number, number[]>(guestIds.map((id) => [id, []]))
  const subs = await tx.subscription.findMany({ where: { userId: { in: guestIds }, active: true }, select: { userId: true, streamId: true } })
  for (const s of subs) guestStreams.get(s.userId)?.push(s.streamId)
  const subscribers = new Map<number, number[]>()
  const changed = new Set([...change.streamsByUser.values()].flat())
  for (const id of changed) subscribers.set(id, known.get(id) ?? [])
  const missing = [...new Set(subs.map((s) => s.streamId))].filter((id) => !subscribers.has(id))
  if (missing.length > 0) {
    const rows = await tx.subscription.findMany({
      where: { streamId: { in: missing }, active: true, user: { isActive: true } },
      select: { streamId: true, userId: true },
    })
    for (const id of missing) subscribers.set(id, [])
    for (const r of rows) subscribers.get(r.streamId)?.push(r.userId)
  }
  return { guestStreams, subscribers }
}

/**
 * realm_user add with the person as the guests' user lists now show it. Every
 * recipient is a guest other than the user, so one payload (delivery_email as
 * guests may see it) serves them all.
 */
async function emitAdds(tx: Tx, emit: Emit, realm: Realm, gainedBy: Map<number, number[]>, users: Map<number, PresentableUser>): Promise<void> {
  if (gainedBy.size === 0) return
  const profiles = await profileDataFor(tx, [...gainedBy.keys()])
  for (const [userId, guests] of gainedBy) {
    guests.sort((a, b) => a - b)
    const viewer = { id: guests[0] as number, role: ROLE.GUEST }
    const person = presentUser(users.get(userId) as PresentableUser, viewer, {
      clientExtavatar: false,
      includeCustomProfileFields: true,
      profileData: profiles.get(userId),
      realm,
    })
    emit(realmUserAddEvent(person), guests)
  }
}
