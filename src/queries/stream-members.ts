// GET /streams/{stream_id}/members and GET /users/{user_id}/subscriptions/{stream_id}
// (upstream get_subscribers_backend, get_subscription_backend).
import { accessStreamById } from '../access/stream.js'
import { accessUserById } from '../access/user.js'
import type { Services } from '../services.js'
import type { Realm, User } from '../db/index.js'

/** The request's user, realm and database client (the channel and user lookups need all three). */
type MembersContext = Pick<Services, 'prisma'> & { realm: Realm; user: User }
import { noSuchUser, principalDeactivated, subscribersOfPrivateStreamUnavailable } from '../errors.js'
import { isAdmin } from '../domain/roles.js'
import { getSubscriberIds } from './streams.js'

/**
 * Active subscribers (active users) sorted by ID. Administrators may ask about
 * any channel; others about channels whose content they may read (a guest:
 * channels it is subscribed to, and web-public ones).
 */
export async function getStreamMembers(ctx: MembersContext, streamId: number): Promise<number[]> {
  const { stream, subscription } = await accessStreamById(ctx, streamId, { allowMetadataAccess: true })
  if (stream.inviteOnly && subscription === null && !isAdmin(ctx.user.role)) throw subscribersOfPrivateStreamUnavailable()
  return (await getSubscriberIds(ctx.prisma, [stream.id])).get(stream.id) ?? []
}

/** Whether an active, accessible human user is subscribed to a channel the requester can see. */
export async function getIsSubscribed(ctx: MembersContext, userId: number, streamId: number): Promise<boolean> {
  const target = await accessUserById(ctx, userId)
  if (target.isBot) throw noSuchUser()
  if (!target.isActive) throw principalDeactivated()
  const { stream } = await accessStreamById(ctx, streamId, { allowMetadataAccess: true })
  return (await ctx.prisma.subscription.count({ where: { userId: target.id, streamId: stream.id, active: true } })) > 0
}
