// A standard Slack export (.zip) converted to the same bundle an export in
// upstream's format gives (zulip-bundle.ts), following the facts of upstream's
// Slack importer (zerver/data_import/slack.py): users.json (owners, admins,
// guests from is_restricted/is_ultra_restricted, bots; a missing or
// zone-less tz becomes America/New_York), channels.json (public) and
// groups.json (private) with purpose as description, members as subscribers,
// archived channels deactivated, #general and #random default channels and
// #general the announcements channel; mpims.json (group direct messages) and
// dms.json (direct messages); per-conversation daily files. Unthreaded
// channel messages go to the topic "imported from Slack"; each thread gets
// its own topic, "<date> <start of the first message>" cut to 60 characters
// with "…" and " (2)", " (3)"… on collisions; messages longer than Roost's
// limit are cut as the API cuts them. Join, leave, rename and pin
// notices are skipped; reactions keep their base emoji (skin tones dropped)
// mapped through the iamcal names to Unicode emoji, or to custom emoji.
//
// Not like upstream: there is no Slack API token and no network here, so
// users come from users.json (an address is required, bots get
// `<name>-bot@<domain>`), custom emoji come from emoji.json with their image
// in the zip (`emoji/<name>.<ext>`), and a message's file is imported only
// when the zip holds it as `__uploads/<file id>/<name>` (the layout of
// slackdump); other files stay links to Slack, as upstream leaves non-Slack
// links.
import { createRequire } from 'node:module'
import type { Row, Tables } from '../export/zulip-format.js'
import { RECIPIENT } from '../export/zulip-format.js'
import { emojiCodeForName, emojiNameForCode } from '../domain/emoji.js'
import { ROLE } from '../domain/roles.js'
import { FLAG_BITS } from '../domain/flags.js'
import { MAX_MESSAGE_LENGTH, MESSAGE_TRUNCATION_SUFFIX } from '../domain/limits.js'
import { ArchiveError } from './read-archive.js'
import { ImportDataError } from './rows.js'
import type { ZulipBundle } from './zulip-bundle.js'

export interface SlackOptions {
  maxJsonBytes: number
  /** Host part of the bots' made-up addresses. */
  domain: string
  /** The new organization's name. */
  name: string
  progress: (line: string) => void
}

type SlackObject = Record<string, unknown>

const DEFAULT_TOPIC = 'imported from Slack'
const MAX_TOPIC_LENGTH = 60
const SKIPPED_SUBTYPES = new Set(['pinned_item', 'unpinned_item', 'channel_join', 'channel_leave', 'channel_name'])
const DEFAULT_CHANNELS = new Set(['general', 'random'])

const require = createRequire(import.meta.url)
let iamcal: Map<string, string> | undefined
/** Slack's (iamcal's) emoji short name → Unicode code, as upstream's slack_emoji_name_to_codepoint. */
function slackEmojiCode(name: string): string | undefined {
  if (!iamcal) {
    iamcal = new Map()
    for (const e of require('emoji-datasource/emoji.json') as { unified: string; non_qualified?: string | null; short_names: string[] }[]) {
      const code = (e.non_qualified ?? e.unified).toLowerCase()
      for (const n of e.short_names) iamcal.set(n, code)
    }
  }
  return iamcal.get(name)
}

function jsonFile(files: Map<string, Buffer>, name: string, maxJsonBytes: number, required: boolean): unknown[] {
  const data = files.get(name)
  if (!data) {
    if (required) throw new ArchiveError(`the archive has no ${name}: it is not a Slack export`)
    return []
  }
  if (data.length > maxJsonBytes) throw new ArchiveError(`${name} is larger than ${maxJsonBytes} bytes`)
  let value: unknown
  try {
    value = JSON.parse(data.toString('utf8'))
  } catch (error) {
    throw new ArchiveError(`${name} is not valid JSON: ${error instanceof Error ? error.message : String(error)}`)
  }
  if (!Array.isArray(value) || !value.every((v) => typeof v === 'object' && v !== null)) throw new ArchiveError(`${name} is not a list of objects`)
  return value
}

