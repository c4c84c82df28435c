// The organization settings PATCH /realm changes (upstream 9.0
// zerver/views/realm.py update_realm, Realm.property_types): their columns,
// allowed values, who may change them and the event form clients expect.
import { badValueFor, invalidGiphyRating, invalidLanguage, invalidPolicyValue, invalidVideoChatProvider, textTooLong } from '../errors.js'
import { isLanguageCode } from './languages.js'
import { EDIT_HISTORY_VISIBILITY, editHistoryVisibilityName, type EditHistoryVisibilityName } from './message-edit.js'

export const MAX_REALM_NAME_LENGTH = 40
export const MAX_REALM_DESCRIPTION_LENGTH = 1000
export const MAX_CODE_BLOCK_LANGUAGE_LENGTH = 100

/** The Realm columns a setting may write (kept apart from Prisma's types: domain has no I/O). */
export type RealmColumn =
  | 'name' | 'description' | 'webPublicAccessEnabled' | 'orgType'
  | 'allowMessageEditing' | 'messageContentEditLimitSeconds'
  | 'moveMessagesWithinStreamLimitSeconds' | 'moveMessagesBetweenStreamsLimitSeconds' | 'messageContentDeleteLimitSeconds'
  | 'messageEditHistoryVisibilityPolicy' | 'mandatoryTopics' | 'messageRetentionDays' | 'waitingPeriodThreshold'
  | 'inviteRequired' | 'emailsRestrictedToDomains' | 'disallowDisposableEmailAddresses' | 'sendWelcomeEmails'
  | 'nameChangesDisabled' | 'emailChangesDisabled' | 'avatarChangesDisabled' | 'requireUniqueNames'
  | 'defaultLanguage' | 'videoChatProvider' | 'presenceDisabled' | 'enableReadReceipts' | 'enableGuestUserIndicator' | 'enableGuestUserDmWarning'
  | 'digestEmailsEnabled' | 'digestWeekday' | 'messageContentAllowedInEmailNotifications' | 'defaultCodeBlockLanguage' | 'giphyRating'

export type SettingValue = boolean | number | string | null

export interface RealmSetting {
  column: RealmColumn
  /** Only organization owners may change it. */
  ownerOnly?: boolean
  /** Sent as `realm` `update_dict` (property "default") rather than `update`, as upstream. */
  dict?: boolean
  /** The stored value for a wire value, or throws (wire values are already type-checked). */
  parse?: (value: SettingValue, name: string) => SettingValue
  /** The wire value of a stored one, when they differ. Settings that share a column each get their own event when their wire value changes. */
  present?: (stored: SettingValue) => SettingValue
}

const oneOf = (allowed: number[]) => (value: SettingValue, name: string): SettingValue => {
  if (typeof value !== 'number' || !allowed.includes(value)) throw invalidPolicyValue(name)
  return value
}

const cappedText = (limit: number, blankAllowed: boolean) => (value: SettingValue, name: string): SettingValue => {
  const text = String(value)
  if (Array.from(text).length > limit) throw textTooLong(name, limit)
  if (!blankAllowed && text.trim() === '') throw badValueFor(name, text)
  return text
}

/** "unlimited" → null (no limit); otherwise a positive number of seconds. */
const limitSeconds = (value: SettingValue, name: string): SettingValue => {
  if (value === 'unlimited') return null
  const n = typeof value === 'string' && /^\d+$/.test(value) ? Number(value) : value
  if (typeof n !== 'number' || !Number.isInteger(n) || n <= 0 || n > 2_147_483_647) throw badValueFor(name, value)
  return n
}

/** "unlimited" → -1 (keep forever); otherwise a positive number of days. */
const retentionDays = (value: SettingValue, name: string): SettingValue => {
  if (value === 'unlimited') return -1
  const n = typeof value === 'string' && /^\d+$/.test(value) ? Number(value) : value
  if (typeof n !== 'number' || !Number.isInteger(n) || n <= 0 || n > 2_147_483_647) throw badValueFor(name, value)
  return n
}

const bool = (column: RealmColumn, extra: Partial<RealmSetting> = {}): RealmSetting => ({ column, ...extra })

/** Policy values the spec's deprecated `*_policy` settings accept (they now set group settings: permission-settings.ts). */
export function parsePolicyValue(value: SettingValue, name: string, allowed: number[]): number {
  return oneOf(allowed)(value, name) as number
}

