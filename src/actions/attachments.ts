// DELETE /attachments/{attachment_id} (upstream views/attachments.py): the
// owner removes one of their uploads; the file goes, the row and its message
// links go, and the owner's clients get an `attachment` remove event.
import type { ActionContext } from './context.js'
import { inTransaction } from './context.js'
import { invalidAttachment } from '../errors.js'
import { uploadSpaceUsed } from '../queries/attachments.js'
import { attachmentRemoveEvent } from '../events/schemas/index.js'

export async function removeAttachment(ctx: ActionContext, attachmentId: number): Promise<void> {
  const attachment = await ctx.prisma.attachment.findFirst({ where: { id: attachmentId, ownerId: ctx.user.id, realmId: ctx.realm.id } })
  if (!attachment) throw invalidAttachment()
  await ctx.storage.delete(attachment.pathId)
  await inTransaction(ctx, async (tx, emit) => {
    const { count } = await tx.attachment.deleteMany({ where: { id: attachment.id } })
    if (count === 0) return
    emit(attachmentRemoveEvent(attachment.id, await uploadSpaceUsed(tx, ctx.realm.id)), [ctx.user.id])
  })
}
