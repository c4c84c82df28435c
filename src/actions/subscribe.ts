// POST /users/me/subscriptions: subscribe the requester or others to
// channels, creating the missing ones. One transaction; events after commit.
// Not done here: the Notification Bot messages upstream sends for new
// channels and to users subscribed by someone else (needs message sending).
import { holdsRealmPermission } from '../queries/realm-permissions.js'
import type { Stream, Subscription, Tx, User } from '../db/index.js'
import type { ActionContext, Emit, TxContext } from './context.js'
import { inTransaction } from './context.js'
import { sendSubscriptionNotifications } from './subscription-notifications.js'
import { MAX_SUBSCRIPTION_CHANGES_PER_REQUEST } from '../domain/limits.js'
import { badRequest, insufficientPermission, invalidHexColor, notAllowedForGuests, unableToAccessStream } from '../errors.js'
import { isAdmin, isGuest } from '../domain/roles.js'
import { canAccessStreamContent, canAddSubscribersTo, canSeeStreamMetadata, type GroupGrants } from '../domain/stream-access.js'
import { groupGrantsOf } from '../access/stream-grants.js'
import { presentStream, presentSubscription } from '../present/stream.js'
import { getSubscriberIds } from '../queries/streams.js'
import { getStreamGroupContext, metadataGranteesByStream } from '../queries/stream-permissions.js'
import { getStreamNotificationDefaults } from '../queries/user-settings.js'
import { streamCreateEvent, subscriptionAddEvent } from '../events/schemas/index.js'
import { resolvePrincipals, type Principals } from '../access/principals.js'
import { idsMatchingLower } from '../db/exact-match.js'
import { checkCanCreateStreams, checkStreamName, insertStreams, parseMessageRetentionDays, withPostPolicy, type NewStream, type NewStreamOptions } from './create-streams.js'
import { peerEvents, type RealmUserInfo } from './subscription-events.js'
import { emitGuestAccessChanges } from './guest-access-events.js'
import { STREAM_COLORS } from './user-rows.js'

export const HEX_COLOR = /^#[0-9a-fA-F]{3,6}$/

/** Bounds the rows one request writes: users × channels. */
export function checkSubscriptionChangeCount(users: number, channels: number): void {
  if (users * channels > MAX_SUBSCRIPTION_CHANGES_PER_REQUEST) {
    throw badRequest(`Too many subscription changes at once (principals × subscriptions; limit: ${MAX_SUBSCRIPTION_CHANGES_PER_REQUEST})`)
  }
}

export interface SubscribeRequest {
  name: string
  description?: string
  color?: string
}

export interface SubscribeInput {
  subscriptions: SubscribeRequest[]
  principals?: Principals
  authorizationErrorsFatal: boolean
  announce: boolean
  inviteOnly: boolean
  isWebPublic: boolean
  isDefaultStream: boolean
  historyPublicToSubscribers?: boolean
  /** Deprecated by level 333: stands for can_send_message_group when that is not given. */
  streamPostPolicy?: number
  messageRetentionDays: string | number
  /** Group settings of the channels created (upstream's values; POST takes no `{new, old}`). */
  groupSettings: NewStreamOptions['groupSettings']
}

/** Keyed by user ID (as a string), as upstream since level 289 (it keyed them by email before). */
export interface SubscribeResult {
  subscribed: Record<string, string[]>
  already_subscribed: Record<string, string[]>
  unauthorized?: string[]
}

interface Wanted extends NewStream {
  color?: string
}

function normalizeRequests(requests: SubscribeRequest[]): Wanted[] {
  const byKey = new Map<string, Wanted>()
  for (const r of requests) {
    const name = r.name.trim()
    checkStreamName(name)
    if (r.color !== undefined && !HEX_COLOR.test(r.color)) throw invalidHexColor('color')
    const key = name.toLowerCase()
    if (!byKey.has(key)) byKey.set(key, { name, description: r.description?.replace(/\n/g, ' '), color: r.color })
  }
  return [...byKey.values()]
}

/**
 * May the requester subscribe (itself or others) to this existing channel? Private ones need
 * content access: a subscription, or (level 357) its can_subscribe_group or can_add_subscribers_group.
 */
function canAccessForSubscribing(user: User, stream: Stream, subscribed: boolean, grants: GroupGrants): boolean {
  return canAccessStreamContent(user, stream, subscribed, grants)
}

/** The first palette color the user does not use yet, else by count. */
function colorPicker(used: string[]): () => string {
  const taken = new Set(used.map((c) => c.toLowerCase()))
  let n = used.length
  return () => {
    const free = STREAM_COLORS.find((c) => !taken.has(c))
    const color = free ?? (STREAM_COLORS[n % STREAM_COLORS.length] as string)
    taken.add(color)
    n++
    return color
  }
}

