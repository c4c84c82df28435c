// User rows → the API's user dict (spec "User"; upstream-behaviour §3.3), and
// the realm_user add event built from it. No I/O.
import { EXTERNAL_AVATAR_URL_PREFIX } from '../domain/avatar.js'
import { createHash } from 'node:crypto'
import { LRUCache } from 'lru-cache'
import type { CustomProfileField, CustomProfileFieldValue, Realm, User } from '../db/index.js'
import { ROLE, isAdmin, isGuest, isModeratorOrAbove, isOwner } from '../domain/roles.js'
import type { ProfileValue, UserDict } from '../events/schemas/common.js'

/** The wire types, defined by their schemas in events/schemas/common.ts. */
export type { ProfileValue, UserDict }

/** Values of `email_address_visibility` (a per-user setting since upstream 7.0). */
export const EMAIL_VISIBILITY = {
  EVERYONE: 1,
  MEMBERS: 2,
  ADMINS: 3,
  NOBODY: 4,
  MODERATORS: 5,
} as const

/**
 * The address a user is known by in the API (`email`, `sender_email`,
 * `display_recipient`…): the real one only while everyone may see it (bots
 * always), otherwise the stand-in `user{id}@{domain}` (upstream
 * get_display_email_address), `domain` being the realm's fakeEmailDomain.
 */
export function apiEmailFor(user: Pick<User, 'id' | 'isBot' | 'deliveryEmail'>, visibility: number, domain: string): string {
  return user.isBot || visibility === EMAIL_VISIBILITY.EVERYONE ? user.deliveryEmail : `user${user.id}@${domain}`
}

/** Whether the API email is the real address: a bot, or a person whose visibility is "everyone". */
export function emailIsPublic(user: Pick<User, 'isBot'> & { emailAddressVisibility?: number }): boolean {
  return user.isBot || (user.emailAddressVisibility ?? EMAIL_VISIBILITY.EVERYONE) === EMAIL_VISIBILITY.EVERYONE
}

/** Custom profile field types whose values are Markdown and carry `rendered_value`. */
const RENDERED_FIELD_TYPES = new Set([1, 2])

export type Viewer = Pick<User, 'id' | 'role'>

/**
 * The user row plus the one setting the presenter needs (bots always count as
 * "everyone") and the derived billing-admin flag (queries/billing-admins.ts).
 */
export type PresentableUser = User & { emailAddressVisibility?: number; isBillingAdmin: boolean }

export type ProfileData = Record<string, ProfileValue>

export interface PresentUserOptions {
  /** The client computes externally hosted avatars itself (`client_extavatar`). */
  clientExtavatar: boolean
  /** Adds `profile_data` to non-bots. */
  includeCustomProfileFields: boolean
  /** The user's custom profile field values (only read when includeCustomProfileFields). */
  profileData?: ProfileData
  /** The user's realm (uploaded avatars live under its ID). */
  realm: Pick<Realm, 'id'>
}

/** Whether `viewer` may see the real address of `target` (upstream can_access_delivery_email). */
export function canSeeDeliveryEmail(viewer: Viewer | null, target: Pick<User, 'id' | 'isBot'> & { emailAddressVisibility?: number }): boolean {
  if (viewer && viewer.id === target.id) return true
  return roleMaySeeDeliveryEmail(viewer?.role ?? null, target)
}

/**
 * Whether a viewer of `role` (null: a web-public visitor) may see the real
 * address of `target` by its email_address_visibility alone (upstream's
 * ROLE_TO_ACCESSIBLE_EMAIL_ADDRESS_VISIBILITY_IDS), without the exception for
 * the viewer's own address.
 */
export function roleMaySeeDeliveryEmail(role: number | null, target: Pick<User, 'isBot'> & { emailAddressVisibility?: number }): boolean {
  const viewer = role === null ? null : { role }
  const visibility = target.isBot ? EMAIL_VISIBILITY.EVERYONE : (target.emailAddressVisibility ?? EMAIL_VISIBILITY.EVERYONE)
  switch (visibility) {
    case EMAIL_VISIBILITY.EVERYONE:
      return true
    case EMAIL_VISIBILITY.MEMBERS:
      return viewer !== null && !isGuest(viewer.role)
    case EMAIL_VISIBILITY.ADMINS:
      return viewer !== null && isAdmin(viewer.role)
    case EMAIL_VISIBILITY.MODERATORS:
      return viewer !== null && isModeratorOrAbove(viewer.role)
    default:
      return false
  }
}

/**
 * MD5 digests of addresses, by the address as stored: every user dict with a
 * gravatar-style avatar needs one (GET /users/me on every call, GET /users once
 * per user), and a digest cost more than the rest of the dict. A pure function
 * of its key, so never stale; bounded in bytes (GET /avatar/{email} hashes
 * addresses a client chose).
 */
const emailDigests = new LRUCache<string, string>({ maxSize: 4 * 1024 * 1024, sizeCalculation: (_digest, email) => 2 * email.length + 120 })

