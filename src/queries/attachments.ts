// GET /attachments: the user's uploads with the messages that reference
// them, and the realm's upload_space_used (upstream's user_attachments and
// currently_used_upload_space_bytes). Two statements, whatever the count.
import type { Attachment, PrismaClient, Tx } from '../db/index.js'

export interface AttachmentDict {
  id: number
  name: string
  path_id: string
  size: number
  /** Milliseconds, like JavaScript's getTime(). */
  create_time: number
  messages: { id: number; date_sent: number }[]
}

export function presentAttachment(a: Pick<Attachment, 'id' | 'fileName' | 'pathId' | 'size' | 'createdAt'>, messages: AttachmentDict['messages']): AttachmentDict {
  return { id: a.id, name: a.fileName, path_id: a.pathId, size: a.size, create_time: a.createdAt.getTime(), messages }
}

/** Bytes of all files uploaded in the realm. */
export async function uploadSpaceUsed(db: PrismaClient | Tx, realmId: number): Promise<number> {
  const used = await db.attachment.aggregate({ where: { realmId }, _sum: { size: true } })
  return used._sum.size ?? 0
}

/** The owner's uploads (all, or those with the given IDs) with the messages that link them. */
export async function ownedAttachments(db: PrismaClient | Tx, realmId: number, ownerId: number, ids?: readonly number[]): Promise<AttachmentDict[]> {
  const rows = await db.attachment.findMany({
    where: { ownerId, realmId, ...(ids ? { id: { in: [...ids] } } : {}) },
    orderBy: { id: 'asc' },
    include: { messages: { select: { message: { select: { id: true, dateSent: true } } }, orderBy: { messageId: 'asc' } } },
  })
  return rows.map((a) => presentAttachment(a, a.messages.map(({ message }) => ({ id: message.id, date_sent: message.dateSent.getTime() }))))
}

export async function getAttachments(prisma: PrismaClient, realmId: number, ownerId: number): Promise<{ attachments: AttachmentDict[]; upload_space_used: number }> {
  return { attachments: await ownedAttachments(prisma, realmId, ownerId), upload_space_used: await uploadSpaceUsed(prisma, realmId) }
}