export async function subscribeToStreams(ctx: ActionContext, input: SubscribeInput): Promise<SubscribeResult> {
  const { user, realm } = ctx
  if (isGuest(user.role)) throw notAllowedForGuests()
  const retention = parseMessageRetentionDays(input.messageRetentionDays)
  const wanted = normalizeRequests(input.subscriptions)
  checkSubscriptionChangeCount(Math.max(1, input.principals?.length ?? 0), wanted.length)
  const now = ctx.now()

  const outcome = await inTransaction(ctx, async (tx, emit) => {
    // Every name looked up at once, exactly (case-insensitively), never as a pattern.
    const matches = await idsMatchingLower(tx, 'stream_name', { realm_id: realm.id }, wanted.map((w) => w.name))
    const rows = await tx.stream.findMany({ where: { id: { in: matches.map((m) => m.id) } } })
    const byKey = new Map(matches.map((m) => [m.key, rows.find((r) => r.id === m.id)]))
    const existing = new Map<string, Stream>()
    const missing: Wanted[] = []
    for (const w of wanted) {
      const found = byKey.get(w.name.toLowerCase())
      // An archived channel keeps its subscriptions editable (level 362).
      if (found) existing.set(w.name.toLowerCase(), found)
      else missing.push(w)
    }
    const ownSubs = await tx.subscription.findMany({ where: { userId: user.id, active: true, streamId: { in: [...existing.values()].map((s) => s.id) } } })
    const ownSubscribed = new Set(ownSubs.map((s) => s.streamId))
    const grants = await groupGrantsOf(tx, user)
    const authorized: Stream[] = []
    const unauthorized: Stream[] = []
    for (const stream of existing.values()) {
      ;(canAccessForSubscribing(user, stream, ownSubscribed.has(stream.id), grants(stream)) ? authorized : unauthorized).push(stream)
    }
    if (unauthorized.length > 0 && input.authorizationErrorsFatal) throw unableToAccessStream((unauthorized[0] as Stream).name)

    const principals = input.principals ?? []
    const others = principals.some((p) => (typeof p === 'number' ? p !== user.id : p.trim().toLowerCase() !== user.email.toLowerCase()))
    if (others) {
      // Level 342: the realm's can_add_subscribers_group covers every channel (new ones too); the
      // channel's own, and administering it, cover that channel.
      const realmHolds = await holdsRealmPermission(tx, realm, user, 'can_add_subscribers_group', now)
      if (!realmHolds && (missing.length > 0 || authorized.some((s) => !canAddSubscribersTo(user, grants(s), false)))) throw insufficientPermission()
    }
    const subscribers = others ? await resolvePrincipals(tx, realm.id, principals) : [user]

    let created: Stream[] = []
    if (missing.length > 0) {
      const options: NewStreamOptions = {
        inviteOnly: input.inviteOnly,
        isWebPublic: input.isWebPublic,
        isDefaultStream: input.isDefaultStream,
        historyPublicToSubscribers: input.historyPublicToSubscribers,
        messageRetentionDays: retention,
        groupSettings: await withPostPolicy(tx, realm.id, input.groupSettings, input.streamPostPolicy),
      }
      await checkCanCreateStreams(tx, realm, user, options, now)
      created = await insertStreams(tx, realm, user, missing, options, now)
    }
    const colors = new Map(wanted.filter((w) => w.color !== undefined).map((w) => [w.name.toLowerCase(), w.color as string]))
    const streams = [...authorized, ...created]
    const result = await addSubscriptions(tx, emit, { ctx, streams, created, subscribers, colors })
    const added = subscribers.map((user) => ({ user, streamNames: result.subscribed[String(user.id)] ?? [] }))
    return { result: input.authorizationErrorsFatal ? result : { ...result, unauthorized: unauthorized.map((s) => s.name) }, created, added }
  })
  await sendSubscriptionNotifications(ctx, { created: outcome.created, added: outcome.added, announce: input.announce })
  return outcome.result
}

export interface AddSubscriptionsArgs {
  ctx: TxContext
  streams: Stream[]
  created: Stream[]
  subscribers: User[]
  /** Requested colors by lower-cased channel name. */
  colors: Map<string, string>
}

