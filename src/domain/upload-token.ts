// Temporary upload URLs (upstream's GET /api/v1/user_uploads/… →
// /user_uploads/temporary/<token>/<filename>, valid for 60 seconds, no
// credentials needed). The token names the file, the user who asked and the
// expiry, signed with HMAC-SHA256 under that user's API key: every node can
// check it without shared state, and a new API key revokes the user's tokens.
import { createHmac, timingSafeEqual } from 'node:crypto'

/** Upstream's SIGNED_ACCESS_TOKEN_VALIDITY_IN_SECONDS. */
export const UPLOAD_TOKEN_VALIDITY_SECONDS = 60

export interface UploadTokenClaims {
  attachmentId: number
  userId: number
  /** UNIX seconds. */
  expires: number
}

// `<attachment id>.<user id>.<expiry>.<signature>`: short enough for one URL path segment.
const TOKEN = /^(\d{1,15})\.(\d{1,15})\.(\d{1,12})\.([A-Za-z0-9_-]{22})$/

/** 128 bits of HMAC-SHA256 over the claims. */
const sign = (claims: string, key: string): Buffer => createHmac('sha256', key).update(claims).digest().subarray(0, 16)

export function mintUploadToken(c: UploadTokenClaims, key: string): string {
  const claims = `${c.attachmentId}.${c.userId}.${c.expires}`
  return `${claims}.${sign(claims, key).toString('base64url')}`
}

/** The claims a token carries, unverified (to find the key), or undefined when it is not a token. */
export function readUploadToken(token: string): UploadTokenClaims | undefined {
  const m = TOKEN.exec(token)
  if (!m) return undefined
  return { attachmentId: Number(m[1]), userId: Number(m[2]), expires: Number(m[3]) }
}

/** Whether `token` was minted under `key` and has not expired at `now`. */
export function verifyUploadToken(token: string, key: string, now: Date): boolean {
  const claims = readUploadToken(token)
  if (!claims || claims.expires * 1000 < now.getTime()) return false
  const given = Buffer.from(token.slice(token.lastIndexOf('.') + 1), 'base64url')
  const expected = sign(token.slice(0, token.lastIndexOf('.')), key)
  return given.length === expected.length && timingSafeEqual(given, expected)
}
