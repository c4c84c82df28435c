// User statuses as the API reads them: GET /users/{id}/status and the
// register `user_status` key (user ID string → status object, set ones only).
import type { PrismaClient, User } from '../db/index.js'
import { noSuchUser, principalDeactivated } from '../errors.js'
import { presentUserStatus, type StatusDict } from '../domain/user-status.js'

/** GET /users/{id}/status for a user the requester may access. */
export async function getUserStatus(prisma: PrismaClient, target: User): Promise<StatusDict> {
  if (target.isBot) throw noSuchUser()
  if (!target.isActive) throw principalDeactivated()
  const [status, settings] = await Promise.all([
    prisma.userStatus.findUnique({ where: { userId: target.id } }),
    prisma.userSettings.findUnique({ where: { userId: target.id }, select: { presenceEnabled: true } }),
  ])
  return presentUserStatus(status, settings?.presenceEnabled ?? true)
}

/** Register key `user_status`: every active user of the realm with a status or `away`. */
export async function fetchUserStatuses(prisma: PrismaClient, realmId: number): Promise<Record<string, StatusDict>> {
  const users = await prisma.user.findMany({
    where: {
      realmId,
      isActive: true,
      OR: [{ status: { isNot: null } }, { settings: { presenceEnabled: false } }],
    },
    select: { id: true, status: true, settings: { select: { presenceEnabled: true } } },
    orderBy: { id: 'asc' },
  })
  const out: Record<string, StatusDict> = {}
  for (const u of users) {
    const dict = presentUserStatus(u.status, u.settings?.presenceEnabled ?? true)
    if (Object.keys(dict).length > 0) out[String(u.id)] = dict
  }
  return out
}