function emailDigest(deliveryEmail: string): string {
  let digest = emailDigests.get(deliveryEmail)
  if (digest === undefined) {
    digest = createHash('md5').update(deliveryEmail.trim().toLowerCase()).digest('hex')
    emailDigests.set(deliveryEmail, digest)
  }
  return digest
}

export function gravatarUrl(deliveryEmail: string, avatarVersion: number): string {
  return `${EXTERNAL_AVATAR_URL_PREFIX}${emailDigest(deliveryEmail)}?d=identicon&version=${avatarVersion}`
}

/** The avatar URL of a user regardless of client capabilities. */
export function avatarUrl(user: Pick<User, 'avatarSource' | 'avatarHash' | 'avatarVersion' | 'deliveryEmail' | 'realmId'>): string {
  if (user.avatarSource === 'U' && user.avatarHash) {
    return `/user_avatars/${user.realmId}/${user.avatarHash}.png?version=${user.avatarVersion}`
  }
  return gravatarUrl(user.deliveryEmail, user.avatarVersion)
}

/** `/user_avatars/{realm}/{hash}-medium.png?version=N`, or the external URL with upstream's 500-pixel size. */
export function avatarUrlMedium(user: Pick<User, 'avatarSource' | 'avatarHash' | 'avatarVersion' | 'deliveryEmail' | 'realmId'>): string {
  const url = avatarUrl(user)
  if (user.avatarSource === 'U' && user.avatarHash) return url.replace(`/${user.avatarHash}.png?`, `/${user.avatarHash}-medium.png?`)
  return url.replace('?d=identicon&', '?d=identicon&s=500&')
}

/** Upstream's ISO form: microsecond-free, with an explicit UTC offset. */
export function isoDate(date: Date): string {
  const iso = date.toISOString()
  // toISOString() always ends in Z (UTC).
  return `${iso.slice(0, -1)}+00:00`
}

export type ProfileValueRow = Pick<CustomProfileFieldValue, 'fieldId' | 'value' | 'renderedValue'> & { field: Pick<CustomProfileField, 'type'> }

/** Maps stored values to `profile_data`: field ID (as a string key) → value and, for Markdown types, its HTML. */
export function profileDataOf(values: ProfileValueRow[]): ProfileData {
  const out: ProfileData = {}
  for (const v of values) {
    out[String(v.fieldId)] = RENDERED_FIELD_TYPES.has(v.field.type) ? { value: v.value, rendered_value: v.renderedValue ?? v.value } : { value: v.value }
  }
  return out
}

export function presentUser(user: PresentableUser, viewer: Viewer | null, options: PresentUserOptions): UserDict {
  const emailVisible = canSeeDeliveryEmail(viewer, user)
  // The client hashes `email`: only a real one gives the right picture (upstream, since per-user visibility).
  const computedByClient = options.clientExtavatar && emailIsPublic(user) && user.avatarSource === 'G'
  const dict: UserDict = {
    email: user.email,
    user_id: user.id,
    avatar_version: user.avatarVersion,
    is_admin: isAdmin(user.role),
    is_owner: isOwner(user.role),
    is_guest: isGuest(user.role),
    is_billing_admin: user.isBillingAdmin,
    role: user.role,
    is_bot: user.isBot,
    full_name: user.fullName,
    timezone: user.timezone,
    is_active: user.isActive,
    date_joined: isoDate(user.dateJoined),
    delivery_email: emailVisible ? user.deliveryEmail : null,
    avatar_url: computedByClient ? null : avatarUrl(user),
    bot_type: user.isBot ? user.botType : null,
  }
  if (user.isBot) {
    dict.bot_owner_id = user.botOwnerId
  } else if (options.includeCustomProfileFields) {
    dict.profile_data = options.profileData ?? {}
  }
  return dict
}

/** The `person` of a `realm_user add` event: a fresh account, so profile_data is empty. */
export function realmUserAddPerson(user: PresentableUser, viewer: Viewer | null, realm: PresentUserOptions['realm']): UserDict {
  return presentUser(user, viewer, { clientExtavatar: false, includeCustomProfileFields: true, profileData: {}, realm })
}

/** Upstream's name and picture for users a restricted guest may not access. */
export const INACCESSIBLE_USER_NAME = 'Unknown user'
export const INACCESSIBLE_USER_AVATAR_URL = '/static/images/unknown-user-avatar.png'

/**
 * The "Unknown user" stand-in for a user the viewer may not access: the usual
 * user dict whose only variable content is the ID (and an API-only address).
 */
export function inaccessibleUserDict(userId: number, emailDomain: string): UserDict {
  return {
    email: `user${userId}@${emailDomain}`,
    user_id: userId,
    avatar_version: 1,
    is_admin: false,
    is_owner: false,
    is_guest: false,
    is_billing_admin: false,
    role: ROLE.MEMBER,
    is_bot: false,
    full_name: INACCESSIBLE_USER_NAME,
    timezone: '',
    is_active: true,
    date_joined: '1970-01-01T00:00:00+00:00',
    delivery_email: null,
    avatar_url: INACCESSIBLE_USER_AVATAR_URL,
    bot_type: null,
    profile_data: {},
  }
}
