// Links a message to the uploads its content references, so that the
// message's readers may fetch them (storage access rules in actions/upload-file.ts).
import { Prisma, type PrismaClient, type Tx } from '../db/index.js'
import { attachmentEvent, type BuiltEvent } from '../events/schemas/index.js'
import { ownedAttachments, presentAttachment, uploadSpaceUsed, type AttachmentDict } from '../queries/attachments.js'

export interface ClaimAttachmentsInput {
  realmId: number
  senderId: number
  messageId: number
  /** Path ids linked from the rendered content (RenderResult.linkedUploadPaths). */
  paths: string[]
}

/**
 * Only the sender's own uploads are claimed: linking someone else's file
 * grants nothing. Returns the IDs of the uploads the message did not link
 * before.
 */
export async function claimAttachments(tx: Tx, input: ClaimAttachmentsInput): Promise<number[]> {
  if (input.paths.length === 0) return []
  const linked = await tx.$queryRaw<{ attachment_id: number }[]>(Prisma.sql`
    INSERT INTO attachment_message (attachment_id, message_id)
    SELECT a.id, ${input.messageId}::int FROM attachment a
    WHERE a.realm_id = ${input.realmId}::int AND a.owner_id = ${input.senderId}::int AND a.path_id = ANY(${input.paths}::text[])
    ON CONFLICT DO NOTHING
    RETURNING attachment_id`)
  return linked.map((row) => Number(row.attachment_id))
}

/**
 * `attachment` `update` events for the owner's uploads whose linking messages
 * changed (upstream's notify_attachment_update after a claim), each with the
 * upload's messages as they now are. None for an empty list.
 */
export async function attachmentUpdateEvents(db: PrismaClient | Tx, realmId: number, ownerId: number, ids: readonly number[]): Promise<BuiltEvent[]> {
  if (ids.length === 0) return []
  const attachments = await ownedAttachments(db, realmId, ownerId, ids)
  if (attachments.length === 0) return []
  const used = await uploadSpaceUsed(db, realmId)
  return attachments.map((attachment) => attachmentEvent('update', attachment, used))
}

/**
 * After a content edit (upstream check_attachment_reference_change): the
 * message stops linking the uploads its new content no longer references, and
 * those of the sender's that no message links any more are returned, for the
 * edit's `detached_uploads` (upstream level 285), with the IDs of all the
 * uploads it stopped linking. Their files stay, reachable
 * by the sender and named in the edit history.
 */
export async function unlinkUnreferencedAttachments(
  tx: Tx,
  input: { messageId: number; senderId: number; keepPaths: string[] },
): Promise<{ detached: AttachmentDict[]; unlinked: number[] }> {
  const linked = await tx.attachmentMessage.findMany({ where: { messageId: input.messageId }, select: { attachmentId: true, attachment: { select: { pathId: true } } } })
  const keep = new Set(input.keepPaths)
  const removed = linked.filter((l) => !keep.has(l.attachment.pathId)).map((l) => l.attachmentId)
  if (removed.length === 0) return { detached: [], unlinked: [] }
  await tx.attachmentMessage.deleteMany({ where: { messageId: input.messageId, attachmentId: { in: removed } } })
  const detached = await tx.attachment.findMany({
    where: { id: { in: removed }, ownerId: input.senderId, messages: { none: {} } },
    orderBy: { id: 'asc' },
  })
  return { detached: detached.map((a) => presentAttachment(a, [])), unlinked: removed }
}
