// The user directory as the API returns it: GET /users, GET /users/{id}, GET /users/me.
import type { PrismaClient, Tx, User } from '../db/index.js'
import type { Database } from '../db/client.js'
import { fastRead } from '../db/fast-read.js'
import { UserDataCache } from '../db/user-data-cache.js'
import { accessibleUserIds, type UserQueryContext } from '../access/user.js'
import { getBillingAdminIds } from './billing-admins.js'
import { SYSTEM_GROUPS } from '../domain/system-groups.js'
import { presentUser, profileDataOf, type PresentableUser, type ProfileData, type ProfileValueRow, type UserDict } from '../present/user.js'

export interface UserListOptions {
  clientExtavatar: boolean
  includeCustomProfileFields: boolean
}

const WITH_VISIBILITY = { settings: { select: { emailAddressVisibility: true } } } as const

type UserWithSettings = User & { settings: { emailAddressVisibility: number } | null }

function presentable(row: UserWithSettings, billingAdmins: ReadonlySet<number>): PresentableUser {
  const { settings, ...user } = row
  return { ...user, emailAddressVisibility: settings?.emailAddressVisibility, isBillingAdmin: billingAdmins.has(user.id) }
}

/** Profile field values of the given users, keyed by user ID. */
export async function profileDataFor(prisma: PrismaClient | Tx, userIds: number[]): Promise<Map<number, ProfileData>> {
  const values = await prisma.customProfileFieldValue.findMany({
    where: { userId: { in: userIds } },
    include: { field: { select: { type: true } } },
    orderBy: { fieldId: 'asc' },
  })
  const byUser = new Map<number, typeof values>()
  for (const v of values) byUser.set(v.userId, [...(byUser.get(v.userId) ?? []), v])
  return new Map(userIds.map((id) => [id, profileDataOf(byUser.get(id) ?? [])]))
}

/** Every user of the realm the requester may access, bots and deactivated users included, by ID. */
export async function getUsers(ctx: UserQueryContext, options: UserListOptions): Promise<UserDict[]> {
  const accessible = await accessibleUserIds(ctx)
  const rows = await ctx.prisma.user.findMany({
    where: { realmId: ctx.realm.id, ...(accessible ? { id: { in: [...accessible] } } : {}) },
    include: WITH_VISIBILITY,
    orderBy: { id: 'asc' },
  })
  const [profiles, billingAdmins] = await Promise.all([
    options.includeCustomProfileFields ? profileDataFor(ctx.prisma, rows.map((r) => r.id)) : new Map<number, ProfileData>(),
    getBillingAdminIds(ctx.prisma, ctx.realm.id),
  ])
  return rows.map((row) =>
    presentUser(presentable(row, billingAdmins), ctx.user, { ...options, profileData: profiles.get(row.id), realm: ctx.realm }),
  )
}

/** One user the requester has already been allowed to access (see access/user.ts). */
export async function getUser(ctx: UserQueryContext, target: User, options: UserListOptions): Promise<UserDict> {
  const row = await ctx.prisma.user.findUniqueOrThrow({ where: { id: target.id }, include: WITH_VISIBILITY })
  const profileData = options.includeCustomProfileFields ? (await profileDataFor(ctx.prisma, [target.id])).get(target.id) : undefined
  const billingAdmins = await getBillingAdminIds(ctx.prisma, ctx.realm.id, [target.id])
  return presentUser(presentable(row, billingAdmins), ctx.user, { ...options, profileData, realm: ctx.realm })
}

/** One row per custom profile value of the user (field ID order), or a single row with null value columns when there is none. */
interface OwnUserRow {
  max_message_id: number | null
  is_billing_admin: boolean
  field_id: number | null
  type: number | null
  value: string | null
  rendered_value: string | null
}

export type OwnUserRows = readonly OwnUserRow[]

/**
 * A prepared statement through the driver on PostgreSQL (db/fast-read.ts).
 * is_billing_admin as queries/billing-admins.ts derives it (the caller, being
 * authenticated, is active): membership of the group the realm's
 * can_manage_billing_group stores, or of role:administrators by default.
 */
