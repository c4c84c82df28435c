// Settings an import brings (realm.json's zerver_realm row and each
// zerver_userprofile row) pass the validators the API uses for the same
// settings (PATCH /realm, PATCH /settings), so an import cannot store a
// value no client could have set, such as a policy or a language Roost does
// not know. A refused value stops the import with a message naming the
// setting. Columns no API sets get a check of their own here.
import { ApiError } from '../errors.js'
import { REALM_SETTING_BY_COLUMN, checkStoredRealmSetting, type RealmColumn, type SettingValue } from '../domain/realm-settings.js'
import { SETTINGS_BY_NAME, USER_SETTINGS, checkUserSettingValue } from '../domain/settings.js'
import { snakeCase } from '../export/zulip-format.js'
import { ImportDataError } from './rows.js'

const USER_SETTING_BY_COLUMN: ReadonlyMap<string, string> = new Map(USER_SETTINGS.map((spec) => [spec.column, spec.name]))

const nonNegativeOrNull = (value: unknown): boolean => value === null || (typeof value === 'number' && Number.isInteger(value) && value >= 0)

/** Realm columns no API request sets, with what they may hold. */
const OTHER_REALM_COLUMNS: Record<string, { allowed: (value: unknown) => boolean; expected: string }> = {
  emailAddressVisibility: { allowed: (v) => (SETTINGS_BY_NAME.get('email_address_visibility')?.values ?? []).includes(v as number), expected: 'one of 1 to 5, as the user setting email_address_visibility' },
  maxInvitesPerDay: { allowed: nonNegativeOrNull, expected: 'null or a whole number ≥ 0' },
  maxFileUploadSizeMib: { allowed: nonNegativeOrNull, expected: 'null or a whole number ≥ 0' },
  jitsiServerUrl: { allowed: (v) => v === null || (typeof v === 'string' && /^https?:\/\/[^\s/]+/.test(v)), expected: 'null or an http(s) URL' },
}

function refused(where: string, name: string, value: unknown, why: string): ImportDataError {
  return new ImportDataError(`${where}: the setting '${name}' has a value Roost refuses, ${JSON.stringify(value)}: ${why}`)
}

/**
 * Call providers upstream offers and Roost does not (Zoom 3, BigBlueButton 4,
 * Zoom Server-to-Server 5): an organization that used one arrives with none
 * (0), as on an upstream server where that provider is not configured, the
 * call button gone until an administrator picks Jitsi Meet. Any other
 * unknown value is still refused by the check below.
 */
const UPSTREAM_ONLY_VIDEO_CHAT_PROVIDERS: ReadonlySet<unknown> = new Set([3, 4, 5])

/** The realm's settings with what Roost lacks replaced by its nearest equivalent; see UPSTREAM_ONLY_VIDEO_CHAT_PROVIDERS. */
export function adaptImportedRealmSettings(values: Record<string, unknown>): Record<string, unknown> {
  return UPSTREAM_ONLY_VIDEO_CHAT_PROVIDERS.has(values.videoChatProvider) ? { ...values, videoChatProvider: 0 } : values
}

/** The realm's plain settings as read from the export (Realm field → value). */
export function checkImportedRealmSettings(values: Record<string, unknown>): void {
  for (const [field, value] of Object.entries(values)) {
    const name = REALM_SETTING_BY_COLUMN.get(field as RealmColumn)
    if (name !== undefined) {
      try {
        checkStoredRealmSetting(name, value as SettingValue)
      } catch (error) {
        if (error instanceof ApiError) throw refused('zerver_realm', name, value, error.msg)
        throw error
      }
      continue
    }
    const other = OTHER_REALM_COLUMNS[field]
    if (other && !other.allowed(value)) throw refused('zerver_realm', snakeCase(field), value, `expected ${other.expected}`)
  }
}

/** One user's settings as read from the export (UserSettings field → value); `where` names the row. */
export function checkImportedUserSettings(where: string, values: Record<string, unknown>): void {
  for (const [field, value] of Object.entries(values)) {
    const name = USER_SETTING_BY_COLUMN.get(field)
    if (name === undefined || value === null) continue
    try {
      checkUserSettingValue(name, value as boolean | number | string)
    } catch (error) {
      if (error instanceof ApiError) throw refused(where, name, value, error.msg)
      throw error
    }
  }
}
