// The one statement a session-authenticated request runs (docs/web-sessions.md):
// the session by its token's hash, with the API key of its user, through
// which the authentication cache answers the user and realm rows.
import { fastRead } from '../db/fast-read.js'
import type { PrismaClient } from '../db/index.js'

export interface WebSessionRow {
  id: number
  userId: number
  csrfToken: string
  createdAt: Date
  lastSeenAt: Date
  apiKey: string
}

export async function findWebSession(prisma: PrismaClient, tokenHash: string): Promise<WebSessionRow | null> {
  const rows = await fastRead<{ id: number; user_id: number; csrf_token: string; created_at: Date | string; last_seen_at: Date | string; api_key: string }>(
    prisma,
    'web_session_by_token',
    `SELECT s.id, s.user_id, s.csrf_token, s.created_at, s.last_seen_at, u.api_key
     FROM web_session s JOIN user_profile u ON u.id = s.user_id
     WHERE s.token_hash = $1`,
    [tokenHash],
  )
  const row = rows[0]
  if (!row) return null
  return {
    id: row.id,
    userId: row.user_id,
    csrfToken: row.csrf_token,
    createdAt: new Date(row.created_at),
    lastSeenAt: new Date(row.last_seen_at),
    apiKey: row.api_key,
  }
}
