// Channel reads in API shape: the user's subscriptions, GET /streams and the
// single-channel lookups. The register (events) code reuses these.
import type { PrismaClient, Stream, Tx, User } from '../db/index.js'
import { accessStreamById, accessStreamByName } from '../access/stream.js'
import { ApiError, invalidStreamName } from '../errors.js'
import { isGuest } from '../domain/roles.js'
import { canAccessStreamContent, canSeeStreamMetadata } from '../domain/stream-access.js'
import { presentStream, presentSubscription, sortByName, type StreamObject, type SubscriptionObject } from '../present/stream.js'
import { getStreamGroupContext, groupGrantsOf } from './stream-permissions.js'

type Db = PrismaClient | Tx

export interface StreamQueryContext {
  prisma: PrismaClient
  user: User
}

/** Active subscribers (active users only) of each channel, sorted by user ID. Every requested ID has an entry. */
export async function getSubscriberIds(db: Db, streamIds: number[]): Promise<Map<number, number[]>> {
  const out = new Map<number, number[]>(streamIds.map((id) => [id, []]))
  if (streamIds.length === 0) return out
  const rows = await db.subscription.findMany({
    where: { streamId: { in: streamIds }, active: true, user: { isActive: true } },
    select: { streamId: true, userId: true },
    orderBy: { userId: 'asc' },
  })
  for (const row of rows) out.get(row.streamId)?.push(row.userId)
  return out
}

/** The user's active subscriptions to active channels, sorted by channel name. */
export async function getSubscriptions(ctx: StreamQueryContext, options: { includeSubscribers?: boolean } = {}): Promise<SubscriptionObject[]> {
  const subs = await ctx.prisma.subscription.findMany({
    where: { userId: ctx.user.id, active: true, stream: { deactivated: false } },
    include: { stream: true },
  })
  const subscribers = options.includeSubscribers ? await getSubscriberIds(ctx.prisma, subs.map((s) => s.streamId)) : undefined
  const groups = await getStreamGroupContext(ctx.prisma, ctx.user.realmId, subs.map((s) => s.stream))
  return sortByName(subs.map((sub) => presentSubscription(sub, sub.stream, groups, { subscribers: subscribers?.get(sub.streamId) })))
}

export interface GetStreamsOptions {
  includePublic: boolean
  includeWebPublic: boolean
  includeSubscribed: boolean
  /** Every channel the user may know of (level 356; administrators: every channel). */
  includeAll: boolean
  includeDefault: boolean
  includeOwnerSubscribed: boolean
  /** Every channel whose messages the user may read (level 356). */
  includeCanAccessContent: boolean
  /** Leave archived channels out (level 315). */
  excludeArchived: boolean
}

/** GET /streams: the union of the requested categories, sorted by name. */
export async function getStreams(ctx: StreamQueryContext, options: GetStreamsOptions): Promise<StreamObject[]> {
  const { user } = ctx
  const base = { realmId: user.realmId, ...(options.excludeArchived ? { deactivated: false } : {}) }
  let streams: Stream[]
  if (options.includeAll || options.includeCanAccessContent) {
    const all = await ctx.prisma.stream.findMany({ where: base })
    const subscribed = new Set(
      (await ctx.prisma.subscription.findMany({ where: { userId: user.id, active: true, streamId: { in: all.map((s) => s.id) } }, select: { streamId: true } })).map(
        (s) => s.streamId,
      ),
    )
    const visible = options.includeAll ? canSeeStreamMetadata : canAccessStreamContent
    const grants = await groupGrantsOf(ctx.prisma, user)
    streams = all.filter((s) => visible(user, s, subscribed.has(s.id), grants(s)))
  } else {
    const subscriberIds = [user.id]
    if (options.includeOwnerSubscribed && user.isBot && user.botOwnerId !== null) subscriberIds.push(user.botOwnerId)
    const or = [
      ...(options.includePublic && !isGuest(user.role) ? [{ inviteOnly: false }] : []),
      ...(options.includeWebPublic ? [{ isWebPublic: true }] : []),
      ...(options.includeSubscribed ? [{ subscriptions: { some: { userId: user.id, active: true } } }] : []),
      ...(subscriberIds.length > 1 ? [{ subscriptions: { some: { userId: subscriberIds[1], active: true } } }] : []),
    ]
    streams = or.length === 0 ? [] : await ctx.prisma.stream.findMany({ where: { ...base, OR: or } })
  }
  const defaults = options.includeDefault
    ? new Set((await ctx.prisma.defaultStream.findMany({ where: { realmId: user.realmId } })).map((d) => d.streamId))
    : undefined
  const groups = await getStreamGroupContext(ctx.prisma, user.realmId, streams)
  return sortByName(streams.map((s) => presentStream(s, groups, defaults ? { isDefault: defaults.has(s.id) } : {})))
}

/** The realm's default channels by ID, ascending (register's realm_default_streams and the event since level 330). */
export async function getDefaultStreamIds(db: Pick<Tx, 'defaultStream'>, realmId: number): Promise<number[]> {
  const rows = await db.defaultStream.findMany({ where: { realmId, stream: { deactivated: false } }, select: { streamId: true }, orderBy: { streamId: 'asc' } })
  return rows.map((r) => r.streamId)
}

/** GET /streams/{stream_id}: administrators may look up private channels they are not in. */
export async function getStreamById(ctx: StreamQueryContext, streamId: number): Promise<StreamObject> {
  const { stream } = await accessStreamById(ctx, streamId, { allowMetadataAccess: true })
  return presentStream(stream, await getStreamGroupContext(ctx.prisma, ctx.user.realmId, [stream]))
}

/** GET /get_stream_id. */
export async function getStreamIdByName(ctx: StreamQueryContext, name: string): Promise<number> {
  try {
    return (await accessStreamByName(ctx, name)).stream.id
  } catch (error) {
    if (error instanceof ApiError && error.code === 'STREAM_DOES_NOT_EXIST') throw invalidStreamName(name)
    throw error
  }
}
