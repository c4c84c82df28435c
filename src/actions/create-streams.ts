// Creating channels on the way to subscribing (POST /users/me/subscriptions):
// name rules, who may create which kind of channel, and the rows themselves.
import { realmPermissionsOf } from '../queries/realm-permissions.js'
import type { Realm, Stream, Tx, User } from '../db/index.js'
import {
  badValueFor,
  defaultStreamCannotBePrivate,
  emptyStreamName,
  groupSettingNotAllowed,
  insufficientPermission,
  invalidParameters,
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
  streamPostPolicy: number
  /** Already parsed: null inherits the realm setting. */
  messageRetentionDays: number | null
  canRemoveSubscribersGroupId?: number
}

export interface NewStream {
  name: string
  description?: string
}

/**
 * Throws unless `user` may create channels with these options; returns the
 * group for can_remove_subscribers_group (administrators by default).
 */
export async function checkCanCreateStreams(tx: Tx, realm: Realm, user: User, options: NewStreamOptions, now: Date): Promise<number> {
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
  if (options.canRemoveSubscribersGroupId === undefined) {
    const admins = await tx.userGroup.findUnique({ where: { realmId_name: { realmId: realm.id, name: SYSTEM_GROUPS.administrators } } })
    if (!admins) throw invalidUserGroup()
    return admins.id
  }
  const group = await tx.userGroup.findUnique({ where: { id: options.canRemoveSubscribersGroupId } })
  if (!group || group.realmId !== realm.id || group.deactivated || group.isAnonymous) throw invalidUserGroup()
  if (group.isSystemGroup && (group.name === SYSTEM_GROUPS.internet || group.name === SYSTEM_GROUPS.nobody)) {
    throw groupSettingNotAllowed('can_remove_subscribers_group', group.name)
  }
  return group.id
}

/** Inserts the channels (and default-channel rows); permission checks come first. */
export async function insertStreams(
  tx: Tx,
  realm: Realm,
  creator: User,
  streams: NewStream[],
  options: NewStreamOptions & { canRemoveSubscribersGroupId: number },
  now: Date,
): Promise<Stream[]> {
  const history = options.inviteOnly ? (options.historyPublicToSubscribers ?? false) : true
  if (streams.length === 0) return []
  // One statement for all the channels (a subscribe request may create hundreds).
  const created = await tx.stream.createManyAndReturn({
    data: streams.map((s) => {
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
        streamPostPolicy: options.streamPostPolicy,
        messageRetentionDays: options.messageRetentionDays,
        historyPublicToSubscribers: history,
        canRemoveSubscribersGroupId: options.canRemoveSubscribersGroupId,
      }
    }),
  })
  created.sort((x, y) => x.id - y.id)
  if (options.isDefaultStream) await tx.defaultStream.createMany({ data: created.map((stream) => ({ realmId: realm.id, streamId: stream.id })) })
  return created
}
