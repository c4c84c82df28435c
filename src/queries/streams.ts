// Channel reads in API shape: the user's subscriptions, GET /streams and the
// single-channel lookups. The register (events) code reuses these.
import type { PrismaClient, Stream, Tx, User } from '../db/index.js'
import { accessStreamById, accessStreamByName } from '../access/stream.js'
import { ApiError, invalidStreamName, userNotAuthorizedForQuery } from '../errors.js'
import { isAdmin, isGuest } from '../domain/roles.js'
import { presentStream, presentSubscription, sortByName, type StreamObject, type SubscriptionObject } from '../present/stream.js'

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
  return sortByName(subs.map((sub) => presentSubscription(sub, sub.stream, { subscribers: subscribers?.get(sub.streamId) })))
}

export interface GetStreamsOptions {
  includePublic: boolean
  includeWebPublic: boolean
  includeSubscribed: boolean
  includeAllActive: boolean
  includeDefault: boolean
  includeOwnerSubscribed: boolean
}

/** GET /streams: the union of the requested categories, sorted by name. */
export async function getStreams(ctx: StreamQueryContext, options: GetStreamsOptions): Promise<StreamObject[]> {
  const { user } = ctx
  if (options.includeAllActive && !isAdmin(user.role)) throw userNotAuthorizedForQuery()
  const base = { realmId: user.realmId, deactivated: false }
  let streams: Stream[]
  if (options.includeAllActive) {
    streams = await ctx.prisma.stream.findMany({ where: base })
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
  return sortByName(streams.map((s) => presentStream(s, defaults ? { isDefault: defaults.has(s.id) } : {})))
}

/** GET /streams/{stream_id}: administrators may look up private channels they are not in. */
export async function getStreamById(ctx: StreamQueryContext, streamId: number): Promise<StreamObject> {
  const { stream } = await accessStreamById(ctx, streamId, { allowMetadataAccess: true })
  return presentStream(stream)
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
