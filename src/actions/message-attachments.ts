// Links a message to the uploads its content references, so that the
// message's readers may fetch them (storage access rules in actions/upload-file.ts).
import type { Tx } from '../db/index.js'
import { presentAttachment, type AttachmentDict } from '../queries/attachments.js'

export interface ClaimAttachmentsInput {
  realmId: number
  senderId: number
  messageId: number
  /** Path ids linked from the rendered content (RenderResult.linkedUploadPaths). */
  paths: string[]
}

/** Only the sender's own uploads are claimed: linking someone else's file grants nothing. */
export async function claimAttachments(tx: Tx, input: ClaimAttachmentsInput): Promise<number[]> {
  if (input.paths.length === 0) return []
  const owned = await tx.attachment.findMany({
    where: { realmId: input.realmId, ownerId: input.senderId, pathId: { in: input.paths } },
    select: { id: true },
  })
  if (owned.length === 0) return []
  await tx.attachmentMessage.createMany({
    data: owned.map((a) => ({ attachmentId: a.id, messageId: input.messageId })),
    skipDuplicates: true,
  })
  return owned.map((a) => a.id)
}

/**
 * After a content edit (upstream check_attachment_reference_change): the
 * message stops linking the uploads its new content no longer references, and
 * those of the sender's that no message links any more are returned, for the
 * edit's `detached_uploads` (upstream level 285). Their files stay, reachable
 * by the sender and named in the edit history.
 */
export async function unlinkUnreferencedAttachments(
  tx: Tx,
  input: { messageId: number; senderId: number; keepPaths: string[] },
): Promise<AttachmentDict[]> {
  const linked = await tx.attachmentMessage.findMany({ where: { messageId: input.messageId }, select: { attachmentId: true, attachment: { select: { pathId: true } } } })
  const keep = new Set(input.keepPaths)
  const removed = linked.filter((l) => !keep.has(l.attachment.pathId)).map((l) => l.attachmentId)
  if (removed.length === 0) return []
  await tx.attachmentMessage.deleteMany({ where: { messageId: input.messageId, attachmentId: { in: removed } } })
  const detached = await tx.attachment.findMany({
    where: { id: { in: removed }, ownerId: input.senderId, messages: { none: {} } },
    orderBy: { id: 'asc' },
  })
  return detached.map((a) => presentAttachment(a, []))
}
