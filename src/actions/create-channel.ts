// Creating a channel with no subscribers (upstream's create_stream_if_needed,
// as its create_stream management command uses it): the same name rules and
// creation permissions as POST /users/me/subscriptions, and `stream` `create`
// to everyone who may see the new channel. A name already used by a channel
// of the organization (exactly, case-insensitively; archived ones included)
// is refused.
import type { Stream } from '../db/index.js'
import type { ActionContext } from './context.js'
import { inTransaction } from './context.js'
import { idsMatchingLower } from '../db/exact-match.js'
import { checkCanCreateStreams, checkStreamName, insertStreams, type NewStreamOptions } from './create-streams.js'
import { streamCreateEvent } from '../events/schemas/index.js'
import { presentStream } from '../present/stream.js'
import { getStreamGroupContext, metadataGranteesByStream } from '../queries/stream-permissions.js'
import { isAdmin, isGuest } from '../domain/roles.js'
import { notAllowedForGuests, streamNameInUse, textTooLong } from '../errors.js'
import { MAX_STREAM_DESCRIPTION_LENGTH } from '../domain/limits.js'

export interface CreateChannelInput {
  name: string
  description?: string
  inviteOnly: boolean
}

export async function createChannel(ctx: ActionContext, input: CreateChannelInput): Promise<Stream> {
  if (isGuest(ctx.user.role)) throw notAllowedForGuests()
  const name = input.name.trim()
  checkStreamName(name)
  const description = (input.description ?? '').replace(/\n/g, ' ')
  if ([...description].length > MAX_STREAM_DESCRIPTION_LENGTH) throw textTooLong('description', MAX_STREAM_DESCRIPTION_LENGTH)
  const options: NewStreamOptions = { inviteOnly: input.inviteOnly, isWebPublic: false, isDefaultStream: false, messageRetentionDays: null, groupSettings: {} }
  return inTransaction(ctx, async (tx, emit) => {
    if ((await idsMatchingLower(tx, 'stream_name', { realm_id: ctx.realm.id }, [name])).length > 0) throw streamNameInUse()
    await checkCanCreateStreams(tx, ctx.realm, ctx.user, options, ctx.now())
    const [stream] = await insertStreams(tx, ctx.realm, ctx.user, [{ name, description }], options, ctx.now())
    const created = stream as Stream
    const users = await tx.user.findMany({ where: { realmId: ctx.realm.id, isActive: true }, select: { id: true, role: true }, orderBy: { id: 'asc' } })
    const grantees = (await metadataGranteesByStream(tx, ctx.realm.id, [created])).get(created.id) ?? new Set<number>()
    const audience = users.filter((u) => (created.inviteOnly ? isAdmin(u.role) || grantees.has(u.id) : !isGuest(u.role))).map((u) => u.id)
    emit(streamCreateEvent([presentStream(created, await getStreamGroupContext(tx, ctx.realm.id, [created]))]), audience)
    return created
  })
}
