// `roost import`: a new organization from an export in upstream's format
// (src/import/zulip-bundle.ts; the Slack importer produces the same shape).
// All or nothing: the files go to storage first, under the new realm's ID
// (taken from its sequence, so no other organization can use those keys);
// then every row is written in one transaction, set-based (IDs drawn from
// the tables' sequences in one statement per table, rows inserted with
// createMany). A refusal or failure anywhere deletes the files written.
// Imported people get no password and new API keys nobody knows (the
// operator gives them out: roost user reset-password / regenerate-api-key). A new realm has no event queues, so nothing is published.
import { randomBytes, randomUUID } from 'node:crypto'
import type { Prisma, PrismaClient, Tx } from '../db/index.js'
import { Prisma as P } from '../db/index.js'
import type { Services } from './context.js'
import { checkSubdomain } from '../domain/subdomain.js'
import { subdomainUnavailable } from '../errors.js'
import { GROUP_PERMISSION_SETTING_NAMES, REALM_PERMISSION_SETTINGS, REALM_PERMISSION_SETTING_NAMES, realmSettingColumn, streamPostPolicyGroup } from '../domain/permission-settings.js'
import { SYSTEM_GROUPS, roleGroupName } from '../domain/system-groups.js'
import { ROLE } from '../domain/roles.js'
import { MAX_MESSAGE_LENGTH, MAX_RENDERED_CONTENT_BYTES, MAX_STREAM_DESCRIPTION_LENGTH, MAX_STREAM_NAME_LENGTH, MAX_TOPIC_LENGTH } from '../domain/limits.js'
import { MAX_NAME_LENGTH } from '../domain/user-rules.js'
import { randomAlphanumeric } from '../domain/credentials.js'
import { renderPlainDescription } from './render-description.js'
import { notificationBotEmail } from './create-realm.js'
import { pickStreamColor, STREAM_COLORS } from './user-rows.js'
import { sanitizeFileName } from './upload-file.js'
import { avatarStorageKey } from './avatar.js'
import { realmEmojiPath, realmEmojiStillPath } from '../queries/realm-emoji.js'
import { firstFramePng } from '../storage/still-image.js'
import { realmUrl } from '../present/realm.js'
import { renderMarkdown, type RenderContext } from '../domain/markdown.js'
import { RECIPIENT, REALM_FIELD_NAMES, REALM_SPECIAL_FIELDS, USER_SETTINGS_SPECIAL_FIELDS, snakeCase, type Row } from '../export/zulip-format.js'
import type { ZulipBundle } from '../import/zulip-bundle.js'
import { IdMap, ImportDataError, bool, date, int, optDate, optInt, rewriteRendered, rewriteUploadPaths, rowIds, str } from '../import/rows.js'
import { adaptImportedRealmSettings, checkImportedRealmSettings, checkImportedUserSettings } from '../import/settings-check.js'

export interface ImportOptions {
  /** The new organization's subdomain (default: the export's). */
  subdomain?: string
  progress: (line: string) => void
}

export interface ImportSummary {
  realmId: number
  subdomain: string
  url: string
  users: number
  channels: number
  messages: number
  files: number
}

/** Sequence-drawn IDs, one statement per table. The table names are constants of this file. */
async function allocate(db: Tx | PrismaClient, table: string, count: number): Promise<number[]> {
  if (count === 0) return []
  const rows = await db.$queryRawUnsafe<{ id: number }[]>(`SELECT nextval(pg_get_serial_sequence('${table}', 'id'))::int AS id FROM generate_series(1, $1::int)`, count)
  return rows.map((r) => r.id)
}

/** New IDs for the exported `rows` of `exportTable` from `table`'s sequence, and the map from their old IDs (`what` names them in errors). */
async function renumber(tx: Tx, exportTable: string, rows: Record<string, unknown>[], table: string, what: string): Promise<{ ids: number[]; map: IdMap }> {
  const oldIds = rowIds(exportTable, rows)
  const ids = await allocate(tx, table, rows.length)
  const map = new IdMap(what)
  oldIds.forEach((old, i) => map.set(old, ids[i] as number))
  return { ids, map }
}

/** A group chain: each system group holds the next one down. */
const GROUP_CHAIN = [SYSTEM_GROUPS.owners, SYSTEM_GROUPS.administrators, SYSTEM_GROUPS.moderators, SYSTEM_GROUPS.fullMembers, SYSTEM_GROUPS.members, SYSTEM_GROUPS.everyone, SYSTEM_GROUPS.internet]
const ALL_SYSTEM_GROUPS: string[] = [...GROUP_CHAIN, SYSTEM_GROUPS.nobody]
const ROLES = new Set<number>(Object.values(ROLE))
/** RFC 5321's limit on an address. */
const MAX_EMAIL_LENGTH = 254

/** Realm fields whose value may be null (the rest take the export's value only when it has the default's type). */
const NULLABLE_REALM_FIELDS = new Set([
  'messageContentEditLimitSeconds',
  'moveMessagesWithinStreamLimitSeconds',
  'moveMessagesBetweenStreamsLimitSeconds',
  'messageContentDeleteLimitSeconds',
  'maxInvitesPerDay',
  'maxFileUploadSizeMib',
  'jitsiServerUrl',
])

/** The export's values for plain fields, where they have the type of the field's default. */
function settingsFrom(row: Row, defaults: Record<string, unknown>, skip: Set<string>, rename: Record<string, string> = {}, nullable = new Set<string>()): Record<string, unknown> {
  const out: Record<string, unknown> = {}
  for (const [field, fallback] of Object.entries(defaults)) {
    if (skip.has(field)) continue
    const value = row[rename[field] ?? snakeCase(field)]
    if (value === undefined) continue
    if (value === null ? nullable.has(field) || fallback === null : fallback === null || typeof value === typeof fallback) out[field] = value
  }
  return out
}

