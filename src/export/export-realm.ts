// `roost export`: one organization written in upstream's export format
// (zulip-format.ts) to a .tar.gz. Reads only; the files are gathered in a
// private temporary directory, packed with `tar` and the directory removed.
// Secrets stay behind: no password hashes, API keys, sessions, push tokens or
// invitations. Messages are read in pages of MESSAGES_PER_FILE, one file each.
import { createHash } from 'node:crypto'
import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { create as createTar } from 'tar'
import type { PrismaClient, Realm } from '../db/index.js'
import type { FileStorage } from '../storage/file-storage.js'
import { REALM_PERMISSION_SETTING_NAMES, realmSettingColumn } from '../domain/permission-settings.js'
import { MESSAGES_PER_FILE, RECIPIENT, REALM_FIELD_NAMES, REALM_SPECIAL_FIELDS, USER_SETTINGS_SPECIAL_FIELDS, emojiPath, snakeCase, toSeconds, type Row, type Tables } from './zulip-format.js'
import { getBillingAdminIds } from '../queries/billing-admins.js'

export interface ExportOptions {
  prisma: PrismaClient
  storage: FileStorage
  realm: Realm
  /** The .tar.gz to write. */
  output: string
  progress: (line: string) => void
}

export interface ExportSummary {
  users: number
  channels: number
  messages: number
  files: number
}

/** Recipient IDs of the export: one per user, channel and direct-message group, numbered in that order. */
class Recipients {
  readonly rows: Row[] = []
  private readonly ids = new Map<string, number>()
  idOf(type: number, typeId: number): number {
    const key = `${type}:${typeId}`
    let id = this.ids.get(key)
    if (id === undefined) {
      id = this.rows.length + 1
      this.ids.set(key, id)
      this.rows.push({ id, type, type_id: typeId })
    }
    return id
  }
}

const settingsRow = (settings: Record<string, unknown> | null): Row =>
  Object.fromEntries(Object.entries(settings ?? {}).filter(([k]) => !USER_SETTINGS_SPECIAL_FIELDS.has(k)).map(([k, v]) => [snakeCase(k), v]))

async function fileOut(dir: string, relative: string, data: Buffer | string): Promise<void> {
  const target = path.join(dir, relative)
  await mkdir(path.dirname(target), { recursive: true })
  await writeFile(target, data)
}

const json = (value: unknown): string => `${JSON.stringify(value, null, 2)}\n`

