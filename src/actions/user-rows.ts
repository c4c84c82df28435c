// Shared persistence for new users and bots: the user row, its settings row,
// its role-group membership and its default subscriptions. Used by realm
// creation, POST /users, bootstrap and (later) invitation acceptance.
import type { Realm, Tx, User } from '../db/index.js'
import { ROLE } from '../domain/roles.js'
import { hashPassword, randomAlphanumeric } from '../domain/credentials.js'
import { roleGroupName } from '../domain/system-groups.js'
import { apiEmailFor, EMAIL_VISIBILITY } from '../present/user.js'
import { checkNotStandIn } from '../access/user.js'

/** Colors given to new subscriptions, in turn. */
export const STREAM_COLORS = [
  '#76ce90', '#fae589', '#a6c7e5', '#e79ab5', '#bfd56f', '#f4ae55', '#b0a5fd', '#addfe5',
  '#f5ce6e', '#c2726a', '#94c849', '#bd86e5', '#ee7e4a', '#a6dcbf', '#95a5fd', '#53a063',
  '#9987e1', '#e4523d', '#c2c2c2', '#4f8de4', '#c6a8ad', '#e7cc4d', '#c8bebf', '#a47462',
]
export const pickStreamColor = (index: number): string => STREAM_COLORS[index % STREAM_COLORS.length] as string

export interface NewUserRow {
  email: string
  fullName: string
  password?: string | null
  role?: number
  isBot?: boolean
  botType?: number | null
  botOwnerId?: number | null
  isSystemBot?: boolean
  timezone?: string
  /** Channels to subscribe the user to; defaults to the realm's default channels (none for bots). */
  streamIds?: number[]
  dateJoined: Date
  /** The realm's fakeEmailDomain: a person whose address the realm's default hides is known to the API by a stand-in there. */
  emailDomain: string
}

export async function insertUser(tx: Tx, realm: Realm, row: NewUserRow): Promise<{ user: User; subscribedStreamIds: number[] }> {
  checkNotStandIn(row.email, row.emailDomain)
  const passwordHash = row.password ? await hashPassword(row.password) : null
  const role = row.role ?? ROLE.MEMBER
  // A person starts with the realm's default email_address_visibility; a bot's address is always public.
  const visibility = row.isBot ? EMAIL_VISIBILITY.EVERYONE : realm.emailAddressVisibility
  const created = await tx.user.create({
    data: {
      realmId: realm.id,
      email: row.email,
      deliveryEmail: row.email,
      fullName: row.fullName,
      passwordHash,
      apiKey: randomAlphanumeric(32),
      role,
      isBot: row.isBot ?? false,
      botType: row.botType ?? null,
      botOwnerId: row.botOwnerId ?? null,
      isSystemBot: row.isSystemBot ?? false,
      timezone: row.timezone ?? '',
      dateJoined: row.dateJoined,
      settings: { create: { defaultLanguage: realm.defaultLanguage, emailAddressVisibility: visibility } },
    },
  })
  // The stand-in names the row's ID, known only once the row exists.
  const apiEmail = apiEmailFor(created, visibility, row.emailDomain)
  const user = apiEmail === created.email ? created : await tx.user.update({ where: { id: created.id }, data: { email: apiEmail } })
  const group = await tx.userGroup.findUnique({ where: { realmId_name: { realmId: realm.id, name: roleGroupName(role) } } })
  if (group) await tx.userGroupMember.create({ data: { groupId: group.id, userId: user.id } })

  let streamIds = row.streamIds
  if (streamIds === undefined) {
    streamIds = row.isBot ? [] : (await tx.defaultStream.findMany({ where: { realmId: realm.id } })).map((d) => d.streamId)
  }
  const unique = [...new Set(streamIds)]
  if (unique.length > 0) {
    await tx.subscription.createMany({
      data: unique.map((streamId, i) => ({ userId: user.id, streamId, color: pickStreamColor(i) })),
      skipDuplicates: true,
    })
  }
  return { user, subscribedStreamIds: unique }
}
