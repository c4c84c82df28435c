// Channel lookups that throw ApiError when the user may not see the channel.
import type { Stream, Subscription, User } from '../db/index.js'
import type { Services } from '../services.js'
import type { Tx } from '../db/index.js'
import { idMatchingLower } from '../db/exact-match.js'
import { invalidStreamId, streamIdNotFound, streamNameNotFound } from '../errors.js'
import { canAccessStreamContent, canSeeStreamMetadata, NO_GRANTS } from '../domain/stream-access.js'
import { groupGrantsOf } from './stream-grants.js'

export interface StreamAccess {
  stream: Stream
  /** The user's active subscription, if any. */
  subscription: Subscription | null
  /** Whether the user may read the channel's messages. */
  contentAccess: boolean
}

type Ctx = Pick<Services, 'prisma'> & { user: User }
type Db = Pick<Services['prisma'], 'stream' | 'subscription' | '$queryRaw'> | Tx

export interface AccessOptions {
  /** Administrators may reach private channels they are not subscribed to (metadata operations). */
  allowMetadataAccess?: boolean
  db?: Db
  /** How a missing channel is reported: upstream uses STREAM_DOES_NOT_EXIST for some endpoints, BAD_REQUEST for others. */
  notFound?: 'invalid-id' | 'does-not-exist'
}

async function finish(ctx: { user: User }, db: Db, stream: Stream | null, fail: () => Error, options: AccessOptions): Promise<StreamAccess> {
  if (!stream || stream.realmId !== ctx.user.realmId || stream.deactivated) throw fail()
  const subscription = await db.subscription.findFirst({ where: { userId: ctx.user.id, streamId: stream.id, active: true } })
  // Levels 349 and 354: a private channel's groups may grant access to those not subscribed.
  const grants = subscription === null && stream.inviteOnly ? (await groupGrantsOf(db as Tx, ctx.user))(stream) : NO_GRANTS
  const contentAccess = canAccessStreamContent(ctx.user, stream, subscription !== null, grants)
  const visible = contentAccess || (options.allowMetadataAccess === true && canSeeStreamMetadata(ctx.user, stream, false, grants))
  if (!visible) throw fail()
  return { stream, subscription, contentAccess }
}

export async function accessStreamById(ctx: Ctx, streamId: number, options: AccessOptions = {}): Promise<StreamAccess> {
  return accessStreamByIdIn(options.db ?? ctx.prisma, ctx.user, streamId, options)
}

/** accessStreamById on a given client (inside a transaction: its tx), for callers that hold no Prisma client. */
export async function accessStreamByIdIn(db: Db, user: User, streamId: number, options: Omit<AccessOptions, 'db'> = {}): Promise<StreamAccess> {
  const stream = await db.stream.findUnique({ where: { id: streamId } })
  const fail = options.notFound === 'does-not-exist' ? () => streamIdNotFound(streamId) : () => invalidStreamId()
  return finish({ user }, db, stream, fail, options)
}

/**
 * Several channels at once (two queries whatever their number), each checked
 * as accessStreamById checks one; the first refused ID, in the given order,
 * throws. Takes the user and a client, so it also runs inside a transaction.
 */
export async function accessStreamsByIds(db: Db, user: User, streamIds: readonly number[], options: Omit<AccessOptions, 'db'> = {}): Promise<Map<number, StreamAccess>> {
  const out = new Map<number, StreamAccess>()
  for (const [id, access] of await checkStreamsByIds(db, user, streamIds, options)) {
    if (access instanceof Error) throw access
    out.set(id, access)
  }
  return out
}

/**
 * accessStreamsByIds without throwing: each ID's access, or the error
 * accessStreamById would throw for it, for callers that check other things
 * between channels and must report whichever fails first.
 */
export async function checkStreamsByIds(db: Db, user: User, streamIds: readonly number[], options: Omit<AccessOptions, 'db'> = {}): Promise<Map<number, StreamAccess | Error>> {
  const ids = [...new Set(streamIds)]
  const out = new Map<number, StreamAccess | Error>()
  if (ids.length === 0) return out
  const streams = new Map((await db.stream.findMany({ where: { id: { in: ids } } })).map((s) => [s.id, s]))
  const subscriptions = new Map(
    (await db.subscription.findMany({ where: { userId: user.id, streamId: { in: ids }, active: true } })).map((s) => [s.streamId, s]),
  )
  let grants: Awaited<ReturnType<typeof groupGrantsOf>> | undefined
  for (const id of ids) {
    const stream = streams.get(id) ?? null
    const fail = options.notFound === 'does-not-exist' ? () => streamIdNotFound(id) : () => invalidStreamId()
    if (!stream || stream.realmId !== user.realmId || stream.deactivated) {
      out.set(id, fail())
      continue
    }
    const subscription = subscriptions.get(id) ?? null
    grants ??= subscription === null && stream.inviteOnly ? await groupGrantsOf(db as Tx, user) : undefined
    const streamGrants = subscription === null && stream.inviteOnly && grants ? grants(stream) : NO_GRANTS
    const contentAccess = canAccessStreamContent(user, stream, subscription !== null, streamGrants)
    if (!contentAccess && !(options.allowMetadataAccess === true && canSeeStreamMetadata(user, stream, false, streamGrants))) out.set(id, fail())
    else out.set(id, { stream, subscription, contentAccess })
  }
  return out
}

export async function accessStreamByName(ctx: Ctx, name: string, options: AccessOptions = {}): Promise<StreamAccess> {
  const db = options.db ?? ctx.prisma
  const stream = await findStreamByName(db, ctx.user.realmId, name)
  return finish(ctx, db, stream, () => streamNameNotFound(name.trim()), options)
}

/** Case-insensitive exact channel lookup within a realm (active channels only, unless `includeArchived`). */
export async function findStreamByName(db: Db, realmId: number, name: string, options: { includeArchived?: boolean } = {}): Promise<Stream | null> {
  const id = await idMatchingLower(db, 'stream_name', { realm_id: realmId }, name.trim())
  return id === undefined ? null : db.stream.findFirst({ where: { id, ...(options.includeArchived === true ? {} : { deactivated: false }) } })
}