function readOwnUserRows(prisma: UserQueryContext['prisma'], userId: number, realmId: number): Promise<OwnUserRow[]> {
  return fastRead<OwnUserRow>(
    prisma,
    'own-user',
    `WITH RECURSIVE below(id) AS (
      SELECT coalesce(r.can_manage_billing_group_id, g.id)
      FROM realm r LEFT JOIN user_group g ON g.realm_id = r.id AND g.is_system_group AND g.name = '${SYSTEM_GROUPS.administrators}'
      WHERE r.id = $2
      UNION
      SELECT s.subgroup_id FROM user_group_subgroup s JOIN below ON s.supergroup_id = below.id
    )
    SELECT m.max_message_id, EXISTS (SELECT 1 FROM user_group_member gm JOIN below ON gm.group_id = below.id WHERE gm.user_id = $1) AS is_billing_admin,
      v.field_id, f.type, v.value, v.rendered_value
    FROM (SELECT max(message_id) AS max_message_id FROM user_message WHERE user_id = $1) m
    LEFT JOIN (custom_profile_field_value v JOIN custom_profile_field f ON f.id = v.field_id) ON v.user_id = $1
    ORDER BY v.field_id`,
    [userId, realmId],
  )
}

/** The estimated heap of a user's cached rows (db/user-data-cache.ts bounds its bytes). */
export function ownUserRowsBytes(rows: OwnUserRows): number {
  let bytes = 32
  for (const row of rows) bytes += 96 + 2 * ((row.value?.length ?? 0) + (row.rendered_value?.length ?? 0))
  return bytes
}

/** This node's cache of GET /users/me's rows, invalidated through the database's notifications. */
export function createOwnUserCache(database: Database): UserDataCache<OwnUserRows> {
  return new UserDataCache<OwnUserRows>({
    sizeOf: ownUserRowsBytes,
    listen: (cache) => database.watchUserData(cache, { onError: (error) => cache.listenerError(error) }),
  })
}

/**
 * GET /users/me: the spec's fields only, plus max_message_id (-1 without
 * messages). The user row is ctx.user, which authentication has just read (or
 * taken from the auth cache, which is never stale: db/auth-cache.ts); a viewer
 * always sees their own address, so their email_address_visibility is not
 * needed. What remains is one raw statement, whose rows the node's
 * user-data cache keeps (db/user-data-cache.ts). Prisma's ORM path took three
 * queries here and capped the endpoint at a hundredth of a bare route. Plain
 * rows rather than a json_agg() column: cheaper for PostgreSQL and for Prisma.
 */
export async function getOwnUser(ctx: UserQueryContext & { userDataCache: UserDataCache<OwnUserRows> }): Promise<Record<string, unknown>> {
  const rows = await ctx.userDataCache.read(ctx.user.id, () => readOwnUserRows(ctx.prisma, ctx.user.id, ctx.realm.id))
  const values: ProfileValueRow[] = []
  for (const r of rows) {
    if (r.field_id !== null && r.type !== null && r.value !== null) {
      values.push({ fieldId: r.field_id, value: r.value, renderedValue: r.rendered_value, field: { type: r.type } })
    }
  }
  const dict = presentUser({ ...ctx.user, isBillingAdmin: rows[0]?.is_billing_admin === true }, ctx.user, {
    clientExtavatar: false,
    includeCustomProfileFields: true,
    profileData: profileDataOf(values),
    realm: ctx.realm,
  })
  const { profile_data, bot_type, bot_owner_id, ...common } = dict
  return {
    avatar_url: common.avatar_url,
    avatar_version: common.avatar_version,
    email: common.email,
    full_name: common.full_name,
    is_admin: common.is_admin,
    is_owner: common.is_owner,
    is_billing_admin: common.is_billing_admin,
    role: common.role,
    is_guest: common.is_guest,
    is_bot: common.is_bot,
    is_active: common.is_active,
    timezone: common.timezone,
    date_joined: common.date_joined,
    max_message_id: rows[0]?.max_message_id ?? -1,
    user_id: common.user_id,
    delivery_email: common.delivery_email,
    // Exactly the spec's fields for people. Bots have no profile; upstream gives them their bot fields
    // (bot_type, bot_owner_id) instead. User objects in lists keep bot_type: null for people (spec "User").
    ...(dict.is_bot ? { bot_type, bot_owner_id } : { profile_data: profile_data ?? {} }),
  }
}