const text = (o: SlackObject, key: string): string | undefined => (typeof o[key] === 'string' ? (o[key] as string) : undefined)
const nested = (o: SlackObject, key: string): SlackObject => (typeof o[key] === 'object' && o[key] !== null ? (o[key] as SlackObject) : {})
const members = (o: SlackObject): string[] => (Array.isArray(o.members) ? o.members.filter((m): m is string => typeof m === 'string') : [])

/** Upstream's truncate_content: at most `max` characters, the last one "…" when cut. */
function truncate(s: string, max: number): string {
  const chars = [...s]
  return chars.length <= max ? s : `${chars.slice(0, max - 1).join('')}…`
}

/** Slack mrkdwn → Markdown: mentions, channel links, links, bold, italics, strikethrough, entities. */
export function slackToMarkdown(
  input: string,
  lookup: { userName: (id: string) => string | undefined; channelName: (id: string) => string | undefined },
): { content: string; mentioned: string[] } {
  const mentioned: string[] = []
  let out = input.replace(/<([^<>]+)>/g, (whole, inner: string) => {
    const [target = '', label] = inner.split('|', 2) as [string, string | undefined]
    if (target.startsWith('@')) {
      const name = lookup.userName(target.slice(1))
      if (name === undefined) return whole
      mentioned.push(target.slice(1))
      return `@**${name}**`
    }
    if (target.startsWith('#')) {
      const name = label ?? lookup.channelName(target.slice(1))
      return name === undefined ? whole : `#**${name}**`
    }
    if (target === '!here' || target === '!channel' || target === '!everyone') return '@**all**'
    if (target.startsWith('!')) return label ?? whole
    if (/^(https?|mailto|ftp):/i.test(target)) return label !== undefined && label !== target ? `[${label}](${target})` : target
    return whole
  })
  out = out
    .replace(/(^|[\s(>])\*([^*\n]+)\*(?=$|[\s).,!?:;])/gm, '$1**$2**')
    .replace(/(^|[\s(>])_([^_\n]+)_(?=$|[\s).,!?:;])/gm, '$1*$2*')
    .replace(/(^|[\s(>])~([^~\n]+)~(?=$|[\s).,!?:;])/gm, '$1~~$2~~')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&')
  return { content: out, mentioned }
}

