// Register key `user_settings`: every setting in wire form plus timezone and
// the choice lists (the object itself is built by register-settings.ts; this
// reads the row).
import type { PrismaClient, Tx, User } from '../db/index.js'
import { INHERITED_STREAM_NOTIFICATIONS, streamNotificationDefaults, type StreamNotificationDefaults } from '../domain/stream-notifications.js'
import { userSettingsState } from './register-settings.js'

export async function fetchUserSettingsState(prisma: PrismaClient, user: Pick<User, 'id' | 'timezone'>): Promise<Record<string, unknown>> {
  const settings = await prisma.userSettings.findUnique({ where: { userId: user.id } })
  return userSettingsState(settings, user.timezone)
}

/** Each user's global defaults for null per-subscription notification settings, keyed by user ID. */
export async function getStreamNotificationDefaults(db: PrismaClient | Tx, userIds: number[]): Promise<Map<number, StreamNotificationDefaults>> {
  const columns = Object.fromEntries(INHERITED_STREAM_NOTIFICATIONS.map((n) => [n.column, true])) as Record<(typeof INHERITED_STREAM_NOTIFICATIONS)[number]['column'], true>
  const rows = userIds.length === 0 ? [] : await db.userSettings.findMany({ where: { userId: { in: userIds } }, select: { userId: true, ...columns } })
  const byUser = new Map(rows.map((r) => [r.userId, r]))
  return new Map(userIds.map((id) => [id, streamNotificationDefaults(byUser.get(id))]))
}
