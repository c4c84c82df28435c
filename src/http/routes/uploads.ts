// Uploads: POST /api/v1/user_uploads (multipart, one file under any part
// name) and GET /user_uploads/{realm_id}/{path} (outside /api/v1, as the
// returned URL names it) for those allowed to read the file; GET
// /api/v1/user_uploads/{realm_id}/{path} mints a temporary URL,
// /user_uploads/temporary/{token}/{filename}, that needs no credentials.
import { Type } from 'typebox'
import { route } from '../route.js'
import { accessAttachment, readTemporaryUpload, temporaryUploadUrl, uploadFile } from '../../actions/upload-file.js'
import { fileNotFound } from '../../errors.js'
import type { Attachment } from '../../db/index.js'
import type { HandlerExtras } from '../route.js'
import type { Services } from '../../services.js'

// Shown in the browser; everything else downloads (an uploaded HTML page must never render on our origin).
const INLINE_TYPES = new Set([
  'image/png', 'image/jpeg', 'image/gif', 'image/webp', 'image/avif', 'image/bmp', 'image/tiff',
  'audio/mpeg', 'audio/ogg', 'audio/wav', 'audio/webm', 'audio/aac', 'audio/flac',
  'video/mp4', 'video/webm', 'video/ogg', 'video/quicktime',
  'application/pdf', 'text/plain',
])

function contentDisposition(type: string, fileName: string): string {
  const kind = INLINE_TYPES.has(type.split(';')[0]?.trim().toLowerCase() ?? '') ? 'inline' : 'attachment'
  return `${kind}; filename*=UTF-8''${encodeURIComponent(fileName)}`
}

async function sendAttachment(ctx: Services & HandlerExtras, attachment: Attachment): Promise<void> {
  const file = await ctx.storage.get(attachment.pathId)
  if (!file) throw fileNotFound()
  const type = attachment.contentType || file.contentType
  ctx.reply
    .header('Content-Type', type)
    .header('Content-Disposition', contentDisposition(type, attachment.fileName))
    .header('Cache-Control', 'private, immutable')
    .header('X-Content-Type-Options', 'nosniff')
    .send(file.data)
}

export const routes = [
  route({
    method: 'POST',
    url: '/user_uploads',
    handler: async (_input, ctx) => {
      const { url, filename } = await uploadFile(ctx, ctx.files)
      return { uri: url, url, filename }
    },
  }),
  route({
    method: 'GET',
    url: '/user_uploads/:realm_id/*',
    outsideApi: true,
    raw: true,
    params: { realm_id: Type.String(), '*': Type.String() },
    handler: async (input, ctx) => {
      if (input.realm_id !== String(ctx.realm.id)) throw fileNotFound()
      await sendAttachment(ctx, await accessAttachment(ctx, `${input.realm_id}/${input['*']}`))
    },
  }),
  route({
    method: 'GET',
    url: '/user_uploads/:realm_id/*',
    params: { realm_id: Type.String(), '*': Type.String() },
    handler: async (input, ctx) => {
      if (input.realm_id !== String(ctx.realm.id)) throw fileNotFound()
      return { url: await temporaryUploadUrl(ctx, `${input.realm_id}/${input['*']}`) }
    },
  }),
  route({
    method: 'GET',
    url: '/user_uploads/temporary/:token/*',
    outsideApi: true,
    raw: true,
    auth: 'none',
    params: { token: Type.String(), '*': Type.String() },
    handler: async (input, ctx) => {
      await sendAttachment(ctx, await readTemporaryUpload(ctx, input.token))
    },
  }),
]
