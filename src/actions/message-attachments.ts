// Links a message to the uploads its content references, so that the
// message's readers may fetch them (storage access rules in actions/upload-file.ts).
import type { Tx } from '../db/index.js'

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
