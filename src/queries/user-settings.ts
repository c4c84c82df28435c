// Register key `user_settings`: every setting in wire form plus timezone and
// the choice lists (the object itself is built by register-settings.ts; this
// reads the row).
import type { PrismaClient, User } from '../db/index.js'
import { userSettingsState } from './register-settings.js'

export async function fetchUserSettingsState(prisma: PrismaClient, user: Pick<User, 'id' | 'timezone'>): Promise<Record<string, unknown>> {
  const settings = await prisma.userSettings.findUnique({ where: { userId: user.id } })
  return userSettingsState(settings, user.timezone)
}
