// Uploads: POST /api/v1/user_uploads (multipart, one file under any part
// name) and GET /user_uploads/{realm_id}/{path} (outside /api/v1, as the
// returned URL names it) for those allowed to read the file.
import { Type } from 'typebox'
import { route } from '../route.js'
import { accessAttachment, uploadFile } from '../../actions/upload-file.js'
import { fileNotFound } from '../../errors.js'

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

export const routes = [
  route({
    method: 'POST',
    url: '/user_uploads',
    handler: async (_input, ctx) => {
      const { url } = await uploadFile(ctx, ctx.files)
      return { uri: url, url }
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
      const attachment = await accessAttachment(ctx, `${input.realm_id}/${input['*']}`)
      const file = await ctx.storage.get(attachment.pathId)
      if (!file) throw fileNotFound()
      const type = attachment.contentType || file.contentType
      ctx.reply
        .header('Content-Type', type)
        .header('Content-Disposition', contentDisposition(type, attachment.fileName))
        .header('Cache-Control', 'private, immutable')
        .header('X-Content-Type-Options', 'nosniff')
        .send(file.data)
    },
  }),
]
