// POST/DELETE /default_streams (upstream zerver/views/streams.py
// add_default_stream / remove_default_stream, zerver/actions/default_streams.py):
// administrators choose the channels new users join; every non-guest's
// clients get the new list in a `default_streams` event.
import { defaultStreamsEvent } from '../events/schemas/index.js'
import type { PrismaClient, Realm, Stream, Tx } from '../db/index.js'
import { getStreamGroupContext } from '../queries/stream-permissions.js'
import type { ActionContext, Emit, TxContext } from './context.js'
import { inTransaction } from './context.js'
import { mustBeAdmin, invalidStreamId, privateStreamCannotBeDefault } from '../errors.js'
import { isAdmin, isGuest } from '../domain/roles.js'
import { canAccessStreamContent, canSeeStreamMetadata } from '../domain/stream-access.js'
import { presentStream, sortByName } from '../present/stream.js'
import { getDefaultStreamIds } from '../queries/streams.js'

/** The realm's default channels as channel objects, sorted by name. */
export async function getDefaultStreams(db: Tx | PrismaClient, realmId: number): Promise<ReturnType<typeof presentStream>[]> {
  const rows = await db.defaultStream.findMany({ where: { realmId, stream: { deactivated: false } }, include: { stream: true } })
  const groups = await getStreamGroupContext(db, realmId, rows.map((d) => d.stream))
  return sortByName(rows.map((d) => presentStream(d.stream, groups)))
}

/** Tells every active non-guest user the current list (guests have no default channels). */
export async function emitDefaultStreams(tx: Tx, emit: Emit, realm: Realm): Promise<void> {
  const users = await tx.user.findMany({ where: { realmId: realm.id, isActive: true }, select: { id: true, role: true } })
  emit(defaultStreamsEvent(await getDefaultStreamIds(tx, realm.id)), users.filter((u) => !isGuest(u.role)).map((u) => u.id))
}

/** Adds or removes the default-channel row; true when something changed. */
export async function setDefaultStream(tx: Tx, realm: Realm, stream: Stream, isDefault: boolean): Promise<boolean> {
  if (isDefault) {
    const inserted = await tx.$executeRaw`
      INSERT INTO default_stream (realm_id, stream_id) VALUES (${realm.id}, ${stream.id}) ON CONFLICT (realm_id, stream_id) DO NOTHING`
    return inserted > 0
  }
  const { count } = await tx.defaultStream.deleteMany({ where: { realmId: realm.id, streamId: stream.id } })
  return count > 0
}

async function accessForDefault(tx: Tx, ctx: TxContext, streamId: number, requireContent: boolean): Promise<Stream> {
  if (!isAdmin(ctx.user.role)) throw mustBeAdmin()
  const stream = await tx.stream.findUnique({ where: { id: streamId } })
  if (!stream || stream.realmId !== ctx.realm.id || stream.deactivated) throw invalidStreamId()
  const subscribed = (await tx.subscription.count({ where: { userId: ctx.user.id, streamId, active: true } })) > 0
  const visible = requireContent ? canAccessStreamContent(ctx.user, stream, subscribed) : canSeeStreamMetadata(ctx.user, stream, subscribed)
  if (!visible) throw invalidStreamId()
  return stream
}

export async function addDefaultStream(ctx: ActionContext, streamId: number): Promise<void> {
  await inTransaction(ctx, async (tx, emit) => {
    const stream = await accessForDefault(tx, ctx, streamId, true)
    if (stream.inviteOnly) throw privateStreamCannotBeDefault()
    if (await setDefaultStream(tx, ctx.realm, stream, true)) await emitDefaultStreams(tx, emit, ctx.realm)
  })
}

export async function removeDefaultStream(ctx: ActionContext, streamId: number): Promise<void> {
  await inTransaction(ctx, async (tx, emit) => {
    const stream = await accessForDefault(tx, ctx, streamId, false)
    if (await setDefaultStream(tx, ctx.realm, stream, false)) await emitDefaultStreams(tx, emit, ctx.realm)
  })
}