export async function exportRealm(options: ExportOptions): Promise<ExportSummary> {
  const { prisma, storage, realm, progress } = options
  const scratch = await mkdtemp(path.join(os.tmpdir(), 'roost-export-'))
  const top = `zulip-export-${realm.stringId || 'root'}`
  const dir = path.join(scratch, top)
  try {
    await mkdir(dir)
    const tables: Tables = {}
    const recipients = new Recipients()
    const realmId = realm.id

    // The realm and its settings.
    const realmRow: Row = {
      id: realmId,
      string_id: realm.stringId,
      name: realm.name,
      description: realm.description,
      date_created: toSeconds(realm.dateCreated),
      deactivated: realm.deactivated,
      new_stream_announcements_stream: realm.newStreamAnnouncementsStreamId,
      signup_announcements_stream: realm.signupAnnouncementsStreamId,
      moderation_request_channel: realm.moderationRequestChannelId,
    }
    for (const [field, value] of Object.entries(realm)) {
      if (REALM_SPECIAL_FIELDS.has(field) || /GroupId$|GroupsId$/.test(field)) continue
      realmRow[REALM_FIELD_NAMES[field] ?? snakeCase(field)] = value
    }
    const realmRecord = realm as unknown as Record<string, number | null>
    for (const name of REALM_PERMISSION_SETTING_NAMES) realmRow[name] = realmRecord[realmSettingColumn(name)] ?? null
    tables.zerver_realm = [realmRow]
    tables.zerver_realmdomain = (await prisma.realmDomain.findMany({ where: { realmId }, orderBy: { id: 'asc' } })).map((d) => ({
      id: d.id,
      realm: realmId,
      domain: d.domain,
      allow_subdomains: d.allowSubdomains,
    }))
    tables.zerver_realmfilter = (await prisma.realmLinkifier.findMany({ where: { realmId }, orderBy: { id: 'asc' } })).map((l) => ({
      id: l.id,
      realm: realmId,
      pattern: l.pattern,
      url_template: l.urlTemplate,
      order: l.order,
    }))

    // People and bots; the system bots stand apart, as upstream's cross-realm bots.
    const users = await prisma.user.findMany({ where: { realmId }, include: { settings: true }, orderBy: { id: 'asc' } })
    // Written for importers older than upstream level 363; can_manage_billing_group (with the realm) is what decides it.
    const billingAdmins = await getBillingAdminIds(prisma, realmId)
    tables.zerver_userprofile = []
    tables.zerver_userprofile_crossrealm = []
    for (const u of users) {
      if (u.isSystemBot) {
        tables.zerver_userprofile_crossrealm.push({ id: u.id, email: u.email, date_joined: toSeconds(u.dateJoined) })
        continue
      }
      recipients.idOf(RECIPIENT.PERSONAL, u.id)
      tables.zerver_userprofile.push({
        ...settingsRow(u.settings as Record<string, unknown> | null),
        id: u.id,
        realm: realmId,
        email: u.email,
        delivery_email: u.deliveryEmail,
        full_name: u.fullName,
        role: u.role,
        is_active: u.isActive,
        is_bot: u.isBot,
        bot_type: u.botType,
        bot_owner: u.botOwnerId,
        default_sending_stream: u.defaultSendingStreamId,
        default_events_register_stream: u.defaultEventsRegisterStreamId,
        default_all_public_streams: u.defaultAllPublicStreams,
        is_billing_admin: billingAdmins.has(u.id),
        is_mirror_dummy: false,
        date_joined: toSeconds(u.dateJoined),
        last_login: toSeconds(u.lastLogin),
        timezone: u.timezone,
        avatar_source: u.avatarSource,
        avatar_version: u.avatarVersion,
        tos_version: u.tosVersion,
      })
    }
    const userIds = users.map((u) => u.id)

    tables.zerver_customprofilefield = (await prisma.customProfileField.findMany({ where: { realmId }, orderBy: { id: 'asc' } })).map((f) => ({
      id: f.id,
      realm: realmId,
      name: f.name,
      hint: f.hint,
      field_type: f.type,
      order: f.order,
      field_data: f.fieldData,
      display_in_profile_summary: f.displayInProfileSummary,
      required: f.required,
      editable_by_user: f.editableByUser,
    }))
    tables.zerver_customprofilefieldvalue = (await prisma.customProfileFieldValue.findMany({ where: { userId: { in: userIds } }, orderBy: { id: 'asc' } })).map((v) => ({
      id: v.id,
      user_profile: v.userId,
      field: v.fieldId,
      value: v.value,
      rendered_value: v.renderedValue,
    }))

    // Groups: every group is a zerver_usergroup row; named ones also a zerver_namedusergroup row.
    const groups = await prisma.userGroup.findMany({ where: { realmId }, orderBy: { id: 'asc' } })
    const groupIds = groups.map((g) => g.id)
    tables.zerver_usergroup = groups.map((g) => ({ id: g.id, realm: realmId }))
    tables.zerver_namedusergroup = groups
      .filter((g) => !g.isAnonymous)
      .map((g) => ({
        usergroup_ptr: g.id,
        realm_for_sharding: realmId,
        name: g.name,
        description: g.description,
        is_system_group: g.isSystemGroup,
        date_created: toSeconds(g.dateCreated),
        creator: g.creatorId,
        can_add_members_group: g.canAddMembersGroupId,
        can_join_group: g.canJoinGroupId,
        can_leave_group: g.canLeaveGroupId,
        can_manage_group: g.canManageGroupId,
        can_mention_group: g.canMentionGroupId,
        can_remove_members_group: g.canRemoveMembersGroupId,
        deactivated: g.deactivated,
      }))
    let membershipId = 0
    tables.zerver_usergroupmembership = (await prisma.userGroupMember.findMany({ where: { groupId: { in: groupIds } }, orderBy: [{ groupId: 'asc' }, { userId: 'asc' }] })).map((m) => ({
      id: ++membershipId,
      user_group: m.groupId,
      user_profile: m.userId,
    }))
    let edgeId = 0
    tables.zerver_groupgroupmembership = (await prisma.userGroupSubgroup.findMany({ where: { supergroupId: { in: groupIds } }, orderBy: [{ supergroupId: 'asc' }, { subgroupId: 'asc' }] })).map((e) => ({
      id: ++edgeId,
      supergroup: e.supergroupId,
      subgroup: e.subgroupId,
    }))

    // Channels and subscriptions.
    const streams = await prisma.stream.findMany({ where: { realmId }, orderBy: { id: 'asc' } })
    tables.zerver_stream = streams.map((s) => ({
      id: s.id,
      realm: realmId,
      name: s.name,
      description: s.description,
      rendered_description: s.renderedDescription,
      date_created: toSeconds(s.dateCreated),
      creator: s.creatorId,
      invite_only: s.inviteOnly,
      is_web_public: s.isWebPublic,
      message_retention_days: s.messageRetentionDays,
      history_public_to_subscribers: s.historyPublicToSubscribers,
      first_message_id: s.firstMessageId,
      can_remove_subscribers_group: s.canRemoveSubscribersGroupId,
      can_send_message_group: s.canSendMessageGroupId,
      can_administer_channel_group: s.canAdministerChannelGroupId,
      can_add_subscribers_group: s.canAddSubscribersGroupId,
      can_subscribe_group: s.canSubscribeGroupId,
      deactivated: s.deactivated,
      recipient: recipients.idOf(RECIPIENT.STREAM, s.id),
    }))
    tables.zerver_defaultstream = (await prisma.defaultStream.findMany({ where: { realmId }, orderBy: { id: 'asc' } })).map((d) => ({ id: d.id, realm: realmId, stream: d.streamId }))
    const subscriptions = await prisma.subscription.findMany({ where: { streamId: { in: streams.map((s) => s.id) } }, orderBy: { id: 'asc' } })
    tables.zerver_subscription = subscriptions.map((s) => ({
      id: s.id,
      user_profile: s.userId,
      recipient: recipients.idOf(RECIPIENT.STREAM, s.streamId),
      active: s.active,
      color: s.color,
      is_muted: s.isMuted,
      pin_to_top: s.pinToTop,
      desktop_notifications: s.desktopNotifications,
      audible_notifications: s.audibleNotifications,
      push_notifications: s.pushNotifications,
      email_notifications: s.emailNotifications,
      wildcard_mentions_notify: s.wildcardMentionsNotify,
    }))
    tables.zerver_usertopic = (await prisma.userTopic.findMany({ where: { userId: { in: userIds } }, orderBy: { id: 'asc' } })).map((t) => ({
      id: t.id,
      user_profile: t.userId,
      stream: t.streamId,
      recipient: recipients.idOf(RECIPIENT.STREAM, t.streamId),
      topic_name: t.topicName,
      visibility_policy: t.visibilityPolicy,
      last_updated: toSeconds(t.lastUpdated),
    }))
    tables.zerver_muteduser = (await prisma.mutedUser.findMany({ where: { userId: { in: userIds } }, orderBy: { id: 'asc' } })).map((m) => ({
      id: m.id,
      user_profile: m.userId,
      muted_user: m.mutedUserId,
      date_muted: toSeconds(m.dateMuted),
    }))
    tables.zerver_alertword = (await prisma.alertWord.findMany({ where: { userId: { in: userIds } }, orderBy: { id: 'asc' } })).map((a) => ({
      id: a.id,
      realm: realmId,
      user_profile: a.userId,
      word: a.word,
    }))
    const emoji = await prisma.realmEmoji.findMany({ where: { realmId }, orderBy: { id: 'asc' } })
    tables.zerver_realmemoji = emoji.map((e) => ({
      id: e.id,
      realm: realmId,
      name: e.name,
      author: e.authorId,
      file_name: e.fileName,
      is_animated: e.isAnimated,
      deactivated: e.deactivated,
    }))

    // Messages, a file per page; direct-message groups of three or more become zerver_huddle rows.
    progress('exporting messages…')
    const huddles = new Map<string, Row>()
    const huddleSubscriptions: Row[] = []
    const messageIds: number[] = []
    let cursor = 0
    let fileNumber = 0
    let reactionsOut: Row[] = []
    for (;;) {
      const page = await prisma.message.findMany({ where: { realmId, id: { gt: cursor } }, orderBy: { id: 'asc' }, take: MESSAGES_PER_FILE })
      if (page.length === 0) break
      cursor = (page[page.length - 1] as { id: number }).id
      const ids = page.map((m) => m.id)
      messageIds.push(...ids)
      const messages: Row[] = page.map((m) => {
        let recipient: number
        if (m.streamId !== null) recipient = recipients.idOf(RECIPIENT.STREAM, m.streamId)
        else if (m.dmUserIds.length <= 2) {
          const other = m.dmUserIds.find((id) => id !== m.senderId) ?? m.senderId
          recipient = recipients.idOf(RECIPIENT.PERSONAL, other)
        } else {
          const hash = createHash('sha1').update(m.dmUserIds.join(',')).digest('hex')
          let huddle = huddles.get(hash)
          if (!huddle) {
            huddle = { id: huddles.size + 1, huddle_hash: hash, group_size: m.dmUserIds.length }
            huddle.recipient = recipients.idOf(RECIPIENT.DIRECT_MESSAGE_GROUP, huddle.id as number)
            huddles.set(hash, huddle)
            for (const userId of m.dmUserIds) huddleSubscriptions.push({ user_profile: userId, recipient: huddle.recipient, active: true, color: '#c2c2c2', is_muted: false })
          }
          recipient = huddle.recipient as number
        }
        return {
          id: m.id,
          realm: realmId,
          sender: m.senderId,
          recipient,
          subject: m.topic,
          content: m.content,
          rendered_content: m.renderedContent,
          rendered_content_version: 1,
          date_sent: toSeconds(m.dateSent),
          last_edit_time: toSeconds(m.lastEditTime),
          edit_history: m.editHistory === null ? null : JSON.stringify(m.editHistory),
          sending_client: m.client,
          has_link: m.hasLink,
          has_image: m.hasImage,
          has_attachment: m.hasAttachment,
        }
      })
      const userMessages = await prisma.userMessage.findMany({ where: { messageId: { in: ids } }, orderBy: [{ messageId: 'asc' }, { userId: 'asc' }] })
      const zerverUserMessage = userMessages.map((um, i) => ({ id: fileNumber * 1_000_000 + i + 1, user_profile: um.userId, message: um.messageId, flags_mask: um.flags }))
      fileNumber++
      await fileOut(dir, `messages-${String(fileNumber).padStart(6, '0')}.json`, json({ zerver_message: messages, zerver_usermessage: zerverUserMessage }))
      const reactions = await prisma.reaction.findMany({ where: { messageId: { in: ids } }, orderBy: { id: 'asc' } })
      reactionsOut = reactionsOut.concat(
        reactions.map((r) => ({ id: r.id, user_profile: r.userId, message: r.messageId, emoji_name: r.emojiName, emoji_code: r.emojiCode, reaction_type: r.reactionType })),
      )
      progress(`  ${messageIds.length} messages`)
    }
    tables.zerver_reaction = reactionsOut
    tables.zerver_huddle = [...huddles.values()]
    let subscriptionId = subscriptions.reduce((max, s) => Math.max(max, s.id), 0)
    for (const s of huddleSubscriptions) tables.zerver_subscription.push({ id: ++subscriptionId, ...s })
    tables.zerver_recipient = recipients.rows
    await fileOut(dir, 'realm.json', json(tables))

    // Uploads and their records.
    progress('exporting files…')
    const attachments = await prisma.attachment.findMany({ where: { realmId }, include: { messages: { select: { messageId: true } } }, orderBy: { id: 'asc' } })
    await fileOut(
      dir,
      'attachment.json',
      json({
        zerver_attachment: attachments.map((a) => ({
          id: a.id,
          realm: realmId,
          owner: a.ownerId,
          file_name: a.fileName,
          path_id: a.pathId,
          size: a.size,
          content_type: a.contentType,
          create_time: toSeconds(a.createdAt),
          messages: a.messages.map((m) => m.messageId),
          scheduled_messages: [],
        })),
      }),
    )
    let files = 0
    const uploadRecords: Row[] = []
    for (const a of attachments) {
      const stored = await storage.get(a.pathId)
      if (!stored) {
        progress(`  warning: the file of the upload ${a.pathId} is missing from storage; its record is left out`)
        continue
      }
      await fileOut(path.join(dir, 'uploads'), a.pathId, stored.data)
      uploadRecords.push({ realm_id: realmId, user_profile_id: a.ownerId, s3_path: a.pathId, path: a.pathId, size: stored.data.length, content_type: stored.contentType, last_modified: toSeconds(a.createdAt) })
      files++
    }
    await fileOut(dir, 'uploads/records.json', json(uploadRecords))

    const avatarRecords: Row[] = []
    for (const u of users) {
      if (u.avatarSource !== 'U' || u.avatarHash === null) continue
      const stored = await storage.get(`${realmId}/avatars/${u.avatarHash}`)
      if (!stored) continue
      const relative = `${realmId}/${u.avatarHash}.original`
      await fileOut(path.join(dir, 'avatars'), relative, stored.data)
      avatarRecords.push({ realm_id: realmId, user_profile_id: u.id, user_profile_email: u.email, s3_path: relative, path: relative, size: stored.data.length, content_type: stored.contentType })
      files++
    }
    await fileOut(dir, 'avatars/records.json', json(avatarRecords))

    const emojiRecords: Row[] = []
    for (const e of emoji) {
      const key = emojiPath(realmId, e.fileName)
      const stored = await storage.get(key)
      if (!stored) continue
      await fileOut(path.join(dir, 'emoji'), key, stored.data)
      emojiRecords.push({ realm_id: realmId, author: e.authorId, path: key, s3_path: key, file_name: e.fileName, name: e.name, deactivated: e.deactivated })
      files++
    }
    await fileOut(dir, 'emoji/records.json', json(emojiRecords))
    await fileOut(dir, 'realm_icons/records.json', json([]))

    progress(`writing ${options.output}…`)
    // Readable by the operator alone: it holds every private message of the organization.
    await createTar({ gzip: true, file: options.output, cwd: scratch, portable: true, mode: 0o600 }, [top])
    return { users: tables.zerver_userprofile.length, channels: streams.length, messages: messageIds.length, files }
  } finally {
    await rm(scratch, { recursive: true, force: true })
  }
}
