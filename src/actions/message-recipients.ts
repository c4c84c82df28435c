// Who a new message goes to: the `to`/`type`/`topic` parameters of
// POST /messages parsed as upstream does (zerver/lib/addressee.py), the
// channel or users looked up, and the permission to post checked.
import type { ActionContext } from './context.js'
import type { Realm, Stream, User } from '../db/index.js'
import { idsMatchingLower } from '../db/exact-match.js'
import {
  ApiError,
  badRequest,
  cannotPostInChannel,
  cannotSendToMultipleChannels,
  invalidEmailRecipient,
  invalidUserId,
  missingChannel,
  missingTopic,
  notAuthorizedToSendToChannel,
  recipientDeactivated,
  streamIdNotFound,
  streamNameNotFound,
} from '../errors.js'
import { isGuest, ROLE } from '../domain/roles.js'
import { holdsGroupSetting } from '../domain/group-setting-value.js'
import { STREAM_PERMISSION_SETTINGS } from '../domain/permission-settings.js'
import { getPermissionGroupIds } from '../queries/group-setting-values.js'
import { groupGrantsOf } from '../queries/stream-permissions.js'
import { normalizeTopic } from '../domain/topics.js'
import { findStreamByName } from '../access/stream.js'
import { MAX_USERS_PER_REQUEST } from '../domain/limits.js'
import { tooManyItems } from '../errors.js'
import { checkDecodedScalar } from '../domain/int-range.js'
import { canSeeDeliveryEmail, EMAIL_VISIBILITY, type Viewer } from '../present/user.js'

export type MessageType = 'direct' | 'private' | 'channel' | 'stream'

export type Addressee =
  | { kind: 'stream'; channel: number | string | null; topic: string }
  | { kind: 'private'; to: number[] | string[] }

function parseJsonOr(s: string): unknown {
  try {
    return JSON.parse(s)
  } catch {
    return s
  }
}

/** `to` of a channel message: an id, a name, or a one-element JSON list of either. */
function channelIndicator(to: string): number | string {
  let data = parseJsonOr(to)
  let path = 'to'
  if (Array.isArray(data)) {
    if (data.length > 1) throw cannotSendToMultipleChannels()
    if (data.length === 0) throw missingChannel()
    data = data[0]
    path = 'to[0]'
  }
  checkDecodedScalar(path, data)
  if (typeof data === 'number' && Number.isInteger(data)) return data
  if (typeof data === 'string') return data
  throw badRequest('Invalid data type for channel')
}

/** `to` of a direct message: a JSON list of ids or of emails, or a comma-separated string of emails. */
function privateRecipients(to: string): number[] | string[] {
  let data = parseJsonOr(to)
  if (typeof data === 'string') data = data.split(',')
  if (!Array.isArray(data)) throw badRequest('Invalid data type for recipients')
  if (data.length > MAX_USERS_PER_REQUEST) throw tooManyItems('to', MAX_USERS_PER_REQUEST)
  if (data.length === 0) return []
  data.forEach((d, i) => checkDecodedScalar(`to[${i}]`, d))
  if (typeof data[0] === 'string') {
    if (!data.every((d): d is string => typeof d === 'string')) {
      throw badRequest('Recipient lists may contain emails or user IDs, but not both.')
    }
    return [...new Set(data.map((e) => e.trim()).filter((e) => e !== ''))]
  }
  if (!data.every((d): d is number => typeof d === 'number' && Number.isInteger(d))) {
    if (data.every((d) => typeof d === 'number' || typeof d === 'string')) {
      throw badRequest('Recipient lists may contain emails or user IDs, but not both.')
    }
    throw badRequest('Invalid data type for recipients')
  }
  return [...new Set(data)]
}

export function parseAddressee(input: { type: MessageType; to?: string; topic?: string }): Addressee {
  if (input.type === 'channel' || input.type === 'stream') {
    const channel = input.to === undefined ? null : channelIndicator(input.to)
    if (input.topic === undefined) throw missingTopic()
    return { kind: 'stream', channel, topic: normalizeTopic(input.topic, { noTopicIsEmpty: true }) }
  }
  const to = input.to === undefined ? [] : privateRecipients(input.to)
  if (to.length === 0) throw new ApiError('Message must have recipients')
  return { kind: 'private', to }
}

// ---------------------------------------------------------------------------
// Channels

/** The channel a send names: the addressee's, else (bots) the sender's default channel. */
export function sendingChannel(ctx: ActionContext, channel: number | string | null): number | string {
  if (channel !== null) return channel
  const id = ctx.user.defaultSendingStreamId
  if (id === null) throw missingChannel()
  return id
}

export async function findStreamForSend(ctx: ActionContext, addressed: number | string | null): Promise<Stream> {
  const channel = sendingChannel(ctx, addressed)
  let stream: Stream | null
  if (typeof channel === 'number') {
    stream = await ctx.prisma.stream.findUnique({ where: { id: channel } })
    if (!stream || stream.realmId !== ctx.realm.id) throw streamIdNotFound(channel)
  } else {
    // Archived channels keep their names (level 315): one named is refused as one given by ID.
    stream = await findStreamByName(ctx.prisma, ctx.realm.id, channel, { includeArchived: true })
    if (!stream) throw streamNameNotFound(channel.trim())
  }
  if (stream.deactivated) throw notAuthorizedToSendToChannel(stream.name)
  return stream
}

/**
 * Upstream's check_stream_access_based_on_can_send_message_group (level 333): the sender,
 * or a bot's owner, must hold the channel's can_send_message_group. An empty column is
 * role:everyone, which needs no look-up.
 */
