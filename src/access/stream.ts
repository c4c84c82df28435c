// Channel lookups that throw ApiError when the user may not see the channel.
import type { Stream, Subscription, User } from '../db/index.js'
import type { Services } from '../actions/context.js'
import type { Tx } from '../db/index.js'
import { invalidStreamId, streamIdNotFound, streamNameNotFound } from '../errors.js'
import { canAccessStreamContent, canSeeStreamMetadata } from '../domain/stream-access.js'

export interface StreamAccess {
  stream: Stream
  /** The user's active subscription, if any. */
  subscription: Subscription | null
  /** Whether the user may read the channel's messages. */
  contentAccess: boolean
}

type Ctx = Pick<Services, 'prisma'> & { user: User }
type Db = Pick<Services['prisma'], 'stream' | 'subscription'> | Tx

export interface AccessOptions {
  /** Administrators may reach private channels they are not subscribed to (metadata operations). */
  allowMetadataAccess?: boolean
  db?: Db
  /** How a missing channel is reported: upstream uses STREAM_DOES_NOT_EXIST for some endpoints, BAD_REQUEST for others. */
  notFound?: 'invalid-id' | 'does-not-exist'
}

async function finish(ctx: Ctx, db: Db, stream: Stream | null, fail: () => Error, options: AccessOptions): Promise<StreamAccess> {
  if (!stream || stream.realmId !== ctx.user.realmId || stream.deactivated) throw fail()
  const subscription = await db.subscription.findFirst({ where: { userId: ctx.user.id, streamId: stream.id, active: true } })
  const contentAccess = canAccessStreamContent(ctx.user, stream, subscription !== null)
  const visible = contentAccess || (options.allowMetadataAccess === true && canSeeStreamMetadata(ctx.user, stream, false))
  if (!visible) throw fail()
  return { stream, subscription, contentAccess }
}

export async function accessStreamById(ctx: Ctx, streamId: number, options: AccessOptions = {}): Promise<StreamAccess> {
  const db = options.db ?? ctx.prisma
  const stream = await db.stream.findUnique({ where: { id: streamId } })
  const fail = options.notFound === 'does-not-exist' ? () => streamIdNotFound(streamId) : () => invalidStreamId()
  return finish(ctx, db, stream, fail, options)
}

export async function accessStreamByName(ctx: Ctx, name: string, options: AccessOptions = {}): Promise<StreamAccess> {
  const db = options.db ?? ctx.prisma
  const stream = await findStreamByName(db, ctx.user.realmId, name)
  return finish(ctx, db, stream, () => streamNameNotFound(name.trim()), options)
}

/** Case-insensitive channel lookup within a realm (active channels only). */
export function findStreamByName(db: Db, realmId: number, name: string): Promise<Stream | null> {
  return db.stream.findFirst({ where: { realmId, deactivated: false, name: { equals: name.trim(), mode: 'insensitive' } } })
}
