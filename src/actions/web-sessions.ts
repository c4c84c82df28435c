// Browser sessions (docs/web-sessions.md): started by the login page, an
// accepted invitation or a confirmed email change; ended by logout, by the
// idle and absolute lifetimes, and revoked by a password change (the user's
// other sessions), a deactivation and `roost user revoke-sessions`. The
// cookie carries a random token and the table its SHA-256 only. No events:
// no client's register state holds sessions.
import { createHash, randomBytes } from 'node:crypto'
import type { Config } from '../config.js'
import type { PrismaClient, Tx } from '../db/index.js'

/** 256 random bits, base64url: the session cookie's value and the CSRF token alike (43 characters). */
export const SESSION_TOKEN_PATTERN = /^[A-Za-z0-9_-]{43}$/
const newToken = (): string => randomBytes(32).toString('base64url')

export const hashSessionToken = (token: string): string => createHash('sha256').update(token).digest('base64url')

export interface SessionLifetimes {
  config: Pick<Config, 'sessionIdleTimeoutSeconds' | 'sessionMaxAgeSeconds'>
  now: () => Date
}

export interface StartedWebSession {
  id: number
  /** Goes into the sessionid cookie; never stored. */
  token: string
  csrfToken: string
}

/** Starts a session for an authenticated user; drops that user's sessions that have already expired. */
export async function startWebSession(ctx: SessionLifetimes & { prisma: PrismaClient }, userId: number): Promise<StartedWebSession> {
  const now = ctx.now()
  const token = newToken()
  const csrfToken = newToken()
  const { idleCutoff, ageCutoff } = cutoffs(ctx, now)
  const [, row] = await ctx.prisma.$transaction([
    ctx.prisma.webSession.deleteMany({ where: { userId, OR: [{ lastSeenAt: { lte: idleCutoff } }, { createdAt: { lte: ageCutoff } }] } }),
    ctx.prisma.webSession.create({ data: { tokenHash: hashSessionToken(token), userId, csrfToken, createdAt: now, lastSeenAt: now }, select: { id: true } }),
  ])
  return { id: row.id, token, csrfToken }
}

/** The instants before which a session's last request (idle) or its start (absolute) means it has expired. */
export function cutoffs(ctx: SessionLifetimes, now: Date): { idleCutoff: Date; ageCutoff: Date } {
  return {
    idleCutoff: new Date(now.getTime() - ctx.config.sessionIdleTimeoutSeconds * 1000),
    ageCutoff: new Date(now.getTime() - ctx.config.sessionMaxAgeSeconds * 1000),
  }
}

/** Logout, or an expired session met on a request. */
export async function endWebSession(prisma: PrismaClient, sessionId: number): Promise<void> {
  await prisma.webSession.deleteMany({ where: { id: sessionId } })
}

/**
 * Ends every session of the users, except `keep` (the session that changed
 * the password). Runs in the caller's transaction when given one, so the
 * revocation commits with the change that caused it. Returns how many ended.
 */
export async function revokeWebSessions(db: PrismaClient | Tx, userIds: number[], keep?: number): Promise<number> {
  if (userIds.length === 0) return 0
  const { count } = await db.webSession.deleteMany({ where: { userId: { in: userIds }, ...(keep === undefined ? {} : { id: { not: keep } }) } })
  return count
}

/** How often a session's last_seen_at is written at most: the idle timeout is counted to about this precision. */
export const LAST_SEEN_RESOLUTION_MS = 60_000

/** Records a request of the session, unless one was recorded within the last minute (then writes nothing). */
export async function touchWebSession(prisma: PrismaClient, sessionId: number, now: Date): Promise<void> {
  await prisma.webSession.updateMany({ where: { id: sessionId, lastSeenAt: { lt: new Date(now.getTime() - LAST_SEEN_RESOLUTION_MS) } }, data: { lastSeenAt: now } })
}
