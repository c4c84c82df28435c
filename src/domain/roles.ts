// Roles and the integer permission policies of realm settings.

export const ROLE = {
  OWNER: 100,
  ADMIN: 200,
  MODERATOR: 300,
  MEMBER: 400,
  GUEST: 600,
} as const
export type Role = (typeof ROLE)[keyof typeof ROLE]
export const ROLES: readonly Role[] = Object.values(ROLE)
export const isRole = (n: number): n is Role => (ROLES as readonly number[]).includes(n)

export const POLICY = {
  MEMBERS: 1,
  ADMINS: 2,
  FULL_MEMBERS: 3,
  MODERATORS: 4,
  EVERYONE: 5,
  NOBODY: 6,
  OWNERS: 7,
} as const
export type Policy = (typeof POLICY)[keyof typeof POLICY]

export const isOwner = (role: number): boolean => role === ROLE.OWNER
export const isAdmin = (role: number): boolean => role <= ROLE.ADMIN
export const isModeratorOrAbove = (role: number): boolean => role <= ROLE.MODERATOR
export const isGuest = (role: number): boolean => role === ROLE.GUEST

const DAY_MS = 86_400_000

export interface PolicyUser {
  role: number
  dateJoined: Date
  isBot: boolean
}
export interface PolicyRealm {
  /** Days a new member waits before becoming a full member. */
  waitingPeriodThreshold: number
}

/** A member whose account is younger than the waiting period (whole days, rounded down). */
export function isProvisionalMember(user: Pick<PolicyUser, 'role' | 'dateJoined'>, realm: PolicyRealm, now: Date): boolean {
  if (isModeratorOrAbove(user.role)) return false
  const days = Math.floor((now.getTime() - user.dateJoined.getTime()) / DAY_MS)
  return days < realm.waitingPeriodThreshold
}

/** Not a guest and past the waiting period; moderators and above always are. */
export function isFullMember(user: Pick<PolicyUser, 'role' | 'dateJoined'>, realm: PolicyRealm, now: Date): boolean {
  return !isGuest(user.role) && !isProvisionalMember(user, realm, now)
}

/**
 * May `user` act under an integer policy? Higher roles pass every lower bar;
 * `everyone` includes guests, `nobody` excludes owners too. Bots are judged
 * by their own role (callers check a bot's owner where upstream does).
 */
export function hasPolicyPermission(policy: number, user: PolicyUser, realm: PolicyRealm, now: Date): boolean {
  switch (policy) {
    case POLICY.NOBODY:
      return false
    case POLICY.EVERYONE:
      return true
    case POLICY.OWNERS:
      return isOwner(user.role)
    case POLICY.ADMINS:
      return isAdmin(user.role)
    case POLICY.MODERATORS:
      return isModeratorOrAbove(user.role)
    case POLICY.MEMBERS:
      return !isGuest(user.role)
    case POLICY.FULL_MEMBERS:
      return isFullMember(user, realm, now)
    default:
      return false
  }
}
