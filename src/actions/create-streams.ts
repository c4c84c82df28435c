// Creating channels on the way to subscribing (POST /users/me/subscriptions):
// name rules, who may create which kind of channel, and the rows themselves.
import { realmPermissionsOf } from '../queries/realm-permissions.js'
import type { Realm, Stream, Tx, User } from '../db/index.js'
import {
  badValueFor,
  defaultStreamCannotBePrivate,
  emptyStreamName,
  insufficientPermission,
  invalidParameters,
  invalidPolicyValue,
  invalidStreamNameCharacter,
  invalidUserGroup,
  mustBeAdmin,
  mustBeOwner,
  streamNameTooLong,
  webPublicStreamsDisabled,
} from '../errors.js'
import { isAdmin, isOwner } from '../domain/roles.js'
import { codePointLength, MAX_STREAM_NAME_LENGTH } from '../domain/limits.js'
import { inInt32Range } from '../domain/int-range.js'
import { SYSTEM_GROUPS } from '../domain/system-groups.js'
import { parseGroupSettingValue, type AnonymousGroupValue, type GroupSettingValue } from '../domain/group-setting-value.js'
import { STREAM_PERMISSION_SETTING_NAMES, STREAM_PERMISSION_SETTINGS, streamPostPolicyGroup, streamSettingColumn, type StreamPermissionSettingName } from '../domain/permission-settings.js'
import { createAnonymousGroups, validateGroupSettingValue } from './group-setting-values.js'
import { renderPlainDescription } from './render-description.js'

/** Unicode noncharacters: U+FDD0–U+FDEF and the last two code points of every plane. */
function isNonCharacter(cp: number): boolean {
  return (cp >= 0xfdd0 && cp <= 0xfdef) || (cp & 0xfffe) === 0xfffe
}

/** Control characters (Cc), surrogates (Cs) and noncharacters are not printable. */
function isPrintable(ch: string): boolean {
  const cp = ch.codePointAt(0) as number
  if (cp <= 0x1f || (cp >= 0x7f && cp <= 0x9f)) return false
  if (cp >= 0xd800 && cp <= 0xdfff) return false
  return !isNonCharacter(cp)
}

/** Upstream's check_stream_name: not blank, at most 60 code points, printable (1-based position in the error). */
export function checkStreamName(name: string): void {
  if (name.trim() === '') throw emptyStreamName()
  if (codePointLength(name) > MAX_STREAM_NAME_LENGTH) throw streamNameTooLong(MAX_STREAM_NAME_LENGTH)
  const chars = Array.from(name)
  const bad = chars.findIndex((ch) => !isPrintable(ch))
  if (bad >= 0) throw invalidStreamNameCharacter(bad + 1)
}

const RETENTION_SPECIAL: Record<string, number | null> = { realm_default: null, unlimited: -1 }

/** "realm_default" → null (inherit), "unlimited" → -1, a positive integer → itself. */
export function parseMessageRetentionDays(value: string | number): number | null {
  const given = value
  if (typeof value === 'string') {
    if (value in RETENTION_SPECIAL) return RETENTION_SPECIAL[value] as number | null
    let decoded: unknown = value
    try {
      decoded = JSON.parse(value)
    } catch {
      throw badValueFor('message_retention_days', value)
    }
    if (typeof decoded === 'string' && decoded in RETENTION_SPECIAL) return RETENTION_SPECIAL[decoded] as number | null
    if (typeof decoded !== 'number') throw badValueFor('message_retention_days', value)
    value = decoded
  }
  if (!Number.isInteger(value) || value <= 0 || !inInt32Range(value)) throw badValueFor('message_retention_days', given)
  return value
}

export interface NewStreamOptions {
  inviteOnly: boolean
  isWebPublic: boolean
  isDefaultStream: boolean
  /** Private channels only; public channels always share history with subscribers. */
  historyPublicToSubscribers?: boolean
  /** Already parsed: null inherits the realm setting. */
  messageRetentionDays: number | null
  /** The group settings the request gives (a stream_post_policy already as can_send_message_group); the rest take their defaults. */
  groupSettings: Partial<Record<StreamPermissionSettingName, GroupSettingValue>>
}

export interface NewStream {
  name: string
  description?: string
}

/** The group settings a creation request gives, parsed (a 400 naming the parameter for a malformed value). */
export function parseStreamGroupSettings(input: Record<string, unknown>): Partial<Record<StreamPermissionSettingName, GroupSettingValue>> {
  const out: Partial<Record<StreamPermissionSettingName, GroupSettingValue>> = {}
  for (const name of STREAM_PERMISSION_SETTING_NAMES) if (input[name] !== undefined) out[name] = parseGroupSettingValue(input[name], name)
  return out
}