/** The realm's moderation request channel, mapped to its new ID: a private channel of the export, as PATCH /realm requires. */
function moderationChannel(realmRow: Row, streamRows: Row[], streams: IdMap): number | null {
  if (realmRow.moderation_request_channel == null) return null
  const old = int('zerver_realm', realmRow, 'moderation_request_channel')
  const row = streamRows.find((r) => r.id === old)
  if (!row) throw new ImportDataError(`zerver_realm: the setting 'moderation_request_channel' names the channel ${old}, which is not in zerver_stream`)
  if (!bool('zerver_stream', row, 'invite_only', false)) throw new ImportDataError(`zerver_realm: the setting 'moderation_request_channel' names the channel ${old}, which is not private (a moderation request channel must be)`)
  return streams.lookup(old) ?? null
}

interface PlannedFile {
  key: string
  data: Buffer
  contentType: string
}

const EMOJI_TYPES: Record<string, string> = { png: 'image/png', gif: 'image/gif', jpg: 'image/jpeg', webp: 'image/webp' }

export async function importOrganization(services: Services, bundle: ZulipBundle, options: ImportOptions): Promise<ImportSummary> {
  const { tables } = bundle
  const realmRow = tables.zerver_realm![0] as Row
  const subdomain = (options.subdomain ?? str('zerver_realm', realmRow, 'string_id')).trim().toLowerCase()
  if (subdomain !== '') checkSubdomain(subdomain)
  if (await services.prisma.realm.findUnique({ where: { stringId: subdomain }, select: { id: true } })) throw subdomainUnavailable()
  const realmName = str('zerver_realm', realmRow, 'name').trim().slice(0, 40) || subdomain
  const now = services.now()
  const [realmId] = (await allocate(services.prisma, 'realm', 1)) as [number]

  // Files first, under the new realm's keys: uploads get new paths, avatars new hashes.
  const files: PlannedFile[] = []
  const uploadPaths = new Map<string, string>()
  const uploadFiles = new Map<string, { path: string; size: number; contentType: string }>()
  const recordByPath = new Map(bundle.uploadRecords.map((r) => [typeof r.path === 'string' ? r.path : '', r]))
  for (const a of tables.zerver_attachment ?? []) {
    const oldPath = str('zerver_attachment', a, 'path_id')
    const data = bundle.uploads.get(oldPath)
    if (!data) throw new ImportDataError(`attachment.json: the file of the upload '${oldPath}' is missing from uploads/`)
    const record = recordByPath.get(oldPath)
    const contentType = typeof a.content_type === 'string' ? a.content_type : typeof record?.content_type === 'string' ? record.content_type : 'application/octet-stream'
    const name = sanitizeFileName(str('zerver_attachment', a, 'file_name', oldPath.split('/').pop() ?? 'file'))
    const newPath = `${realmId}/${randomBytes(1).toString('hex')}/${randomBytes(18).toString('base64url')}/${name}`
    uploadPaths.set(oldPath, newPath)
    uploadFiles.set(oldPath, { path: newPath, size: data.length, contentType })
    files.push({ key: newPath, data, contentType })
  }
  const avatarHashes = new Map<number, string>()
  const avatarFiles = [...bundle.avatarRecords].sort((a, b) => Number(String(b.path).endsWith('.original')) - Number(String(a.path).endsWith('.original')))
  for (const record of avatarFiles) {
    const userId = typeof record.user_profile_id === 'number' ? record.user_profile_id : undefined
    const data = typeof record.path === 'string' ? bundle.avatars.get(record.path) : undefined
    if (userId === undefined || !data || avatarHashes.has(userId)) continue
    const hash = randomBytes(20).toString('hex')
    avatarHashes.set(userId, hash)
    files.push({ key: avatarStorageKey(realmId, hash), data, contentType: typeof record.content_type === 'string' ? record.content_type : 'image/png' })
  }
  // Custom emoji images get file names of Roost's form (24 hex digits and the type's extension).
  const emojiFileNames = new Map<string, string>()
  for (const record of bundle.emojiRecords) {
    const fileName = typeof record.file_name === 'string' ? record.file_name : undefined
    const data = typeof record.path === 'string' ? bundle.emoji.get(record.path) : undefined
    const extension = (fileName?.split('.').pop() ?? '').toLowerCase().replace('jpeg', 'jpg')
    if (!fileName || !data || !EMOJI_TYPES[extension] || emojiFileNames.has(fileName)) continue
    const newName = `${randomBytes(12).toString('hex')}.${extension}`
    emojiFileNames.set(fileName, newName)
    files.push({ key: realmEmojiPath(realmId, newName), data, contentType: EMOJI_TYPES[extension] })
  }
  for (const e of tables.zerver_realmemoji ?? []) {
    const newName = emojiFileNames.get(str('zerver_realmemoji', e, 'file_name'))
    if (bool('zerver_realmemoji', e, 'is_animated', false) && newName !== undefined) {
      const original = files.find((f) => f.key === realmEmojiPath(realmId, newName)) as PlannedFile
      const still = await firstFramePng(original.data).catch(() => null)
      if (still) files.push({ key: realmEmojiStillPath(realmId, newName), data: still, contentType: 'image/png' })
    }
  }

  const written: string[] = []
  try {
    options.progress(`writing ${files.length} files…`)
    for (const file of files) {
      await services.storage.put(file.key, file.data, file.contentType)
      written.push(file.key)
    }
    options.progress('writing the database rows in one transaction…')
    const counts = await services.prisma.$transaction((tx) => writeRows(tx, services, bundle, { realmId, subdomain, realmName, now, uploadPaths, uploadFiles, avatarHashes, emojiFileNames, progress: options.progress }), {
      timeout: 30 * 60_000,
      maxWait: 60_000,
    })
    const realm = await services.prisma.realm.findUniqueOrThrow({ where: { id: realmId } })
    return { realmId, subdomain, url: realmUrl(realm, services.config.externalUrl), ...counts, files: files.length }
  } catch (error) {
    for (const key of written) await services.storage.delete(key).catch(() => undefined)
    if (error instanceof P.PrismaClientKnownRequestError && error.code === 'P2002') throw new ImportDataError(`the export holds two rows that must differ (${JSON.stringify(error.meta?.target ?? error.meta ?? '')}): ${error.message.split('\n').pop()}`)
    throw error
  }
}

