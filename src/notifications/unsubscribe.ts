// Unsubscribe links of missed-message emails (upstream
// /accounts/unsubscribe/missed_messages/<token>): they work without logging
// in. The token is `<user id>.<HMAC-SHA256 of the purpose and user id, keyed
// by the user's API key>`: every node can check it with no shared secret
// beyond the database, and regenerating the API key revokes old links.
import { createHmac, timingSafeEqual } from 'node:crypto'

const PURPOSE = 'missed_messages'

const mac = (userId: number, apiKey: string): string => createHmac('sha256', apiKey).update(`${PURPOSE}:${userId}`).digest('base64url')

export function unsubscribeToken(user: { id: number; apiKey: string }): string {
  return `${user.id}.${mac(user.id, user.apiKey)}`
}

export const unsubscribePath = (token: string): string => `/accounts/unsubscribe/missed_messages/${token}`

/** The user ID a token names; check it with tokenMatches() against that user's key. */
export function tokenUserId(token: string): number | null {
  const m = /^(\d{1,10})\.[A-Za-z0-9_-]{43}$/.exec(token)
  return m ? Number(m[1]) : null
}

export function tokenMatches(token: string, user: { id: number; apiKey: string }): boolean {
  const expected = Buffer.from(unsubscribeToken(user))
  const given = Buffer.from(token)
  return expected.length === given.length && timingSafeEqual(expected, given)
}
