// Which users a guest may access when the realm restricts guests
// (can_access_all_users_group is not "everyone"): itself, every bot, the
// people it shares a channel with and its direct-message partners. Pure; the
// queries feeding it live in access/user.ts and actions/guest-access-events.ts.

export interface GuestReach {
  /** Users subscribed to at least one of the guest's channels. */
  channelPeers: Iterable<number>
  /** Users the guest exchanged direct messages with (one-on-one or group). */
  dmPartners: Iterable<number>
  botIds: Iterable<number>
}

/** The IDs a restricted guest may access. */
export function reachableUserIds(guestId: number, reach: GuestReach): Set<number> {
  return new Set([guestId, ...reach.channelPeers, ...reach.dmPartners, ...reach.botIds])
}

/** Users a guest may access now but not before (gained) and the other way round (lost). */
export function accessDelta(guestId: number, before: GuestReach, after: GuestReach): { gained: number[]; lost: number[] } {
  const was = reachableUserIds(guestId, before)
  const is = reachableUserIds(guestId, after)
  const ascending = (a: number, b: number): number => a - b
  return {
    gained: [...is].filter((id) => !was.has(id)).sort(ascending),
    lost: [...was].filter((id) => !is.has(id)).sort(ascending),
  }
}

/** Subscriptions a change added ('add') or deactivated ('remove'). */
export interface SubscriptionChange {
  op: 'add' | 'remove'
  /** Changed channels by user. */
  streamsByUser: Map<number, number[]>
}

/** The state after a subscription change, enough to rebuild the state before it. */
export interface ChannelSnapshot {
  /** Each watched guest's channels after the change. */
  guestStreams: Map<number, number[]>
  /** Subscribers after the change of every channel in guestStreams and of every changed channel. */
  subscribers: Map<number, number[]>
}

/**
 * Each guest's channel peers before and after a change, from the state after
 * it: an added subscription did not exist before, a removed one did.
 */
export function channelPeersAround(change: SubscriptionChange, snapshot: ChannelSnapshot): Map<number, { before: Set<number>; after: Set<number> }> {
  const usersByStream = new Map<number, Set<number>>()
  for (const [userId, streamIds] of change.streamsByUser) {
    for (const streamId of streamIds) usersByStream.set(streamId, (usersByStream.get(streamId) ?? new Set()).add(userId))
  }
  const adding = change.op === 'add'
  const subscribersBefore = (streamId: number): number[] => {
    const now = snapshot.subscribers.get(streamId) ?? []
    const changed = usersByStream.get(streamId)
    if (!changed) return now
    return adding ? now.filter((id) => !changed.has(id)) : [...new Set([...now, ...changed])]
  }
  const out = new Map<number, { before: Set<number>; after: Set<number> }>()
  for (const [guestId, streamsNow] of snapshot.guestStreams) {
    const changed = new Set(change.streamsByUser.get(guestId) ?? [])
    const streamsBefore = adding ? streamsNow.filter((id) => !changed.has(id)) : [...new Set([...streamsNow, ...changed])]
    out.set(guestId, {
      before: new Set(streamsBefore.flatMap(subscribersBefore)),
      after: new Set(streamsNow.flatMap((id) => snapshot.subscribers.get(id) ?? [])),
    })
  }
  return out
}