/**
 * can_manage_billing_group for an export older than upstream level 363, whose
 * users carry is_billing_admin instead (with the owners, they had billing
 * access): as upstream's migration, role:owners, or an anonymous group of the
 * active human billing admins with role:owners as its subgroup.
 */
async function billingGroupOfOlderExport(tx: Tx, realmId: number, now: Date, ownersId: number, userRows: Row[], newUserIds: number[]): Promise<number> {
  const admins = userRows.flatMap((row, i) =>
    bool('zerver_userprofile', row, 'is_billing_admin', false) && bool('zerver_userprofile', row, 'is_active', true) && !bool('zerver_userprofile', row, 'is_mirror_dummy', false) && !bool('zerver_userprofile', row, 'is_bot', false)
      ? [newUserIds[i] as number]
      : [],
  )
  if (admins.length === 0) return ownersId
  const group = await tx.userGroup.create({ data: { realmId, name: `@anonymous:${randomUUID()}`, isAnonymous: true, dateCreated: now }, select: { id: true } })
  await tx.userGroupMember.createMany({ data: admins.map((userId) => ({ groupId: group.id, userId })) })
  await tx.userGroupSubgroup.create({ data: { supergroupId: group.id, subgroupId: ownersId } })
  return group.id
}

interface WriteContext {
  realmId: number
  subdomain: string
  realmName: string
  now: Date
  uploadPaths: Map<string, string>
  uploadFiles: Map<string, { path: string; size: number; contentType: string }>
  avatarHashes: Map<number, string>
  emojiFileNames: Map<string, string>
  progress: (line: string) => void
}