async function checkCanSendMessageGroup(ctx: ActionContext, stream: Stream, owner: Owner | null): Promise<void> {
  const groupId = stream.canSendMessageGroupId
  if (groupId === null) return
  const config = STREAM_PERMISSION_SETTINGS.can_send_message_group
  const holds = async (user: Owner) => holdsGroupSetting(await getPermissionGroupIds(ctx.prisma, ctx.realm, user, ctx.now()), groupId, config, isGuest(user.role))
  if (await holds(ctx.user)) return
  if (owner && (await holds(owner))) return
  throw cannotPostInChannel()
}

async function isSubscribed(ctx: ActionContext, userId: number, streamId: number): Promise<boolean> {
  return (await ctx.prisma.subscription.count({ where: { userId, streamId, active: true } })) > 0
}

/** May anyone with this role post without a subscription? (upstream check_basic_stream_access, before the subscription) */
function openWithoutSubscription(user: Pick<User, 'role'>, stream: Stream): boolean {
  return stream.isWebPublic || (!stream.inviteOnly && user.role !== ROLE.GUEST)
}

/**
 * Level 354: a sender whose groups grant content access to a private channel with
 * shared history may post without subscribing (not through a bot's owner).
 */
async function postsThroughGroups(ctx: ActionContext, stream: Stream): Promise<boolean> {
  if (!stream.historyPublicToSubscribers || isGuest(ctx.user.role)) return false
  if (stream.canAddSubscribersGroupId === null && stream.canSubscribeGroupId === null) return false
  return (await groupGrantsOf(ctx.prisma, ctx.user))(stream).content
}

type Owner = Pick<User, 'id' | 'role' | 'dateJoined' | 'isActive'>

/** Throws unless the sender (or, for a bot, its owner) may post to the channel. */
export async function checkMaySendToStream(ctx: ActionContext, stream: Stream): Promise<void> {
  const sender = ctx.user
  const owner =
    sender.isBot && sender.botOwnerId !== null ? await ctx.prisma.user.findUnique({ where: { id: sender.botOwnerId } }) : null
  await checkCanSendMessageGroup(ctx, stream, owner)
  if (openWithoutSubscription(sender, stream) || (await isSubscribed(ctx, sender.id, stream.id))) return
  if (owner && owner.isActive && (openWithoutSubscription(owner, stream) || (await isSubscribed(ctx, owner.id, stream.id)))) return
  if (await postsThroughGroups(ctx, stream)) return
  throw notAuthorizedToSendToChannel(stream.name)
}

/**
 * checkMaySendToStream with what it reads already in hand: the sender's bot
 * owner (null for people) and the channel's active subscribers.
 */
export async function checkMaySendToStreamWith(ctx: ActionContext, stream: Stream, owner: Owner | null, subscribers: ReadonlySet<number>): Promise<void> {
  await checkCanSendMessageGroup(ctx, stream, owner)
  const access = (user: Pick<User, 'id' | 'role'>) => openWithoutSubscription(user, stream) || subscribers.has(user.id)
  if (owner && owner.isActive && access(owner)) return
  if (access(ctx.user)) return
  if (await postsThroughGroups(ctx, stream)) return
  throw notAuthorizedToSendToChannel(stream.name)
}

// ---------------------------------------------------------------------------
// Direct messages

/** The users named by `to`, active and in the realm; throws upstream's errors otherwise. */
export async function findDirectRecipients(ctx: ActionContext, to: number[] | string[]): Promise<User[]> {
  if (typeof to[0] === 'number') {
    const ids = to as number[]
    return matchDirectRecipients(to, await ctx.prisma.user.findMany({ where: { realmId: ctx.realm.id, id: { in: ids } } }), ctx.user)
  }
  const emails = to as string[]
  const scope = { realm_id: ctx.realm.id }
  const ids = [
    ...(await idsMatchingLower(ctx.prisma, 'user_email', scope, emails)),
    ...(await idsMatchingLower(ctx.prisma, 'user_delivery_email', scope, emails)),
  ].map((r) => r.id)
  const found = await ctx.prisma.user.findMany({ where: { id: { in: ids } }, include: { settings: { select: { emailAddressVisibility: true } } } })
  const users = matchDirectRecipients(
    to,
    found.map(({ settings, ...user }) => ({ ...user, emailAddressVisibility: settings?.emailAddressVisibility ?? EMAIL_VISIBILITY.EVERYONE })),
    ctx.user,
  )
  return users.map(({ emailAddressVisibility: _visibility, ...user }) => user)
}

type Candidate = Pick<User, 'id' | 'email' | 'deliveryEmail' | 'isActive' | 'isBot'> & { emailAddressVisibility?: number }

/**
 * `to` resolved against the realm's users matching it (by ID, or by API email
 * or, where the sender may see it, real address, case-insensitively): a hidden
 * address names no one, so that sending cannot test whether it is someone's.
 */
export function matchDirectRecipients<U extends Candidate>(to: number[] | string[], found: readonly U[], sender: Viewer): U[] {
  let users: U[]
  if (typeof to[0] === 'number') {
    const byId = new Map(found.map((u) => [u.id, u]))
    users = (to as number[]).map((id) => {
      const user = byId.get(id)
      if (!user) throw invalidUserId(id)
      return user
    })
  } else {
    users = (to as string[]).map((email) => {
      const e = email.toLowerCase()
      const user = found.find((u) => u.deliveryEmail.toLowerCase() === e && canSeeDeliveryEmail(sender, u)) ?? found.find((u) => u.email.toLowerCase() === e)
      if (!user) throw invalidEmailRecipient(email)
      return user
    })
  }
  for (const user of users) if (!user.isActive) throw recipientDeactivated(user.email)
  return users
}