/** Subscribes `subscribers` to `streams` (reactivating old rows) and emits what a subscription request emits. */
export async function addSubscriptions(tx: Tx, emit: Emit, args: AddSubscriptionsArgs): Promise<SubscribeResult> {
  const { ctx, streams, created, subscribers, colors } = args
  const streamIds = streams.map((s) => s.id)
  const rows = await tx.subscription.findMany({ where: { userId: { in: subscribers.map((u) => u.id) } } })
  const subscribed: Record<string, string[]> = {}
  const already: Record<string, string[]> = {}
  const added = new Map<number, { stream: Stream; sub: Subscription }[]>()
  // Decided in memory, then written in a few set-based statements (one per requested color at most).
  const reactivate = new Map<string, number[]>() // color ('' = keep) → subscription IDs
  const create: { userId: number; streamId: number; color: string }[] = []
  const addedPairs: { target: User; stream: Stream }[] = []
  for (const target of subscribers) {
    const mine = new Map(rows.filter((r) => r.userId === target.id).map((r) => [r.streamId, r]))
    const nextColor = colorPicker([...mine.values()].filter((r) => r.active).map((r) => r.color))
    for (const stream of streams) {
      const row = mine.get(stream.id)
      if (row?.active) {
        ;(already[String(target.id)] ??= []).push(stream.name)
        continue
      }
      const color = colors.get(stream.name.toLowerCase())
      if (row) reactivate.set(color ?? '', [...(reactivate.get(color ?? '') ?? []), row.id])
      else create.push({ userId: target.id, streamId: stream.id, color: color ?? nextColor() })
      ;(subscribed[String(target.id)] ??= []).push(stream.name)
      addedPairs.push({ target, stream })
    }
  }
  for (const [color, ids] of reactivate) {
    await tx.subscription.updateMany({ where: { id: { in: ids } }, data: { active: true, ...(color ? { color } : {}) } })
  }
  if (create.length > 0) await tx.subscription.createMany({ data: create })
  if (addedPairs.length > 0) {
    const subs = await tx.subscription.findMany({ where: { userId: { in: subscribers.map((u) => u.id) }, streamId: { in: streamIds } } })
    const subByPair = new Map(subs.map((s) => [`${s.userId}:${s.streamId}`, s]))
    for (const { target, stream } of addedPairs) {
      const list = added.get(target.id) ?? []
      list.push({ stream, sub: subByPair.get(`${target.id}:${stream.id}`) as Subscription })
      added.set(target.id, list)
    }
  }
  await emitSubscribeEvents(tx, emit, { ctx, streamIds, created, subscribers, added })
  return { subscribed, already_subscribed: already }
}

interface EmitArgs {
  ctx: TxContext
  streamIds: number[]
  created: Stream[]
  subscribers: User[]
  added: Map<number, { stream: Stream; sub: Subscription }[]>
}

async function emitSubscribeEvents(tx: Tx, emit: Emit, args: EmitArgs): Promise<void> {
  const { ctx, streamIds, created, subscribers, added } = args
  const realmUsers: RealmUserInfo[] = await tx.user.findMany({ where: { realmId: ctx.realm.id, isActive: true }, select: { id: true, role: true } })
  const streams = [...new Map([...created, ...[...added.values()].flatMap((list) => list.map((a) => a.stream))].map((s) => [s.id, s])).values()]
  const groups = await getStreamGroupContext(tx, ctx.realm.id, streams)
  const grantees = await metadataGranteesByStream(tx, ctx.realm.id, streams)
  const granted = (stream: Stream, userId: number) => grantees.get(stream.id)?.has(userId) === true
  // Channels that now exist: to the users who may see them.
  for (const stream of created) {
    const audience = realmUsers
      .filter((u) => (stream.inviteOnly ? isAdmin(u.role) || granted(stream, u.id) : stream.isWebPublic || !isGuest(u.role)))
      .map((u) => u.id)
    emit(streamCreateEvent([presentStream(stream, groups)]), audience)
  }
  // New subscribers who could not see a channel before (and did not just hear of it above).
  for (const target of subscribers) {
    const fresh = (added.get(target.id) ?? [])
      .map((a) => a.stream)
      .filter((s) => !canSeeStreamMetadata(target, s, false) && !granted(s, target.id))
    if (fresh.length > 0) emit(streamCreateEvent(fresh.map((s) => presentStream(s, groups))), [target.id])
  }
  const subscriberIds = await getSubscriberIds(tx, streamIds)
  const defaults = await getStreamNotificationDefaults(tx, subscribers.filter((s) => added.has(s.id)).map((s) => s.id))
  for (const target of subscribers) {
    const list = added.get(target.id)
    if (!list || list.length === 0) continue
    const subscriptions = list.map(({ stream, sub }) => presentSubscription(sub, stream, groups, { subscribers: subscriberIds.get(stream.id) ?? [] }))
    emit(subscriptionAddEvent(subscriptions, defaults.get(target.id)), [target.id])
  }
  const joined = new Map<number, { stream: Stream; userIds: number[] }>()
  for (const target of subscribers) {
    for (const { stream } of added.get(target.id) ?? []) {
      const change = joined.get(stream.id) ?? { stream, userIds: [] }
      change.userIds.push(target.id)
      joined.set(stream.id, change)
    }
  }
  const streamsByUser = new Map([...added].map(([userId, list]) => [userId, list.map((a) => a.stream.id)]))
  await emitGuestAccessChanges(tx, emit, { realm: ctx.realm, change: { op: 'add', streamsByUser }, realmUsers, subscribersAfter: subscriberIds })
  const changes = [...joined.values()]
  for (const { event, userIds } of peerEvents('peer_add', changes, realmUsers, subscriberIds, grantees)) emit(event, userIds)
}