/** A stream_post_policy (deprecated by level 333) as the can_send_message_group it stands for, unless that is given too. */
export async function withPostPolicy(tx: Tx, realmId: number, settings: NewStreamOptions['groupSettings'], policy: number | undefined): Promise<NewStreamOptions['groupSettings']> {
  if (policy === undefined || settings.can_send_message_group !== undefined) return settings
  const name = streamPostPolicyGroup(policy)
  if (name === undefined) throw invalidPolicyValue('stream_post_policy')
  const group = await tx.userGroup.findUnique({ where: { realmId_name: { realmId, name } }, select: { id: true } })
  if (!group) throw invalidUserGroup()
  return { ...settings, can_send_message_group: group.id }
}

/** Throws unless `user` may create channels with these options (upstream's check_channel_creation_permissions). */
export async function checkCanCreateStreams(tx: Tx, realm: Realm, user: User, options: NewStreamOptions, now: Date): Promise<void> {
  if (options.isDefaultStream && !isAdmin(user.role)) throw mustBeAdmin()
  if (options.isDefaultStream && options.inviteOnly) throw defaultStreamCannotBePrivate()
  if (options.isWebPublic && options.inviteOnly) throw invalidParameters()
  const holds = await realmPermissionsOf(tx, realm, user, now)
  if (!holds(options.inviteOnly ? 'can_create_private_channel_group' : 'can_create_public_channel_group')) throw insufficientPermission()
  if (options.isWebPublic) {
    if (!realm.webPublicAccessEnabled) throw webPublicStreamsDisabled()
    if (!holds('can_create_web_public_channel_group')) throw insufficientPermission()
  }
  if (options.messageRetentionDays !== null && !isOwner(user.role)) throw mustBeOwner()
}

/**
 * The group each setting of the new channels stores, by setting: one ID for all of them, or one
 * per channel (an anonymous value, which each channel gets a copy of). Unset settings take their
 * defaults: can_administer_channel_group an anonymous group of the creator,
 * can_remove_subscribers_group administrators, the others an empty column (their default system group).
 */
async function settingGroups(tx: Tx, realm: Realm, creator: User, options: NewStreamOptions, count: number): Promise<Map<StreamPermissionSettingName, number | number[] | null>> {
  const out = new Map<StreamPermissionSettingName, number | number[] | null>()
  for (const name of STREAM_PERMISSION_SETTING_NAMES) {
    let value = options.groupSettings[name]
    if (value === undefined) {
      if (name === 'can_administer_channel_group') value = { direct_members: [creator.id], direct_subgroups: [] }
      else if (name === 'can_remove_subscribers_group') {
        const admins = await tx.userGroup.findUnique({ where: { realmId_name: { realmId: realm.id, name: SYSTEM_GROUPS.administrators } } })
        if (!admins) throw invalidUserGroup()
        value = admins.id
      } else {
        out.set(name, null)
        continue
      }
    }
    const named = await validateGroupSettingValue(tx, { realmId: realm.id, setting: name, config: STREAM_PERMISSION_SETTINGS[name], value })
    out.set(name, named ?? (await createAnonymousGroups(tx, realm.id, value as AnonymousGroupValue, count)))
  }
  return out
}

/** Inserts the channels (and default-channel rows); permission checks come first. */
export async function insertStreams(tx: Tx, realm: Realm, creator: User, streams: NewStream[], options: NewStreamOptions, now: Date): Promise<Stream[]> {
  const history = options.inviteOnly ? (options.historyPublicToSubscribers ?? false) : true
  if (streams.length === 0) return []
  const groups = await settingGroups(tx, realm, creator, options, streams.length)
  const groupColumns = (index: number) =>
    Object.fromEntries(
      [...groups].map(([name, value]) => [streamSettingColumn(name), Array.isArray(value) ? (value[index] as number) : value]),
    ) as { canRemoveSubscribersGroupId: number }
  // One statement for all the channels (a subscribe request may create hundreds).
  const created = await tx.stream.createManyAndReturn({
    data: streams.map((s, index) => {
      const description = s.description ?? ''
      return {
        realmId: realm.id,
        name: s.name,
        description,
        renderedDescription: renderPlainDescription(description),
        dateCreated: now,
        creatorId: creator.id,
        inviteOnly: options.inviteOnly,
        isWebPublic: options.isWebPublic,
        messageRetentionDays: options.messageRetentionDays,
        historyPublicToSubscribers: history,
        ...groupColumns(index),
      }
    }),
  })
  created.sort((x, y) => x.id - y.id)
  if (options.isDefaultStream) await tx.defaultStream.createMany({ data: created.map((stream) => ({ realmId: realm.id, streamId: stream.id })) })
  return created
}
