// POST /user_uploads: one file, stored under an unguessable path, recorded as
// an Attachment of the uploader. Reading it back: the uploader, or anyone who
// can read a message that links it (upstream's validate_attachment_request).
import { randomBytes } from 'node:crypto'
import type { Attachment, User } from '../db/index.js'
import type { UploadedFile } from '../http/route.js'
import { inTransaction, type ActionContext } from './context.js'
import { fileAccessDenied, fileNotFound, noFileUploaded, tooManyFilesUploaded, uploadTooLarge } from '../errors.js'
import { isGuest } from '../domain/roles.js'
import type { ChatEvent } from '../events/bus.js'

const MIB = 1024 * 1024

/** Upstream's sanitize_name: NFKC, only word characters, spaces, dots and dashes; runs of spaces/dashes become one dash. */
export function sanitizeFileName(name: string): string {
  const value = name
    .normalize('NFKC')
    .replace(/[^\p{L}\p{N}\p{M}_\s.-]/gu, '')
    .trim()
    .replace(/[-\s]+/g, '-')
  return value === '' || value === '.' || value === '..' ? 'uploaded-file' : value
}

export interface UploadResult {
  url: string
  attachment: Attachment
}

const attachmentEvent = (attachment: Attachment, uploadSpaceUsed: number): ChatEvent => ({
  type: 'attachment',
  op: 'add',
  attachment: {
    id: attachment.id,
    name: attachment.fileName,
    path_id: attachment.pathId,
    size: attachment.size,
    create_time: attachment.createdAt.getTime(),
    messages: [],
  },
  upload_space_used: uploadSpaceUsed,
})

export async function uploadFile(ctx: ActionContext, files: UploadedFile[]): Promise<UploadResult> {
  if (files.length === 0) throw noFileUploaded()
  if (files.length > 1) throw tooManyFilesUploaded()
  const file = files[0] as UploadedFile
  const limitMib = Math.min(ctx.realm.maxFileUploadSizeMib ?? ctx.config.maxFileUploadSizeMib, ctx.config.maxFileUploadSizeMib)
  if (file.data.length > limitMib * MIB) throw uploadTooLarge(limitMib)

  const name = sanitizeFileName(file.fileName || '')
  const token = randomBytes(18).toString('base64url')
  const bucket = randomBytes(1).toString('hex')
  const pathId = `${ctx.realm.id}/${bucket}/${token}/${name}`
  const contentType = file.contentType || 'application/octet-stream'
  await ctx.storage.put(pathId, file.data, contentType)
  const attachment = await inTransaction(ctx, async (tx, emit) => {
    const row = await tx.attachment.create({
      data: { realmId: ctx.realm.id, ownerId: ctx.user.id, fileName: name, pathId, size: file.data.length, contentType, createdAt: ctx.now() },
    })
    const used = await tx.attachment.aggregate({ where: { realmId: ctx.realm.id }, _sum: { size: true } })
    emit(attachmentEvent(row, used._sum.size ?? 0), [ctx.user.id])
    return row
  })
  return { url: `/user_uploads/${ctx.realm.id}/${bucket}/${token}/${encodeURIComponent(name)}`, attachment }
}

/**
 * The attachment at `pathId` if `user` may read it: the uploader; or a message
 * linking it that the user received, that sits in a public channel (not for
 * guests), or in a channel with shared history the user is subscribed to.
 */
export async function accessAttachment(ctx: Pick<ActionContext, 'prisma'> & { user: User }, pathId: string): Promise<Attachment> {
  const attachment = await ctx.prisma.attachment.findUnique({ where: { pathId } })
  if (!attachment || attachment.realmId !== ctx.user.realmId) throw fileNotFound()
  if (attachment.ownerId === ctx.user.id) return attachment
  const userId = ctx.user.id
  const linked = await ctx.prisma.attachmentMessage.findFirst({
    where: {
      attachmentId: attachment.id,
      message: {
        realmId: ctx.user.realmId,
        OR: [
          { userMessages: { some: { userId } } },
          ...(isGuest(ctx.user.role) ? [] : [{ stream: { inviteOnly: false, deactivated: false } }]),
          { stream: { historyPublicToSubscribers: true, deactivated: false, subscriptions: { some: { userId, active: true } } } },
        ],
      },
    },
  })
  if (!linked) throw fileAccessDenied()
  return attachment
}