async function writeRows(tx: Tx, services: Services, bundle: ZulipBundle, w: WriteContext): Promise<{ users: number; channels: number; messages: number }> {
  const { tables } = bundle
  const T = (name: string): Row[] => tables[name] ?? []
  const realmRow = T('zerver_realm')[0] as Row
  const { realmId, now } = w

  // The realm, its plain settings where the export has them with the right type.
  const description = str('zerver_realm', realmRow, 'description', '')
  const realm0 = await tx.realm.create({
    data: { id: realmId, stringId: w.subdomain, name: w.realmName, description, renderedDescription: renderPlainDescription(description), dateCreated: date('zerver_realm', realmRow, 'date_created', now) },
  })
  const realmSettings = adaptImportedRealmSettings(settingsFrom(realmRow, realm0 as unknown as Record<string, unknown>, new Set([...REALM_SPECIAL_FIELDS, ...REALM_PERMISSION_SETTING_NAMES.map(realmSettingColumn)]), REALM_FIELD_NAMES, NULLABLE_REALM_FIELDS))
  checkImportedRealmSettings(realmSettings)
  if (Object.keys(realmSettings).length > 0) await tx.realm.update({ where: { id: realmId }, data: realmSettings as Prisma.RealmUpdateInput })

  // People and bots (and one Notification Bot for the export's system bots).
  const userRows = T('zerver_userprofile')
  const oldUserIds = rowIds('zerver_userprofile', userRows)
  const [botId, ...newUserIds] = await allocate(tx, 'user_profile', userRows.length + 1)
  const users = new IdMap('user')
  oldUserIds.forEach((old, i) => users.set(old, newUserIds[i] as number))
  for (const bot of T('zerver_userprofile_crossrealm')) users.set(int('zerver_userprofile_crossrealm', bot, 'id'), botId as number)
  w.progress(`  ${userRows.length} users`)
  const roleOf = (row: Row): number => {
    const role = optInt('zerver_userprofile', row, 'role') ?? ROLE.MEMBER
    if (!ROLES.has(role)) throw new ImportDataError(`zerver_userprofile row id ${String(row.id)}: 'role' ${role} is not a role`)
    return role
  }
  const userData: Prisma.UserCreateManyInput[] = userRows.map((row, i) => {
    const email = str('zerver_userprofile', row, 'email', undefined, MAX_EMAIL_LENGTH)
    const hash = w.avatarHashes.get(oldUserIds[i] as number)
    return {
      id: newUserIds[i] as number,
      realmId,
      email,
      deliveryEmail: str('zerver_userprofile', row, 'delivery_email', email, MAX_EMAIL_LENGTH),
      fullName: str('zerver_userprofile', row, 'full_name', undefined, MAX_NAME_LENGTH),
      passwordHash: null,
      apiKey: randomAlphanumeric(32),
      role: roleOf(row),
      isActive: bool('zerver_userprofile', row, 'is_active', true) && !bool('zerver_userprofile', row, 'is_mirror_dummy', false),
      isBot: bool('zerver_userprofile', row, 'is_bot', false),
      botType: optInt('zerver_userprofile', row, 'bot_type'),
      botOwnerId: users.opt('zerver_userprofile', row, 'bot_owner'),
      defaultAllPublicStreams: bool('zerver_userprofile', row, 'default_all_public_streams', false),
      dateJoined: date('zerver_userprofile', row, 'date_joined', now),
      lastLogin: optDate('zerver_userprofile', row, 'last_login'),
      timezone: str('zerver_userprofile', row, 'timezone', ''),
      avatarSource: hash ? 'U' : 'G',
      avatarHash: hash ?? null,
      avatarVersion: Math.max(1, optInt('zerver_userprofile', row, 'avatar_version') ?? 1),
    }
  })
  const botJoined = T('zerver_userprofile_crossrealm').map((row) => date('zerver_userprofile_crossrealm', row, 'date_joined', now)).sort((a, b) => a.getTime() - b.getTime())[0] ?? now
  await tx.user.create({
    data: {
      id: botId as number,
      realmId,
      email: notificationBotEmail(realm0, services.config.externalUrl),
      deliveryEmail: notificationBotEmail(realm0, services.config.externalUrl),
      fullName: 'Notification Bot',
      apiKey: randomAlphanumeric(32),
      isBot: true,
      botType: 1,
      isSystemBot: true,
      dateJoined: botJoined,
      settings: { create: { defaultLanguage: realm0.defaultLanguage } },
    },
  })
  await tx.user.createMany({ data: userData })
  const settingDefaults = (await tx.userSettings.findUniqueOrThrow({ where: { userId: botId as number } })) as unknown as Record<string, unknown>
  await tx.userSettings.createMany({
    data: userRows.map((row, i) => {
      const settings = settingsFrom(row, settingDefaults, USER_SETTINGS_SPECIAL_FIELDS)
      checkImportedUserSettings(`zerver_userprofile row id ${String(row.id)}`, settings)
      return { ...settings, userId: newUserIds[i] as number } as Prisma.UserSettingsCreateManyInput
    }),
  })

  // Groups: the export's, named or anonymous; system groups the export lacks are made as a new realm has them.
  const groupRows = T('zerver_usergroup')
  const named = new Map<number, Row>()
  for (const row of T('zerver_namedusergroup')) named.set(int('zerver_namedusergroup', row, 'usergroup_ptr'), row)
  for (const row of groupRows) if (typeof row.name === 'string' && !named.has(int('zerver_usergroup', row, 'id'))) named.set(int('zerver_usergroup', row, 'id'), row) // older exports
  const oldGroupIds = rowIds('zerver_usergroup', groupRows)
  const present = new Set([...named.values()].filter((g) => g.is_system_group === true).map((g) => g.name as string))
  const missingSystem = ALL_SYSTEM_GROUPS.filter((name) => !present.has(name))
  const newGroupIds = await allocate(tx, 'user_group', oldGroupIds.length + missingSystem.length)
  const groups = new IdMap('user group')
  oldGroupIds.forEach((old, i) => groups.set(old, newGroupIds[i] as number))
  const groupData: Prisma.UserGroupCreateManyInput[] = oldGroupIds.map((old, i) => {
    const row = named.get(old)
    if (!row) return { id: newGroupIds[i] as number, realmId, name: `@anonymous:${randomUUID()}`, isAnonymous: true, dateCreated: now }
    return {
      id: newGroupIds[i] as number,
      realmId,
      name: str('zerver_namedusergroup', row, 'name'),
      description: str('zerver_namedusergroup', row, 'description', ''),
      isSystemGroup: bool('zerver_namedusergroup', row, 'is_system_group', false),
      dateCreated: date('zerver_namedusergroup', row, 'date_created', now),
      creatorId: row.creator === null || row.creator === undefined ? null : (users.lookup(int('zerver_namedusergroup', row, 'creator')) ?? null),
      deactivated: bool('zerver_namedusergroup', row, 'deactivated', false),
    }
  })
  const systemIds = new Map<string, number>()
  missingSystem.forEach((name, i) => {
    const id = newGroupIds[oldGroupIds.length + i] as number
    systemIds.set(name, id)
    groupData.push({ id, realmId, name, isSystemGroup: true, dateCreated: now, description: '' })
  })
  for (const g of groupData) if (g.isSystemGroup) systemIds.set(g.name, g.id as number)
  await tx.userGroup.createMany({ data: groupData })
  // Group settings naming groups of the export (can_mention_group and those of levels 283–324).
  for (const setting of GROUP_PERMISSION_SETTING_NAMES) {
    const updates = oldGroupIds.flatMap((old) => {
      const row = named.get(old)
      const target = row && row[setting] !== undefined && row[setting] !== null ? groups.lookup(int('zerver_namedusergroup', row, setting)) : undefined
      return target === undefined ? [] : [[groups.lookup(old) as number, target] as const]
    })
    if (updates.length === 0) continue
    await tx.$executeRawUnsafe(
      `UPDATE user_group g SET "${setting}_id" = v.target FROM unnest($1::int[], $2::int[]) AS v(id, target) WHERE g.id = v.id`,
      updates.map((u) => u[0]),
      updates.map((u) => u[1]),
    )
  }
  const members = new Map<string, Prisma.UserGroupMemberCreateManyInput>()
  for (const row of T('zerver_usergroupmembership')) {
    const m = { groupId: groups.need('zerver_usergroupmembership', row, 'user_group'), userId: users.need('zerver_usergroupmembership', row, 'user_profile') }
    members.set(`${m.groupId}:${m.userId}`, m)
  }
  const edges = new Map<string, Prisma.UserGroupSubgroupCreateManyInput>()
  for (const row of T('zerver_groupgroupmembership')) {
    const e = { supergroupId: groups.need('zerver_groupgroupmembership', row, 'supergroup'), subgroupId: groups.need('zerver_groupgroupmembership', row, 'subgroup') }
    edges.set(`${e.supergroupId}:${e.subgroupId}`, e)
  }
  if (missingSystem.length > 0) {
    // The chain and each person's role group, as a new realm has them.
    for (let i = 0; i + 1 < GROUP_CHAIN.length; i++) {
      const e = { supergroupId: systemIds.get(GROUP_CHAIN[i + 1] as string) as number, subgroupId: systemIds.get(GROUP_CHAIN[i] as string) as number }
      edges.set(`${e.supergroupId}:${e.subgroupId}`, e)
    }
    for (const u of userData) {
      const m = { groupId: systemIds.get(roleGroupName(u.role as number)) as number, userId: u.id as number }
      members.set(`${m.groupId}:${m.userId}`, m)
    }
  }
  const botGroup = { groupId: systemIds.get(roleGroupName(ROLE.MEMBER)) as number, userId: botId as number }
  members.set(`${botGroup.groupId}:${botGroup.userId}`, botGroup)
  await tx.userGroupMember.createMany({ data: [...members.values()] })
  await tx.userGroupSubgroup.createMany({ data: [...edges.values()] })

  // Channels and their recipients.
  const streamRows = T('zerver_stream')
  const { ids: newStreamIds, map: streams } = await renumber(tx, 'zerver_stream', streamRows, 'stream', 'channel')
  const admins = systemIds.get(SYSTEM_GROUPS.administrators) as number
  // A channel group setting naming a group the export does not hold (an anonymous one) takes its default.
  const optGroup = (row: Row, key: string): number | null => (typeof row[key] === 'number' ? (groups.lookup(row[key]) ?? null) : null)
  const streamData: Prisma.StreamCreateManyInput[] = streamRows.map((row, i) => {
    const desc = str('zerver_stream', row, 'description', '', MAX_STREAM_DESCRIPTION_LENGTH)
    return {
      id: newStreamIds[i] as number,
      realmId,
      name: str('zerver_stream', row, 'name', undefined, MAX_STREAM_NAME_LENGTH),
      description: desc,
      renderedDescription: typeof row.rendered_description === 'string' ? row.rendered_description : renderPlainDescription(desc),
      dateCreated: date('zerver_stream', row, 'date_created', now),
      creatorId: row.creator === null || row.creator === undefined ? null : (users.lookup(int('zerver_stream', row, 'creator')) ?? null),
      inviteOnly: bool('zerver_stream', row, 'invite_only', false),
      isWebPublic: bool('zerver_stream', row, 'is_web_public', false),
      messageRetentionDays: optInt('zerver_stream', row, 'message_retention_days'),
      historyPublicToSubscribers: bool('zerver_stream', row, 'history_public_to_subscribers', true),
      canRemoveSubscribersGroupId: groups.opt('zerver_stream', row, 'can_remove_subscribers_group') ?? admins,
      // Level 333 and later exports name the group; older ones the stream_post_policy it replaced.
      canSendMessageGroupId:
        optGroup(row, 'can_send_message_group') ?? systemIds.get(streamPostPolicyGroup(optInt('zerver_stream', row, 'stream_post_policy') ?? 1) ?? '') ?? null,
      canAdministerChannelGroupId: optGroup(row, 'can_administer_channel_group'),
      canAddSubscribersGroupId: optGroup(row, 'can_add_subscribers_group'),
      canSubscribeGroupId: optGroup(row, 'can_subscribe_group'),
      deactivated: bool('zerver_stream', row, 'deactivated', false),
    }
  })
  await tx.stream.createMany({ data: streamData })
  const defaultSending = userRows.flatMap((row, i) => {
    const a = row.default_sending_stream == null ? null : (streams.lookup(int('zerver_userprofile', row, 'default_sending_stream')) ?? null)
    const b = row.default_events_register_stream == null ? null : (streams.lookup(int('zerver_userprofile', row, 'default_events_register_stream')) ?? null)
    return a === null && b === null ? [] : [[newUserIds[i] as number, a, b] as const]
  })
  if (defaultSending.length > 0) {
    await tx.$executeRawUnsafe(
      'UPDATE user_profile u SET default_sending_stream_id = v.a, default_events_register_stream_id = v.b FROM unnest($1::int[], $2::int[], $3::int[]) AS v(id, a, b) WHERE u.id = v.id',
      defaultSending.map((d) => d[0]),
      defaultSending.map((d) => d[1]),
      defaultSending.map((d) => d[2]),
    )
  }

  // Recipients: a channel, a person, or a group direct-message conversation (its members are its subscribers).
  const recipientOf = new Map<number, { type: number; typeId: number }>()
  for (const row of T('zerver_recipient')) recipientOf.set(int('zerver_recipient', row, 'id'), { type: int('zerver_recipient', row, 'type'), typeId: int('zerver_recipient', row, 'type_id') })
  const huddleMembers = new Map<number, Set<number>>()
  const subscriptionData: Prisma.SubscriptionCreateManyInput[] = []
  const subscribed = new Set<string>()
  for (const row of T('zerver_subscription')) {
    const recipient = recipientOf.get(int('zerver_subscription', row, 'recipient'))
    if (!recipient) throw new ImportDataError(`zerver_subscription row id ${String(row.id)}: 'recipient' ${String(row.recipient)} is no recipient of the export`)
    const userId = users.need('zerver_subscription', row, 'user_profile')
    if (recipient.type === RECIPIENT.DIRECT_MESSAGE_GROUP) {
      const set = huddleMembers.get(recipient.typeId) ?? new Set<number>()
      set.add(userId)
      huddleMembers.set(recipient.typeId, set)
    }
    if (recipient.type !== RECIPIENT.STREAM) continue
    const streamId = streams.need('zerver_recipient', { id: row.recipient, type_id: recipient.typeId }, 'type_id')
    if (subscribed.has(`${userId}:${streamId}`)) continue
    subscribed.add(`${userId}:${streamId}`)
    const color = typeof row.color === 'string' && /^#[0-9a-fA-F]{6}$/.test(row.color) ? row.color : pickStreamColor(subscriptionData.length % STREAM_COLORS.length)
    const opt = (key: string): boolean | null => (typeof row[key] === 'boolean' ? (row[key] as boolean) : null)
    subscriptionData.push({
      userId,
      streamId,
      active: bool('zerver_subscription', row, 'active', true),
      color,
      isMuted: bool('zerver_subscription', row, 'is_muted', false),
      pinToTop: bool('zerver_subscription', row, 'pin_to_top', false),
      desktopNotifications: opt('desktop_notifications'),
      audibleNotifications: opt('audible_notifications'),
      pushNotifications: opt('push_notifications'),
      emailNotifications: opt('email_notifications'),
      wildcardMentionsNotify: opt('wildcard_mentions_notify'),
    })
  }
  await tx.subscription.createMany({ data: subscriptionData })
  await tx.defaultStream.createMany({ data: T('zerver_defaultstream').map((row) => ({ realmId, streamId: streams.need('zerver_defaultstream', row, 'stream') })), skipDuplicates: true })
  w.progress(`  ${streamRows.length} channels, ${subscriptionData.length} subscriptions`)

  // The realm's references, now that groups, channels and the bot exist.
  const realmRefs: Record<string, number | null> = {
    notificationBotId: botId as number,
    newStreamAnnouncementsStreamId: realmRow.new_stream_announcements_stream == null ? null : (streams.lookup(int('zerver_realm', realmRow, 'new_stream_announcements_stream')) ?? null),
    signupAnnouncementsStreamId: realmRow.signup_announcements_stream == null ? null : (streams.lookup(int('zerver_realm', realmRow, 'signup_announcements_stream')) ?? null),
    moderationRequestChannelId: moderationChannel(realmRow, streamRows, streams),
  }
  for (const name of REALM_PERMISSION_SETTING_NAMES) {
    const exported = typeof realmRow[name] === 'number' ? groups.lookup(realmRow[name] as number) : undefined
    realmRefs[realmSettingColumn(name)] = exported ?? (systemIds.get(REALM_PERMISSION_SETTINGS[name].config.defaultGroupName) as number)
  }
  if (!('can_manage_billing_group' in realmRow)) {
    realmRefs[realmSettingColumn('can_manage_billing_group')] = await billingGroupOfOlderExport(tx, realmId, now, systemIds.get(SYSTEM_GROUPS.owners) as number, userRows, newUserIds)
  }
  await tx.realm.update({ where: { id: realmId }, data: realmRefs as Prisma.RealmUncheckedUpdateInput })

  // Small per-realm and per-user tables.
  await tx.realmDomain.createMany({ data: T('zerver_realmdomain').map((row) => ({ realmId, domain: str('zerver_realmdomain', row, 'domain'), allowSubdomains: bool('zerver_realmdomain', row, 'allow_subdomains', false) })), skipDuplicates: true })
  await tx.realmLinkifier.createMany({
    data: T('zerver_realmfilter').map((row, i) => ({ realmId, pattern: str('zerver_realmfilter', row, 'pattern'), urlTemplate: str('zerver_realmfilter', row, 'url_template'), order: optInt('zerver_realmfilter', row, 'order') ?? i })),
    skipDuplicates: true,
  })
  const fieldRows = T('zerver_customprofilefield')
  const { ids: newFieldIds, map: fields } = await renumber(tx, 'zerver_customprofilefield', fieldRows, 'custom_profile_field', 'custom profile field')
  await tx.customProfileField.createMany({
    data: fieldRows.map((row, i) => ({
      id: newFieldIds[i] as number,
      realmId,
      name: str('zerver_customprofilefield', row, 'name'),
      hint: str('zerver_customprofilefield', row, 'hint', ''),
      type: int('zerver_customprofilefield', row, 'field_type'),
      order: optInt('zerver_customprofilefield', row, 'order') ?? i,
      fieldData: str('zerver_customprofilefield', row, 'field_data', ''),
      displayInProfileSummary: bool('zerver_customprofilefield', row, 'display_in_profile_summary', false),
      required: bool('zerver_customprofilefield', row, 'required', false),
      editableByUser: bool('zerver_customprofilefield', row, 'editable_by_user', true),
    })),
  })
  await tx.customProfileFieldValue.createMany({
    data: T('zerver_customprofilefieldvalue').map((row) => ({
      userId: users.need('zerver_customprofilefieldvalue', row, 'user_profile'),
      fieldId: fields.need('zerver_customprofilefieldvalue', row, 'field'),
      value: str('zerver_customprofilefieldvalue', row, 'value'),
      renderedValue: typeof row.rendered_value === 'string' ? row.rendered_value : null,
    })),
    skipDuplicates: true,
  })
  await tx.userTopic.createMany({
    data: T('zerver_usertopic').map((row) => {
      const streamId = row.stream !== undefined ? streams.need('zerver_usertopic', row, 'stream') : streams.need('zerver_recipient', { id: row.recipient, type_id: recipientOf.get(int('zerver_usertopic', row, 'recipient'))?.typeId }, 'type_id')
      return {
        userId: users.need('zerver_usertopic', row, 'user_profile'),
        streamId,
        topicName: str('zerver_usertopic', row, 'topic_name'),
        visibilityPolicy: optInt('zerver_usertopic', row, 'visibility_policy') ?? 1,
        lastUpdated: date('zerver_usertopic', row, 'last_updated', now),
      }
    }),
    skipDuplicates: true,
  })
  await tx.mutedUser.createMany({
    data: T('zerver_muteduser').map((row) => ({ userId: users.need('zerver_muteduser', row, 'user_profile'), mutedUserId: users.need('zerver_muteduser', row, 'muted_user'), dateMuted: date('zerver_muteduser', row, 'date_muted', now) })),
    skipDuplicates: true,
  })
  await tx.alertWord.createMany({ data: T('zerver_alertword').map((row) => ({ userId: users.need('zerver_alertword', row, 'user_profile'), word: str('zerver_alertword', row, 'word') })), skipDuplicates: true })
  const emojiRows = T('zerver_realmemoji').filter((row) => w.emojiFileNames.has(str('zerver_realmemoji', row, 'file_name')))
  const { ids: newEmojiIds, map: emoji } = await renumber(tx, 'zerver_realmemoji', emojiRows, 'realm_emoji', 'custom emoji')
  await tx.realmEmoji.createMany({
    data: emojiRows.map((row, i) => ({
      id: newEmojiIds[i] as number,
      realmId,
      name: str('zerver_realmemoji', row, 'name'),
      fileName: w.emojiFileNames.get(str('zerver_realmemoji', row, 'file_name')) as string,
      authorId: row.author == null ? null : (users.lookup(int('zerver_realmemoji', row, 'author')) ?? null),
      isAnimated: bool('zerver_realmemoji', row, 'is_animated', false),
      deactivated: bool('zerver_realmemoji', row, 'deactivated', false),
    })),
  })

  // Messages, their recipients' rows, reactions and uploads.
  const messageRows = T('zerver_message')
  const { ids: newMessageIds, map: messages } = await renumber(tx, 'zerver_message', messageRows, 'message', 'message')
  const clients = new Map(T('zerver_client').map((row) => [row.id, typeof row.name === 'string' ? row.name : '']))
  const maps = { users, groups, streams }
  // Messages without rendered HTML (a Slack export's) are rendered with everything the import made.
  let renderContext: RenderContext | undefined
  const renderImported = (content: string): string => {
    renderContext ??= {
      usersByName: userData.reduce((m, u) => (u.isActive ? m.set(u.fullName.toLowerCase(), [...(m.get(u.fullName.toLowerCase()) ?? []), { id: u.id as number, fullName: u.fullName }]) : m), new Map<string, { id: number; fullName: string }[]>()),
      usersById: new Map(userData.map((u) => [u.id as number, { id: u.id as number, fullName: u.fullName }])),
      groupsByName: new Map(groupData.filter((g) => !g.isAnonymous).map((g) => [g.name.toLowerCase(), { id: g.id as number, name: g.name }])),
      streamsByName: new Map(streamData.map((st) => [st.name.toLowerCase(), { id: st.id as number, name: st.name }])),
      realmEmoji: new Map(emojiRows.map((e, i) => [str('zerver_realmemoji', e, 'name'), { id: String(newEmojiIds[i]), name: str('zerver_realmemoji', e, 'name'), sourceUrl: `/user_avatars/${realmEmojiPath(realmId, w.emojiFileNames.get(str('zerver_realmemoji', e, 'file_name')) as string)}` }])),
      realmUrl: realmUrl(realm0, services.config.externalUrl),
    }
    return renderMarkdown(content, renderContext).html
  }
  const mapEdit = (entry: unknown): unknown => {
    if (typeof entry !== 'object' || entry === null) return entry
    const e = { ...(entry as Record<string, unknown>) }
    if (typeof e.user_id === 'number') e.user_id = users.lookup(e.user_id) ?? null
    for (const key of ['prev_stream', 'stream']) if (typeof e[key] === 'number') e[key] = streams.lookup(e[key] as number) ?? null
    for (const key of ['prev_content', 'prev_rendered_content']) if (typeof e[key] === 'string') e[key] = key === 'prev_content' ? rewriteUploadPaths(e[key] as string, w.uploadPaths) : rewriteRendered(e[key] as string, maps, w.uploadPaths)
    return e
  }
  const messageData: Prisma.MessageCreateManyInput[] = messageRows.map((row, i) => {
    const senderId = users.need('zerver_message', row, 'sender')
    const recipientId = int('zerver_message', row, 'recipient')
    const recipient = recipientOf.get(recipientId)
    if (!recipient) throw new ImportDataError(`zerver_message row id ${String(row.id)}: 'recipient' ${recipientId} is no recipient of the export`)
    let streamId: number | null = null
    let dmUserIds: number[] = []
    if (recipient.type === RECIPIENT.STREAM) streamId = streams.need('zerver_message', { id: row.id, channel: recipient.typeId }, 'channel')
    else if (recipient.type === RECIPIENT.PERSONAL) dmUserIds = [...new Set([senderId, users.need('zerver_message', { id: row.id, recipient_user: recipient.typeId }, 'recipient_user')])]
    else if (recipient.type === RECIPIENT.DIRECT_MESSAGE_GROUP) {
      const group = huddleMembers.get(recipient.typeId)
      if (!group) throw new ImportDataError(`zerver_message row id ${String(row.id)}: its direct-message group ${recipient.typeId} has no members in zerver_subscription`)
      dmUserIds = [...new Set([...group, senderId])]
    } else throw new ImportDataError(`zerver_recipient row id ${recipientId}: 'type' ${recipient.type} is not 1, 2 or 3`)
    dmUserIds.sort((a, b) => a - b)
    let editHistory: unknown = null
    if (typeof row.edit_history === 'string' && row.edit_history !== '') {
      try {
        const parsed: unknown = JSON.parse(row.edit_history)
        editHistory = Array.isArray(parsed) ? parsed.map(mapEdit) : null
      } catch {
        throw new ImportDataError(`zerver_message row id ${String(row.id)}: 'edit_history' is not valid JSON`)
      }
    }
    const client = typeof row.sending_client === 'string' ? row.sending_client : (clients.get(row.sending_client) ?? '')
    return {
      id: newMessageIds[i] as number,
      realmId,
      senderId,
      streamId,
      topic: streamId === null ? '' : str('zerver_message', row, row.subject !== undefined ? 'subject' : 'topic_name', '', MAX_TOPIC_LENGTH),
      dmUserIds,
      content: rewriteUploadPaths(str('zerver_message', row, 'content', undefined, MAX_MESSAGE_LENGTH), w.uploadPaths),
      renderedContent:
        typeof row.rendered_content === 'string'
          ? rewriteRendered(str('zerver_message', row, 'rendered_content', undefined, MAX_RENDERED_CONTENT_BYTES), maps, w.uploadPaths)
          : renderImported(rewriteUploadPaths(str('zerver_message', row, 'content'), w.uploadPaths)),
      dateSent: date('zerver_message', row, 'date_sent', now),
      lastEditTime: optDate('zerver_message', row, 'last_edit_time'),
      editHistory: editHistory === null ? P.DbNull : (editHistory as Prisma.InputJsonValue),
      client,
      hasLink: bool('zerver_message', row, 'has_link', false),
      hasImage: bool('zerver_message', row, 'has_image', false),
      hasAttachment: bool('zerver_message', row, 'has_attachment', false),
    }
  })
  await tx.message.createMany({ data: messageData })
  const userMessages = new Map<string, Prisma.UserMessageCreateManyInput>()
  for (const row of T('zerver_usermessage')) {
    const um = { userId: users.need('zerver_usermessage', row, 'user_profile'), messageId: messages.need('zerver_usermessage', row, 'message'), flags: optInt('zerver_usermessage', row, 'flags_mask') ?? 0 }
    userMessages.set(`${um.userId}:${um.messageId}`, um)
  }
  await tx.userMessage.createMany({ data: [...userMessages.values()] })
  w.progress(`  ${messageData.length} messages, ${userMessages.size} message flags`)
  await tx.reaction.createMany({
    data: T('zerver_reaction').flatMap((row) => {
      const type = str('zerver_reaction', row, 'reaction_type', 'unicode_emoji')
      let code = str('zerver_reaction', row, 'emoji_code')
      if (type === 'realm_emoji') {
        const mapped = emoji.lookup(Number(code))
        if (mapped === undefined) return [] // the emoji's image is not in the export
        code = String(mapped)
      }
      return [{ messageId: messages.need('zerver_reaction', row, 'message'), userId: users.need('zerver_reaction', row, 'user_profile'), emojiName: str('zerver_reaction', row, 'emoji_name'), emojiCode: code, reactionType: type }]
    }),
    skipDuplicates: true,
  })
  const firstMessage = new Map<number, number>()
  for (const m of messageData) if (m.streamId != null && (firstMessage.get(m.streamId) ?? Infinity) > (m.id as number)) firstMessage.set(m.streamId, m.id as number)
  if (firstMessage.size > 0) {
    await tx.$executeRawUnsafe('UPDATE stream s SET first_message_id = v.m FROM unnest($1::int[], $2::int[]) AS v(id, m) WHERE s.id = v.id', [...firstMessage.keys()], [...firstMessage.values()])
  }

  const attachmentRows = T('zerver_attachment')
  const newAttachmentIds = await allocate(tx, 'attachment', attachmentRows.length)
  await tx.attachment.createMany({
    data: attachmentRows.map((row, i) => {
      const file = w.uploadFiles.get(str('zerver_attachment', row, 'path_id')) as { path: string; size: number; contentType: string }
      return {
        id: newAttachmentIds[i] as number,
        realmId,
        ownerId: users.need('zerver_attachment', row, 'owner'),
        fileName: file.path.split('/').pop() as string,
        pathId: file.path,
        size: file.size,
        contentType: file.contentType,
        createdAt: date('zerver_attachment', row, 'create_time', now),
      }
    }),
  })
  await tx.attachmentMessage.createMany({
    data: attachmentRows.flatMap((row, i) => {
      const ids = Array.isArray(row.messages) ? row.messages : []
      return ids.flatMap((m) => {
        const messageId = typeof m === 'number' ? messages.lookup(m) : undefined
        return messageId === undefined ? [] : [{ attachmentId: newAttachmentIds[i] as number, messageId }]
      })
    }),
    skipDuplicates: true,
  })
  return { users: userRows.length, channels: streamRows.length, messages: messageData.length }
}
