// POST /user_uploads: one file, stored under an unguessable path, recorded as
// an Attachment of the uploader. Reading it back: the uploader, or anyone who
// can read a message that links it (upstream's validate_attachment_request).
import { randomBytes } from 'node:crypto'
import type { Attachment, User } from '../db/index.js'
import type { UploadedFile } from '../storage/file-storage.js'
import { inTransaction, type ActionContext } from './context.js'
import { fileAccessDenied, fileNotFound, noFileUploaded, tooManyFilesUploaded, uploadTooLarge } from '../errors.js'
import { isGuest } from '../domain/roles.js'
import { mintUploadToken, readUploadToken, UPLOAD_TOKEN_VALIDITY_SECONDS, verifyUploadToken } from '../domain/upload-token.js'
import { attachmentEvent, type BuiltEvent } from '../events/schemas/index.js'

const MIB = 1024 * 1024

/** Upstream's MAX_FILE_NAME_LENGTH: the sanitized name is the last component of the stored path (255 bytes on Linux file systems). */
export const MAX_FILE_NAME_BYTES = 255

/** Upstream's truncate_file_name: at most maxBytes of UTF-8, keeping the extension when it leaves room for the rest. */
export function truncateFileName(name: string, maxBytes: number): string {
  if (Buffer.byteLength(name) <= maxBytes) return name
  const dot = name.lastIndexOf('.')
  // os.path.splitext: a leading dot (".bashrc") is not an extension.
  let stem = dot > 0 ? name.slice(0, dot) : name
  let extension = dot > 0 ? name.slice(dot) : ''
  if (Buffer.byteLength(extension) >= maxBytes) [stem, extension] = [name, '']
  const room = maxBytes - Buffer.byteLength(extension)
  // Cutting the bytes can split a character: the partial character is dropped.
  return Buffer.from(stem).subarray(0, room).toString('utf8').replace(/\uFFFD+$/u, '') + extension
}

/** Upstream's sanitize_name: NFKC, only word characters, spaces, dots and dashes; runs of spaces/dashes become one dash; at most 255 bytes. */
export function sanitizeFileName(name: string): string {
  const value = truncateFileName(
    name
      .normalize('NFKC')
      .replace(/[^\p{L}\p{N}\p{M}_\s.-]/gu, '')
      .trim()
      .replace(/[-\s]+/g, '-'),
    MAX_FILE_NAME_BYTES,
  )
  return value === '' || value === '.' || value === '..' ? 'uploaded-file' : value
}

/** A part's declared type, if it is a plausible MIME type (a NUL or a huge value cannot be stored or served). */
function storableContentType(type: string): string {
  return type && type.length <= 255 && /^[\x21-\x7e][\x20-\x7e]*$/.test(type) ? type : 'application/octet-stream'
}

export interface UploadResult {
  url: string
  /** The name the client gave the file, percent-decoded as upstream's `unquote` (level 286); the URL ends with its sanitized form. */
  filename: string
  attachment: Attachment
}

/** Upstream's `unquote` of the part's file name; a malformed escape is left as it is. */
function uploadedFileName(raw: string): string {
  return raw.replace(/(?:%[0-9a-fA-F]{2})+/g, (run) => {
    try {
      return decodeURIComponent(run)
    } catch {
      return run
    }
  })
}

const attachmentAddEvent = (attachment: Attachment, uploadSpaceUsed: number): BuiltEvent =>
  attachmentEvent('add', {
    id: attachment.id,
    name: attachment.fileName,
    path_id: attachment.pathId,
    size: attachment.size,
    create_time: attachment.createdAt.getTime(),
    messages: [],
  }, uploadSpaceUsed)

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
  const contentType = storableContentType(file.contentType)
  await ctx.storage.put(pathId, file.data, contentType)
  let attachment: Attachment
  try {
    attachment = await inTransaction(ctx, async (tx, emit) => {
      const row = await tx.attachment.create({
        data: { realmId: ctx.realm.id, ownerId: ctx.user.id, fileName: name, pathId, size: file.data.length, contentType, createdAt: ctx.now() },
      })
      const used = await tx.attachment.aggregate({ where: { realmId: ctx.realm.id }, _sum: { size: true } })
      emit(attachmentAddEvent(row, used._sum.size ?? 0), [ctx.user.id])
      return row
    })
  } catch (error) {
    // No file without its row.
    await ctx.storage.delete(pathId).catch((cleanup: unknown) => ctx.log.warn({ err: cleanup, path_id: pathId }, 'could not remove an unrecorded upload'))
    throw error
  }
  const filename = file.fileName ? uploadedFileName(file.fileName) : name
  return { url: `/user_uploads/${ctx.realm.id}/${bucket}/${token}/${encodeURIComponent(name)}`, filename, attachment }
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

/** GET /api/v1/user_uploads/{path}: a URL for the file that works without credentials for a minute, for those who may read it. */
export async function temporaryUploadUrl(ctx: ActionContext, pathId: string): Promise<string> {
  const attachment = await accessAttachment(ctx, pathId)
  const expires = Math.floor(ctx.now().getTime() / 1000) + UPLOAD_TOKEN_VALIDITY_SECONDS
  const token = mintUploadToken({ attachmentId: attachment.id, userId: ctx.user.id, expires }, ctx.user.apiKey)
  return `/user_uploads/temporary/${token}/${encodeURIComponent(attachment.fileName)}`
}

/** The attachment a temporary URL's token names, if the token is genuine, unexpired, of this realm and its user still active. */
export async function readTemporaryUpload(ctx: Pick<ActionContext, 'prisma' | 'realm' | 'now'>, token: string): Promise<Attachment> {
  const claims = readUploadToken(token)
  if (!claims) throw fileNotFound()
  const user = await ctx.prisma.user.findFirst({ where: { id: claims.userId, realmId: ctx.realm.id, isActive: true }, select: { apiKey: true } })
  if (!user || !verifyUploadToken(token, user.apiKey, ctx.now())) throw fileNotFound()
  const attachment = await ctx.prisma.attachment.findUnique({ where: { id: claims.attachmentId } })
  if (!attachment || attachment.realmId !== ctx.realm.id) throw fileNotFound()
  return attachment
}
