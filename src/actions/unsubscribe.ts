// DELETE /users/me/subscriptions: unsubscribe the requester, bots it owns, or
// (with permission) other users. One transaction; events after commit.
import type { Stream, User } from '../db/index.js'
import type { ActionContext } from './context.js'
import { inTransaction } from './context.js'
import { checkSubscriptionChangeCount } from './subscribe.js'
import { insufficientPermission, streamNameNotFound } from '../errors.js'
import { isAdmin } from '../domain/roles.js'
import { canAccessStreamContent, canSeeStreamMetadata } from '../domain/stream-access.js'
import { idsMatchingLower } from '../db/exact-match.js'
import { resolvePrincipals, type Principals } from '../access/principals.js'
import { getRecursiveGroupIds } from '../queries/group-membership.js'
import { getSubscriberIds } from '../queries/streams.js'
import { presentStream } from '../present/stream.js'
import { getStreamGroupContext, metadataGranteesByStream } from '../queries/stream-permissions.js'
import { groupGrantsOf } from '../access/stream-grants.js'
import { peerEvents, type RealmUserInfo } from './subscription-events.js'
import { emitGuestAccessChanges } from './guest-access-events.js'
import { streamDeleteEvent, subscriptionRemoveEvent } from '../events/schemas/index.js'

export interface UnsubscribeInput {
  subscriptions: string[]
  principals?: Principals
}

export interface UnsubscribeResult {
  removed: string[]
  not_removed: string[]
}

/** The requester itself or a bot it owns. */
const directlyControls = (user: User, target: User): boolean =>
  target.id === user.id || (target.isBot && target.botOwnerId === user.id)

export async function unsubscribeFromStreams(ctx: ActionContext, input: UnsubscribeInput): Promise<UnsubscribeResult> {
  const { user, realm } = ctx
  checkSubscriptionChangeCount(Math.max(1, input.principals?.length ?? 0), input.subscriptions.length)
  return inTransaction(ctx, async (tx, emit) => {
    const targets = input.principals && input.principals.length > 0 ? await resolvePrincipals(tx, realm.id, input.principals) : [user]
    const unsubscribingOthers = targets.some((t) => !directlyControls(user, t))
    const groups = unsubscribingOthers && !isAdmin(user.role) ? await getRecursiveGroupIds(tx, realm.id, user.id) : undefined
    const grants = await groupGrantsOf(tx, user)

    // Every name resolved at once (exactly, case-insensitively), then checked in the request's order.
    const names = input.subscriptions.map((raw) => raw.trim())
    const matches = await idsMatchingLower(tx, 'stream_name', { realm_id: realm.id }, names)
    // Archived channels included (level 362).
    const found = await tx.stream.findMany({ where: { id: { in: matches.map((m) => m.id) } } })
    const byKey = new Map<string, Stream>()
    for (const m of matches) {
      const stream = found.find((s) => s.id === m.id)
      if (stream) byKey.set(m.key, stream)
    }
    const own = new Set(
      (await tx.subscription.findMany({ where: { userId: user.id, streamId: { in: found.map((s) => s.id) }, active: true }, select: { streamId: true } })).map(
        (s) => s.streamId,
      ),
    )
    const streams: Stream[] = []
    for (const name of names) {
      const stream = byKey.get(name.toLowerCase())
      // Channels the requester may not know of are reported as missing.
      if (!stream) throw streamNameNotFound(name)
      const streamGrants = grants(stream)
      if (!canSeeStreamMetadata(user, stream, own.has(stream.id), streamGrants)) throw streamNameNotFound(name)
      // can_remove_subscribers_group with content access, or (level 349) administering the channel.
      const removes = canAccessStreamContent(user, stream, own.has(stream.id), streamGrants) && groups?.has(stream.canRemoveSubscribersGroupId) === true
      if (groups && !removes && !streamGrants.administer) throw insufficientPermission()
      if (!streams.some((s) => s.id === stream.id)) streams.push(stream)
    }

    const result: UnsubscribeResult = { removed: [], not_removed: [] }
    const removedByUser = new Map<number, Stream[]>()
    const leftByStream = new Map<number, number[]>()
    const active = await tx.subscription.findMany({
      where: { userId: { in: targets.map((t) => t.id) }, streamId: { in: streams.map((s) => s.id) }, active: true },
      select: { id: true, userId: true, streamId: true },
    })
    await tx.subscription.updateMany({ where: { id: { in: active.map((s) => s.id) } }, data: { active: false } })
    const wasActive = new Set(active.map((s) => `${s.userId}:${s.streamId}`))
    for (const target of targets) {
      for (const stream of streams) {
        if (!wasActive.has(`${target.id}:${stream.id}`)) {
          result.not_removed.push(stream.name)
          continue
        }
        result.removed.push(stream.name)
        removedByUser.set(target.id, [...(removedByUser.get(target.id) ?? []), stream])
        leftByStream.set(stream.id, [...(leftByStream.get(stream.id) ?? []), target.id])
      }
    }

    const streamGroups = await getStreamGroupContext(tx, realm.id, streams)
    const grantees = await metadataGranteesByStream(tx, realm.id, streams)
    for (const target of targets) {
      const lost = removedByUser.get(target.id)
      if (!lost) continue
      emit(subscriptionRemoveEvent(lost), [target.id])
      const hidden = lost.filter((s) => !canSeeStreamMetadata(target, s, false) && !grantees.get(s.id)?.has(target.id))
      if (hidden.length > 0) emit(streamDeleteEvent(hidden.map((s) => presentStream(s, streamGroups))), [target.id])
    }
    if (leftByStream.size > 0) {
      const realmUsers: RealmUserInfo[] = await tx.user.findMany({ where: { realmId: realm.id, isActive: true }, select: { id: true, role: true } })
      const subscribersAfter = await getSubscriberIds(tx, [...leftByStream.keys()])
      const changes = streams.filter((s) => leftByStream.has(s.id)).map((stream) => ({ stream, userIds: leftByStream.get(stream.id) as number[] }))
      for (const { event, userIds } of peerEvents('peer_remove', changes, realmUsers, subscribersAfter, grantees)) emit(event, userIds)
      const streamsByUser = new Map([...removedByUser].map(([userId, lost]) => [userId, lost.map((s) => s.id)]))
      await emitGuestAccessChanges(tx, emit, { realm, change: { op: 'remove', streamsByUser }, realmUsers, subscribersAfter })
    }
    return result
  })
}