export function slackToBundle(files: Map<string, Buffer>, options: SlackOptions): ZulipBundle {
  const now = Date.now() / 1000
  const { maxJsonBytes } = options
  // Some Slack exports hold everything inside one top-level directory.
  if (!files.has('channels.json')) {
    const tops = new Set([...files.keys()].map((k) => k.split('/')[0]))
    const top = tops.size === 1 ? [...tops][0] : undefined
    if (top !== undefined && files.has(`${top}/channels.json`)) files = new Map([...files].filter(([k]) => k.startsWith(`${top}/`)).map(([k, v]) => [k.slice(top.length + 1), v]))
  }
  const slackUsers = jsonFile(files, 'users.json', maxJsonBytes, true) as SlackObject[]
  const publicChannels = jsonFile(files, 'channels.json', maxJsonBytes, true) as SlackObject[]
  const privateChannels = jsonFile(files, 'groups.json', maxJsonBytes, false) as SlackObject[]
  const mpims = jsonFile(files, 'mpims.json', maxJsonBytes, false) as SlackObject[]
  const dms = jsonFile(files, 'dms.json', maxJsonBytes, false) as SlackObject[]

  const tables: Tables = {}
  const realmRow: Row = { id: 1, string_id: '', name: options.name, date_created: now, description: '' }
  tables.zerver_realm = [realmRow]
  tables.zerver_recipient = []
  tables.zerver_subscription = []
  const recipient = (type: number, typeId: number): number => {
    const id = tables.zerver_recipient!.length + 1
    tables.zerver_recipient!.push({ id, type, type_id: typeId })
    return id
  }
  const subscribe = (userId: number, recipientId: number): void => {
    tables.zerver_subscription!.push({ id: tables.zerver_subscription!.length + 1, user_profile: userId, recipient: recipientId, active: true })
  }

  // Users.
  const userIds = new Map<string, number>()
  const userNames = new Map<string, string>()
  tables.zerver_userprofile = []
  const emails = new Set<string>()
  for (const u of slackUsers) {
    const slackId = text(u, 'id')
    if (!slackId) throw new ImportDataError('users.json: a user has no id')
    const profile = nested(u, 'profile')
    const isBot = u.is_bot === true || slackId === 'USLACKBOT'
    const fullName = (text(profile, 'real_name') || text(u, 'real_name') || text(u, 'name') || slackId).trim()
    let email = text(profile, 'email')
    if (!email && isBot) email = `${fullName.replace(/Bot/g, '').replace(/\s+/g, '').toLowerCase() || slackId.toLowerCase()}-bot@${options.domain}`
    if (!email) throw new ImportDataError(`users.json: the user ${slackId} (${fullName}) has no email address (profile.email); Slack exports carry addresses for workspaces that allow it`)
    if (emails.has(email.toLowerCase())) {
      // Two Slack accounts with one address become one person, as upstream merges them.
      const first = tables.zerver_userprofile.find((p) => String(p.email).toLowerCase() === email!.toLowerCase()) as Row
      userIds.set(slackId, first.id as number)
      userNames.set(slackId, first.full_name as string)
      continue
    }
    emails.add(email.toLowerCase())
    const id = tables.zerver_userprofile.length + 1
    userIds.set(slackId, id)
    userNames.set(slackId, fullName)
    const tz = text(u, 'tz')
    let role: number = ROLE.MEMBER
    if (u.is_owner === true || u.is_primary_owner === true) role = ROLE.OWNER
    else if (u.is_admin === true) role = ROLE.ADMIN
    if (u.is_restricted === true || u.is_ultra_restricted === true) role = ROLE.GUEST
    tables.zerver_userprofile.push({
      id,
      email,
      delivery_email: email,
      full_name: fullName,
      role,
      is_active: u.deleted !== true,
      is_bot: isBot,
      bot_type: isBot ? 1 : null,
      date_joined: now,
      timezone: tz && tz.includes('/') ? tz : 'America/New_York',
    })
    recipient(RECIPIENT.PERSONAL, id)
  }
  const needUser = (where: string, slackId: string): number => {
    const id = userIds.get(slackId)
    if (id === undefined) throw new ImportDataError(`${where}: ${slackId} is not a user in users.json`)
    return id
  }
  const personal = new Map<number, number>(tables.zerver_recipient.map((r) => [r.type_id as number, r.id as number]))
  options.progress(`  ${tables.zerver_userprofile.length} users`)

  // Channels, public then private.
  tables.zerver_stream = []
  tables.zerver_defaultstream = []
  const channelRecipients = new Map<string, number>()
  const channelNames = new Map<string, string>()
  const subscribers = new Map<number, number[]>()
  for (const [list, inviteOnly] of [[publicChannels, false], [privateChannels, true]] as const) {
    for (const c of list) {
      const name = text(c, 'name')
      if (!name) throw new ImportDataError(`${inviteOnly ? 'groups' : 'channels'}.json: a channel has no name`)
      if (channelRecipients.has(name)) throw new ImportDataError(`${inviteOnly ? 'groups' : 'channels'}.json: two channels are named '${name}'`)
      const id = tables.zerver_stream.length + 1
      const archived = c.is_archived === true
      const recipientId = recipient(RECIPIENT.STREAM, id)
      tables.zerver_stream.push({ id, name, description: text(nested(c, 'purpose'), 'value') ?? '', invite_only: inviteOnly, history_public_to_subscribers: true, date_created: typeof c.created === 'number' ? c.created : now, deactivated: archived, recipient: recipientId })
      if (DEFAULT_CHANNELS.has(name) && !archived) tables.zerver_defaultstream.push({ id: tables.zerver_defaultstream.length + 1, stream: id })
      if (name === 'general') realmRow.new_stream_announcements_stream = id
      channelRecipients.set(name, recipientId)
      if (text(c, 'id')) channelNames.set(text(c, 'id') as string, name)
      const ids = [...new Set(members(c).map((m) => needUser(`${inviteOnly ? 'groups' : 'channels'}.json, channel '${name}'`, m)))]
      subscribers.set(recipientId, ids)
      for (const userId of ids) subscribe(userId, recipientId)
    }
  }
  options.progress(`  ${tables.zerver_stream.length} channels`)

  // Group direct messages and direct messages.
  tables.zerver_huddle = []
  const mpimRecipients = new Map<string, number>()
  for (const m of mpims) {
    const name = text(m, 'name')
    if (!name) throw new ImportDataError('mpims.json: a conversation has no name')
    const id = tables.zerver_huddle.length + 1
    const recipientId = recipient(RECIPIENT.DIRECT_MESSAGE_GROUP, id)
    const ids = [...new Set(members(m).map((u) => needUser(`mpims.json, '${name}'`, u)))]
    tables.zerver_huddle.push({ id, huddle_hash: name, recipient: recipientId, group_size: ids.length })
    mpimRecipients.set(name, recipientId)
    subscribers.set(recipientId, ids)
    for (const userId of ids) subscribe(userId, recipientId)
  }
  const dmMembers = new Map<string, [number, number]>()
  for (const d of dms) {
    const id = text(d, 'id')
    const pair = members(d)
    if (!id || pair.length !== 2) throw new ImportDataError(`dms.json: a conversation (${id ?? 'no id'}) does not have exactly two members`)
    dmMembers.set(id, [needUser(`dms.json, '${id}'`, pair[0] as string), needUser(`dms.json, '${id}'`, pair[1] as string)])
  }

  // Custom emoji: emoji.json names them; the image must be in the zip.
  tables.zerver_realmemoji = []
  const emojiRecords: Row[] = []
  const emojiFiles = new Map<string, Buffer>()
  const customEmoji = new Map<string, number>()
  const emojiJson = files.get('emoji.json')
  if (emojiJson) {
    if (emojiJson.length > maxJsonBytes) throw new ArchiveError(`emoji.json is larger than ${maxJsonBytes} bytes`)
    let names: unknown
    try {
      names = JSON.parse(emojiJson.toString('utf8'))
    } catch {
      throw new ArchiveError('emoji.json is not valid JSON')
    }
    for (const name of Object.keys(typeof names === 'object' && names !== null ? names : {})) {
      const image = [...files.keys()].find((k) => k.startsWith(`emoji/${name}.`) && /\.(png|gif|jpe?g|webp)$/i.test(k))
      if (!image || !/^[a-z0-9_-]{1,60}$/.test(name)) {
        options.progress(`  custom emoji :${name}: skipped: its image is not in the zip (emoji/${name}.png)`)
        continue
      }
      const id = tables.zerver_realmemoji.length + 1
      const fileName = `${id}.${image.split('.').pop()!.toLowerCase()}`
      tables.zerver_realmemoji.push({ id, name, file_name: fileName, author: null, deactivated: false })
      emojiRecords.push({ path: image, file_name: fileName, name })
      emojiFiles.set(image, files.get(image) as Buffer)
      customEmoji.set(name, id)
    }
  }

  // Messages, day by day, in timestamp order.
  const conversations: { dir: string; recipientId?: number; dm?: [number, number] }[] = [
    ...[...channelRecipients].map(([dir, recipientId]) => ({ dir, recipientId })),
    ...[...mpimRecipients].map(([dir, recipientId]) => ({ dir, recipientId })),
    ...[...dmMembers].map(([dir, dm]) => ({ dir, dm })),
  ]
  const byDay = new Map<string, { conversation: (typeof conversations)[number]; file: string }[]>()
  for (const conversation of conversations) {
    for (const name of files.keys()) {
      const match = new RegExp(`^${conversation.dir.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}/([^/]+\\.json)$`).exec(name)
      if (!match) continue
      const day = match[1] as string
      byDay.set(day, [...(byDay.get(day) ?? []), { conversation, file: name }])
    }
  }
  tables.zerver_message = []
  tables.zerver_usermessage = []
  tables.zerver_reaction = []
  tables.zerver_attachment = []
  const uploadRecords: Row[] = []
  const uploads = new Map<string, Buffer>()
  const threadTopics = new Map<string, string>()
  const threadParents = new Map<string, string>()
  const topicCounts = new Map<string, number>()
  let skipped = 0
  let linkedFiles = 0
  for (const day of [...byDay.keys()].sort()) {
    const dayMessages: { m: SlackObject; conversation: (typeof conversations)[number]; file: string }[] = []
    for (const { conversation, file } of byDay.get(day) ?? []) {
      for (const m of jsonFile(files, file, maxJsonBytes, true) as SlackObject[]) dayMessages.push({ m, conversation, file })
    }
    dayMessages.sort((a, b) => Number(a.m.ts) - Number(b.m.ts))
    for (const { m, conversation, file } of dayMessages) {
      const subtype = text(m, 'subtype')
      const slackUser = text(m, 'user') ?? text(nested(m, 'file'), 'user')
      if (!slackUser || slackUser === 'U00' || (subtype !== undefined && SKIPPED_SUBTYPES.has(subtype)) || text(m, 'mimetype') === 'application/vnd.slack-docs') {
        skipped++
        continue
      }
      const ts = Number(m.ts)
      if (!Number.isFinite(ts)) throw new ImportDataError(`${file}: a message has no valid ts`)
      const sender = needUser(`${file}, message ts ${String(m.ts)}`, slackUser)
      const { content: converted, mentioned } = slackToMarkdown(text(m, 'text') ?? '', { userName: (id) => userNames.get(id), channelName: (id) => channelNames.get(id) })
      let content = subtype === 'me_message' || subtype === 'bot_add' || subtype === 'sh_room_created' ? `/me ${converted}` : converted
      const id = tables.zerver_message.length + 1

      // Files: imported when the zip holds them, otherwise a link to Slack.
      const links: string[] = []
      const messageFiles = (subtype === 'file_share' && typeof m.file === 'object' ? [m.file] : Array.isArray(m.files) ? m.files : []) as SlackObject[]
      let hasAttachment = false
      let hasImage = false
      for (const f of messageFiles) {
        if (f.mode === 'tombstone' || f.mode === 'hidden_by_limit' || f.file_access === 'access_denied' || f.file_access === 'file_not_found') continue
        const fileId = text(f, 'id') ?? ''
        const name = text(f, 'name') ?? fileId
        const title = text(f, 'title') ?? name
        const held = fileId ? [...files.keys()].find((k) => k.startsWith(`__uploads/${fileId}/`)) : undefined
        if (held) {
          const path = `1/00/${fileId}/${name.replace(/[^A-Za-z0-9._-]/g, '_')}`
          const data = files.get(held) as Buffer
          uploads.set(path, data)
          uploadRecords.push({ path, s3_path: path, user_profile_id: sender, size: data.length, content_type: text(f, 'mimetype') ?? null })
          tables.zerver_attachment.push({ id: tables.zerver_attachment.length + 1, owner: sender, file_name: name, path_id: path, size: data.length, content_type: text(f, 'mimetype') ?? 'application/octet-stream', create_time: ts, messages: [id] })
          links.push(`[${title}](/user_uploads/${path})`)
          hasAttachment = true
          hasImage ||= (text(f, 'mimetype') ?? '').startsWith('image/')
        } else if (text(f, 'url_private')) {
          links.push(`[${title}](${text(f, 'url_private') as string})`)
          linkedFiles++
        }
      }
      content = [content, ...links].filter((p) => p !== '').join('\n')
      // Slack allows longer messages than Roost: cut as the API cuts a long message.
      if ([...content].length > MAX_MESSAGE_LENGTH) content = [...content].slice(0, MAX_MESSAGE_LENGTH - MESSAGE_TRUNCATION_SUFFIX.length).join('') + MESSAGE_TRUNCATION_SUFFIX

      let recipientId: number
      let topic = ''
      let audience: number[]
      if (conversation.dm) {
        const [a, b] = conversation.dm
        if (sender !== a && sender !== b) throw new ImportDataError(`${file}, message ts ${String(m.ts)}: ${slackUser} is not a member of this direct-message conversation`)
        const other = sender === a ? b : a
        recipientId = personal.get(other) as number
        audience = [...new Set([a, b])]
      } else {
        recipientId = conversation.recipientId as number
        audience = subscribers.get(recipientId) ?? []
        const isChannel = channelRecipients.get(conversation.dir) === recipientId
        if (isChannel) {
          topic = DEFAULT_TOPIC
          const threadTs = text(m, 'thread_ts')
          if (threadTs) {
            // The thread's first message names its author; a reply names it in parent_user_id, or the thread's first message did.
            if (threadTs === text(m, 'ts')) threadParents.set(threadTs, slackUser)
            const parent = text(m, 'parent_user_id') ?? threadParents.get(threadTs) ?? ''
            const key = `${threadTs}-${parent}`
            let name = threadTopics.get(key)
            if (name === undefined) {
              const date = new Date(Number(threadTs) * 1000).toISOString().slice(0, 10)
              const base = truncate(`${date} ${content}`.trim().replace(/\s+/g, ' '), MAX_TOPIC_LENGTH)
              const collision = topicCounts.get(base) ?? 0
              topicCounts.set(base, collision + 1)
              const suffix = collision > 0 ? ` (${collision + 1})` : ''
              name = truncate(`${date} ${content}`.trim().replace(/\s+/g, ' '), MAX_TOPIC_LENGTH - suffix.length) + suffix
              threadTopics.set(key, name)
            }
            topic = name
          }
        }
      }
      tables.zerver_message.push({ id, sender, recipient: recipientId, subject: topic, content, rendered_content: null, date_sent: ts, sending_client: 'Slack', has_attachment: hasAttachment, has_image: hasImage, has_link: links.length > 0 })
      const mentionedIds = new Set(mentioned.map((s) => userIds.get(s)).filter((x): x is number => x !== undefined))
      for (const userId of new Set([...audience, sender])) {
        let flags = userId === sender ? FLAG_BITS.read : 0
        if (mentionedIds.has(userId)) flags |= FLAG_BITS.mentioned
        if (conversation.dm || mpimRecipients.get(conversation.dir) === recipientId) flags |= FLAG_BITS.is_private
        tables.zerver_usermessage.push({ id: tables.zerver_usermessage.length + 1, user_profile: userId, message: id, flags_mask: flags })
      }

      // Reactions: skin tones dropped, merged by base emoji.
      const merged = new Map<string, Set<string>>()
      for (const r of (Array.isArray(m.reactions) ? m.reactions : []) as SlackObject[]) {
        const base = (text(r, 'name') ?? '').split('::')[0] as string
        const users = Array.isArray(r.users) ? r.users.filter((u): u is string => typeof u === 'string') : []
        merged.set(base, new Set([...(merged.get(base) ?? []), ...users]))
      }
      for (const [name, users] of merged) {
        const code = slackEmojiCode(name) ?? emojiCodeForName(name)
        const unicodeName = code === undefined ? undefined : emojiNameForCode(code)
        const custom = customEmoji.get(name)
        if (unicodeName === undefined && custom === undefined) continue
        for (const u of users) {
          const userId = userIds.get(u)
          if (userId === undefined) continue // Slack keeps reactions of deleted accounts; upstream skips them too
          tables.zerver_reaction.push(
            unicodeName !== undefined
              ? { id: tables.zerver_reaction.length + 1, message: id, user_profile: userId, emoji_name: unicodeName, emoji_code: code, reaction_type: 'unicode_emoji' }
              : { id: tables.zerver_reaction.length + 1, message: id, user_profile: userId, emoji_name: name, emoji_code: String(custom), reaction_type: 'realm_emoji' },
          )
        }
      }
    }
  }
  options.progress(`  ${tables.zerver_message.length} messages (${skipped} notices skipped), ${uploads.size} files imported, ${linkedFiles} files left as links to Slack`)
  return { tables, uploads, avatars: new Map(), emoji: emojiFiles, uploadRecords, avatarRecords: [], emojiRecords }
}
