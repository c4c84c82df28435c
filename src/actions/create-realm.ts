// Creates an organization with everything a new realm has upstream: the
// system groups, the notification bot, the owner and a default channel.
import { REALM_PERMISSION_SETTING_NAMES, REALM_PERMISSION_SETTINGS, realmSettingColumn } from '../domain/permission-settings.js'
import type { Realm, Tx, User } from '../db/index.js'
import type { Services } from './context.js'
import { ROLE } from '../domain/roles.js'
import { insertUser } from './user-rows.js'
import { SYSTEM_GROUPS } from '../domain/system-groups.js'
import { renderPlainDescription } from './render-description.js'
import { fakeEmailDomain } from '../present/realm.js'

export interface CreateRealmInput {
  stringId: string
  name: string
  description?: string
  owner: { email: string; fullName: string; password: string | null }
  /** Name of the default channel everyone joins. */
  defaultStreamName?: string
}

export interface CreatedRealm {
  realm: Realm
  owner: User
  notificationBot: User
}

// Each system group contains the next one down as a subgroup.
const GROUP_CHAIN = [
  SYSTEM_GROUPS.owners,
  SYSTEM_GROUPS.administrators,
  SYSTEM_GROUPS.moderators,
  SYSTEM_GROUPS.fullMembers,
  SYSTEM_GROUPS.members,
  SYSTEM_GROUPS.everyone,
  SYSTEM_GROUPS.internet,
]

export function notificationBotEmail(realm: Pick<Realm, 'stringId'>, externalUrl: string): string {
  return `notification-bot@${fakeEmailDomain(realm, externalUrl)}`
}

export async function createRealm(services: Services, input: CreateRealmInput): Promise<CreatedRealm> {
  return services.prisma.$transaction(
    async (tx) => {
      const { realm, notificationBot } = await createRealmRows(tx, services, input)
      const owner = await insertUser(tx, realm, {
        email: input.owner.email,
        fullName: input.owner.fullName,
        password: input.owner.password,
        role: ROLE.OWNER,
        dateJoined: services.now(),
        emailDomain: fakeEmailDomain(realm, services.config.externalUrl),
      })
      return { realm, owner: owner.user, notificationBot }
    },
    { timeout: 60_000, maxWait: 30_000 },
  )
}

/** Everything of a new realm but its owner (the caller adds the owner, or an invitation for one, in the same transaction). */
export async function createRealmRows(tx: Tx, services: Services, input: Omit<CreateRealmInput, 'owner'>): Promise<Omit<CreatedRealm, 'owner'>> {
  const now = services.now()
  const realm0 = await tx.realm.create({
    data: { stringId: input.stringId, name: input.name, description: input.description ?? '', dateCreated: now },
  })
  const groups = new Map<string, number>()
  for (const name of [...GROUP_CHAIN, SYSTEM_GROUPS.nobody]) {
    const group = await tx.userGroup.create({
      data: { realmId: realm0.id, name, isSystemGroup: true, dateCreated: now, description: systemGroupDescription(name) },
    })
    groups.set(name, group.id)
  }
  for (let i = 0; i + 1 < GROUP_CHAIN.length; i++) {
    await tx.userGroupSubgroup.create({
      data: { supergroupId: groups.get(GROUP_CHAIN[i + 1] as string) as number, subgroupId: groups.get(GROUP_CHAIN[i] as string) as number },
    })
  }
  const bot = await insertUser(tx, realm0, {
    email: notificationBotEmail(realm0, services.config.externalUrl),
    fullName: 'Notification Bot',
    isBot: true,
    botType: 1,
    isSystemBot: true,
    role: ROLE.MEMBER,
    dateJoined: now,
    emailDomain: fakeEmailDomain(realm0, services.config.externalUrl),
  })
  const admins = groups.get(SYSTEM_GROUPS.administrators) as number
  const members = groups.get(SYSTEM_GROUPS.members) as number
  const everyone = groups.get(SYSTEM_GROUPS.everyone) as number
  const streamName = input.defaultStreamName ?? 'general'
  const stream = await tx.stream.create({
    data: {
      realmId: realm0.id,
      name: streamName,
      description: 'Everyone is added to this channel by default.',
      renderedDescription: renderPlainDescription('Everyone is added to this channel by default.'),
      dateCreated: now,
      canRemoveSubscribersGroupId: admins,
    },
  })
  await tx.defaultStream.create({ data: { realmId: realm0.id, streamId: stream.id } })
  const realm = await tx.realm.update({
    where: { id: realm0.id },
    data: {
      notificationBotId: bot.user.id,
      newStreamAnnouncementsStreamId: stream.id,
      signupAnnouncementsStreamId: stream.id,
      // Every group permission setting at upstream's default (domain/permission-settings.ts).
      ...Object.fromEntries(REALM_PERMISSION_SETTING_NAMES.map((name) => [realmSettingColumn(name), groups.get(REALM_PERMISSION_SETTINGS[name].config.defaultGroupName)])),
    },
  })
  return { realm, notificationBot: bot.user }
}

function systemGroupDescription(name: string): string {
  switch (name) {
    case SYSTEM_GROUPS.owners: return 'Owners of this organization'
    case SYSTEM_GROUPS.administrators: return 'Administrators of this organization, including owners'
    case SYSTEM_GROUPS.moderators: return 'Moderators of this organization, including administrators'
    case SYSTEM_GROUPS.fullMembers: return 'Members of this organization, not including new accounts and guests'
    case SYSTEM_GROUPS.members: return 'Members of this organization, not including guests'
    case SYSTEM_GROUPS.everyone: return 'Everyone in this organization, including guests'
    case SYSTEM_GROUPS.internet: return 'Everyone on the Internet'
    default: return 'Nobody'
  }
}