export const REALM_SETTINGS: Readonly<Record<string, RealmSetting>> = {
  name: { column: 'name', parse: cappedText(MAX_REALM_NAME_LENGTH, false) },
  description: { column: 'description', parse: cappedText(MAX_REALM_DESCRIPTION_LENGTH, true) },
  enable_spectator_access: bool('webPublicAccessEnabled'),
  org_type: { column: 'orgType', parse: oneOf([0, 10, 20, 30, 35, 40, 50, 60, 70, 80, 90, 100]) },
  allow_message_editing: bool('allowMessageEditing', { dict: true }),
  message_content_edit_limit_seconds: { column: 'messageContentEditLimitSeconds', dict: true, parse: limitSeconds },
  move_messages_within_stream_limit_seconds: { column: 'moveMessagesWithinStreamLimitSeconds', parse: limitSeconds },
  move_messages_between_streams_limit_seconds: { column: 'moveMessagesBetweenStreamsLimitSeconds', parse: limitSeconds },
  message_content_delete_limit_seconds: { column: 'messageContentDeleteLimitSeconds', parse: limitSeconds },
  message_edit_history_visibility_policy: {
    column: 'messageEditHistoryVisibilityPolicy',
    parse: (value, name) => {
      if (typeof value !== 'string' || !Object.hasOwn(EDIT_HISTORY_VISIBILITY, value)) throw invalidPolicyValue(name)
      return EDIT_HISTORY_VISIBILITY[value as EditHistoryVisibilityName]
    },
    present: (stored) => editHistoryVisibilityName(Number(stored)),
  },
  // The spec's boolean form of the same column (upstream deprecated it at level 358): true is "all", false "none".
  allow_edit_history: {
    column: 'messageEditHistoryVisibilityPolicy',
    parse: (value) => (value === true ? EDIT_HISTORY_VISIBILITY.all : EDIT_HISTORY_VISIBILITY.none),
    present: (stored) => stored !== EDIT_HISTORY_VISIBILITY.none,
  },
  mandatory_topics: bool('mandatoryTopics'),
  message_retention_days: { column: 'messageRetentionDays', ownerOnly: true, parse: retentionDays },
  waiting_period_threshold: {
    column: 'waitingPeriodThreshold',
    parse: (value, name) => {
      if (typeof value !== 'number' || !Number.isInteger(value) || value < 0 || value > 2_147_483_647) throw badValueFor(name, value)
      return value
    },
  },
  invite_required: bool('inviteRequired', { ownerOnly: true }),
  emails_restricted_to_domains: bool('emailsRestrictedToDomains', { ownerOnly: true }),
  disallow_disposable_email_addresses: bool('disallowDisposableEmailAddresses', { ownerOnly: true }),
  send_welcome_emails: bool('sendWelcomeEmails'),
  name_changes_disabled: bool('nameChangesDisabled'),
  email_changes_disabled: bool('emailChangesDisabled'),
  avatar_changes_disabled: bool('avatarChangesDisabled'),
  require_unique_names: bool('requireUniqueNames'),
  default_language: {
    column: 'defaultLanguage',
    parse: (value) => {
      if (typeof value !== 'string' || !isLanguageCode(value)) throw invalidLanguage(String(value))
      return value
    },
  },
  video_chat_provider: {
    column: 'videoChatProvider',
    parse: (value) => {
      // Roost offers no call provider but Jitsi Meet (1) and none (0).
      if (value !== 0 && value !== 1) throw invalidVideoChatProvider(Number(value))
      return value
    },
  },
  presence_disabled: bool('presenceDisabled'),
  enable_read_receipts: bool('enableReadReceipts'),
  enable_guest_user_indicator: bool('enableGuestUserIndicator'),
  enable_guest_user_dm_warning: bool('enableGuestUserDmWarning'),
  digest_emails_enabled: bool('digestEmailsEnabled'),
  digest_weekday: { column: 'digestWeekday', parse: oneOf([0, 1, 2, 3, 4, 5, 6]) },
  message_content_allowed_in_email_notifications: bool('messageContentAllowedInEmailNotifications'),
  default_code_block_language: { column: 'defaultCodeBlockLanguage', parse: cappedText(MAX_CODE_BLOCK_LANGUAGE_LENGTH, true) },
  giphy_rating: {
    column: 'giphyRating',
    parse: (value) => {
      if (typeof value !== 'number' || ![0, 1, 2, 3].includes(value)) throw invalidGiphyRating(Number(value))
      return value
    },
  },
}

/** The setting that owns each column (the first to name it: allow_edit_history shares message_edit_history_visibility_policy's). */
export const REALM_SETTING_BY_COLUMN: ReadonlyMap<RealmColumn, string> = new Map(
  Object.entries(REALM_SETTINGS)
    .reverse()
    .map(([name, setting]) => [setting.column, name]),
)

/**
 * Checks a stored value (a column's, as an import brings it) with the API's
 * own validator: one of its wire forms (the presented value, or "unlimited"
 * for the no-limit null and the keep-forever -1) must parse back to it.
 * Throws the API's error for the value, naming the setting.
 */
export function checkStoredRealmSetting(name: string, stored: SettingValue): void {
  const setting = REALM_SETTINGS[name]
  if (!setting?.parse) return
  const wire = setting.present ? setting.present(stored) : stored
  for (const candidate of [wire, 'unlimited']) {
    try {
      if (setting.parse(candidate, name) === stored) return
    } catch {
      // Not this wire form.
    }
  }
  setting.parse(wire, name)
  // The wire form parsed, to another value: the stored one has no wire form (a policy number the API never stores).
  throw badValueFor(name, stored)
}
