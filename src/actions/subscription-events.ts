// Event builders shared by subscribe and unsubscribe: who hears about peers
// joining or leaving a channel (upstream §2 "subscription" peer_add/peer_remove).
import type { Stream } from '../db/index.js'
import { isAdmin, isGuest } from '../domain/roles.js'
import { subscriptionPeerEvent, type BuiltEvent } from '../events/schemas/index.js'

export interface RealmUserInfo {
  id: number
  role: number
}

export interface PeerChange {
  stream: Stream
  /** Users who joined (peer_add) or left (peer_remove) the channel. */
  userIds: number[]
}

export interface Addressed {
  event: BuiltEvent
  userIds: number[]
}

export { subscriptionPeerEvent }

const ascending = (a: number, b: number): number => a - b

/**
 * Private channel: one event per channel to its subscribers, the
 * administrators and the users whose groups grant its metadata, minus the changed users. Public channel: one event per
 * changed user (their channels batched) to every active non-guest user and
 * the subscribers (everyone for web-public channels), minus that user.
 */
export function peerEvents(
  op: 'peer_add' | 'peer_remove',
  changes: PeerChange[],
  realmUsers: RealmUserInfo[],
  subscribersAfter: Map<number, number[]>,
  /** Users whose groups grant each private channel's metadata (level 349). */
  grantees: ReadonlyMap<number, ReadonlySet<number>> = new Map(),
): Addressed[] {
  const out: Addressed[] = []
  const admins = realmUsers.filter((u) => isAdmin(u.role)).map((u) => u.id)
  const nonGuests = realmUsers.filter((u) => !isGuest(u.role)).map((u) => u.id)
  const everyone = realmUsers.map((u) => u.id)
  const publicByUser = new Map<number, Map<string, { streamIds: number[]; audience: number[] }>>()
  for (const { stream, userIds } of changes) {
    if (userIds.length === 0) continue
    const changed = new Set(userIds)
    const subscribers = subscribersAfter.get(stream.id) ?? []
    if (stream.inviteOnly) {
      const audience = [...new Set([...subscribers, ...admins, ...(grantees.get(stream.id) ?? [])])].filter((id) => !changed.has(id)).sort(ascending)
      out.push({ event: subscriptionPeerEvent(op, [stream.id], [...userIds].sort(ascending)), userIds: audience })
      continue
    }
    const base = stream.isWebPublic ? everyone : [...new Set([...nonGuests, ...subscribers])]
    for (const userId of userIds) {
      const audience = base.filter((id) => id !== userId).sort(ascending)
      const key = audience.join(',')
      const groups = publicByUser.get(userId) ?? new Map<string, { streamIds: number[]; audience: number[] }>()
      publicByUser.set(userId, groups)
      const group = groups.get(key)
      if (group) group.streamIds.push(stream.id)
      else groups.set(key, { streamIds: [stream.id], audience })
    }
  }
  for (const [userId, groups] of publicByUser) {
    for (const { streamIds, audience } of groups.values()) {
      out.push({ event: subscriptionPeerEvent(op, streamIds.sort(ascending), [userId]), userIds: audience })
    }
  }
  return out
}
