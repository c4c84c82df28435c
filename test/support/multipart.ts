// multipart/form-data requests, the way zulip-js and the mobile app send
// files, and a few tiny real images.
import type { FastifyInstance, LightMyRequestResponse } from 'fastify'
import type { User } from '../../src/db/index.js'
import { basicAuth } from './client.js'

export interface Part {
  name: string
  fileName?: string
  contentType?: string
  data: Buffer | string
}

export function multipart(parts: Part[]): { body: Buffer; contentType: string } {
  const boundary = `----roost${Math.random().toString(16).slice(2)}`
  const chunks: Buffer[] = []
  for (const part of parts) {
    const disposition = `form-data; name="${part.name}"${part.fileName !== undefined ? `; filename="${part.fileName}"` : ''}`
    const head = `--${boundary}\r\nContent-Disposition: ${disposition}\r\n${part.fileName !== undefined ? `Content-Type: ${part.contentType ?? 'application/octet-stream'}\r\n` : ''}\r\n`
    chunks.push(Buffer.from(head), Buffer.isBuffer(part.data) ? part.data : Buffer.from(part.data), Buffer.from('\r\n'))
  }
  chunks.push(Buffer.from(`--${boundary}--\r\n`))
  return { body: Buffer.concat(chunks), contentType: `multipart/form-data; boundary=${boundary}` }
}

export const hostOf = (user: Pick<User, 'deliveryEmail'>): string => `${(user.deliveryEmail.split('@')[1] ?? '').replace('.example.com', '')}.localhost`

/** `method` `/api/v1{path}` as `user` with a multipart body. */
export function sendMultipart(app: FastifyInstance, user: Pick<User, 'deliveryEmail' | 'apiKey'>, method: 'POST' | 'PATCH', path: string, parts: Part[]): Promise<LightMyRequestResponse> {
  const { body, contentType } = multipart(parts)
  return app.inject({
    method,
    url: `/api/v1${path}`,
    headers: { authorization: basicAuth(user.deliveryEmail, user.apiKey), host: hostOf(user), 'content-type': contentType },
    payload: body,
  })
}

/** A 1×1 transparent PNG. */
export const TINY_PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==',
  'base64',
)
/** A 1×1 GIF. */
export const TINY_GIF = Buffer.from('R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7', 'base64')
