// Upstream's realm export format (zerver/lib/export.py writes it,
// zerver/lib/import_realm.py reads it), as far as Roost speaks it: one
// directory in a .tar.gz holding
//   realm.json            { table name: rows } for the realm's tables
//   messages-000001.json  { zerver_message, zerver_usermessage }, 1000 messages a file
//   attachment.json       { zerver_attachment } (each row lists its message IDs)
//   uploads/, avatars/, emoji/   the files, each with a records.json
// Rows carry upstream's column names; a foreign key is named after the
// relation (`realm`, `sender`, `user_profile`), datetimes are UNIX seconds
// (floats) and user messages carry `flags_mask`. This module holds the names
// both directions share; src/export/ writes the format and src/import/ reads it.

/** A table row as it stands in the JSON files. */
export type Row = Record<string, unknown>
export type Tables = Record<string, Row[]>

export const MESSAGES_PER_FILE = 1000

/** Upstream's Recipient.type values. */
export const RECIPIENT = { PERSONAL: 1, STREAM: 2, DIRECT_MESSAGE_GROUP: 3 } as const

/** Upstream's path of a custom emoji's image (RealmEmoji.PATH_ID_TEMPLATE); also Roost's storage key. */
export const emojiPath = (realmId: number, fileName: string): string => `${realmId}/emoji/images/${fileName}`

/** Date → upstream's float seconds (null stays null). */
export const toSeconds = (date: Date | null): number | null => (date === null ? null : date.getTime() / 1000)

/** camelCase Prisma field → snake_case column (upstream's name for the same setting). */
export const snakeCase = (name: string): string => name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`)

/**
 * Realm fields not carried as plain settings: identity, rendered text, the
 * group settings (carried by their upstream names, as group IDs) and the
 * channel and bot references (mapped like every other ID).
 */
export const REALM_SPECIAL_FIELDS = new Set([
  'id',
  'stringId',
  'name',
  'description',
  'renderedDescription',
  'dateCreated',
  'deactivated',
  'iconUrl',
  'newStreamAnnouncementsStreamId',
  'signupAnnouncementsStreamId',
  'moderationRequestChannelId',
  'notificationBotId',
])

/** Roost's names that differ from upstream's for the same realm setting. */
export const REALM_FIELD_NAMES: Record<string, string> = { webPublicAccessEnabled: 'enable_spectator_access' }

/** Per-user settings fields that are not settings. */
export const USER_SETTINGS_SPECIAL_FIELDS = new Set(['id', 'userId'])
