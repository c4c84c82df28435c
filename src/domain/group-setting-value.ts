// Group-setting values (upstream /api/group-setting-values, feature levels
// 299–367): a permission setting names either one named user group by ID,
// or an anonymous collection `{direct_members, direct_subgroups}` of users and
// named groups. This module holds the pure half: the wire value and its
// parsing, the `{new, old}` change form of PATCH endpoints, which system
// groups each setting accepts (upstream's GroupPermissionSetting) and the
// membership test over a user's recursive group IDs.
//
// The rest lives beside it: queries/group-setting-values.ts presents stored
// values and computes the permission group IDs of a user; actions/
// group-setting-values.ts validates a value against the database and stores
// it (an anonymous value is an anonymous `user_group` row, whose members and
// subgroups are ordinary rows, so recursive membership covers it unchanged).
import { groupSettingMustBeSystemGroup, groupSettingNotAllowed, groupSettingOldMismatch, groupSettingValueInvalid } from '../errors.js'
import { SYSTEM_GROUPS } from './system-groups.js'

export interface AnonymousGroupValue {
  direct_members: number[]
  direct_subgroups: number[]
}
/** The wire value: a named group's ID or an anonymous group. */
export type GroupSettingValue = number | AnonymousGroupValue

/** A value of `PATCH` endpoints: the new value and, optionally, the value the client believes is current. */
export interface GroupSettingChange {
  new: GroupSettingValue
  old?: GroupSettingValue
}

/** Limits on an anonymous value's lists (upstream has none; every array here has one). */
export const MAX_GROUP_SETTING_MEMBERS = 10_000
export const MAX_GROUP_SETTING_SUBGROUPS = 1_000

/** Upstream's GroupPermissionSetting: which groups a setting accepts and its default. */
export interface GroupPermissionConfig {
  /** Only system groups (no anonymous value, no user-defined group). */
  requireSystemGroup: boolean
  allowInternetGroup: boolean
  allowNobodyGroup: boolean
  allowEveryoneGroup: boolean
  /** System group used when the realm/channel/group stores none. */
  defaultGroupName: string
  /** For group-level settings: the default on system groups. */
  defaultForSystemGroups: string | null
  /** When non-empty, the only system groups the setting accepts. */
  allowedSystemGroups: string[]
}

/** A config with upstream's defaults (require_system_group and allow_internet_group false). */
export function permissionConfig(
  defaultGroupName: string,
  options: Partial<Omit<GroupPermissionConfig, 'defaultGroupName'>> & Pick<GroupPermissionConfig, 'allowNobodyGroup' | 'allowEveryoneGroup'>,
): GroupPermissionConfig {
  return {
    requireSystemGroup: false,
    allowInternetGroup: false,
    defaultForSystemGroups: null,
    allowedSystemGroups: [],
    ...options,
    defaultGroupName,
  }
}

/** The `server_supported_permission_settings` entry of a config (feature level 326's fields). */
export function presentPermissionConfig(config: GroupPermissionConfig): Record<string, unknown> {
  return {
    require_system_group: config.requireSystemGroup,
    allow_internet_group: config.allowInternetGroup,
    allow_nobody_group: config.allowNobodyGroup,
    allow_everyone_group: config.allowEveryoneGroup,
    default_group_name: config.defaultGroupName,
    default_for_system_groups: config.defaultForSystemGroups,
    allowed_system_groups: config.allowedSystemGroups,
  }
}

const isId = (v: unknown): v is number => typeof v === 'number' && Number.isInteger(v) && v >= 0 && v <= 2_147_483_647

function parseIdList(raw: unknown, name: string, field: string, limit: number): number[] {
  if (!Array.isArray(raw)) throw groupSettingValueInvalid(name, `${field} is not a list`)
  if (raw.length > limit) throw groupSettingValueInvalid(name, `${field} has more than ${limit} entries`)
  for (const item of raw) if (!isId(item)) throw groupSettingValueInvalid(name, `${field} must contain only user and group IDs`)
  return [...new Set(raw as number[])]
}

/**
 * A decoded JSON value as a group-setting value, or a 400 naming `name`.
 * An anonymous value of no members and one subgroup is that subgroup (upstream's parse_group_setting_value).
 */
export function parseGroupSettingValue(raw: unknown, name: string): GroupSettingValue {
  if (isId(raw)) return raw
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw groupSettingValueInvalid(name, 'not a group ID or an object')
  const obj = raw as Record<string, unknown>
  for (const key of Object.keys(obj)) {
    if (key !== 'direct_members' && key !== 'direct_subgroups') throw groupSettingValueInvalid(name, `unexpected key '${key}'`)
  }
  if (!('direct_members' in obj) || !('direct_subgroups' in obj)) throw groupSettingValueInvalid(name, 'direct_members and direct_subgroups are required')
  const value = {
    direct_members: parseIdList(obj.direct_members, name, 'direct_members', MAX_GROUP_SETTING_MEMBERS),
    direct_subgroups: parseIdList(obj.direct_subgroups, name, 'direct_subgroups', MAX_GROUP_SETTING_SUBGROUPS),
  }
  return normalizeGroupSettingValue(value)
}

export function normalizeGroupSettingValue(value: GroupSettingValue): GroupSettingValue {
  if (typeof value === 'number') return value
  if (value.direct_members.length === 0 && value.direct_subgroups.length === 1) return value.direct_subgroups[0] as number
  return value
}

/**
 * The `{new, old?}` form of PATCH endpoints. A bare value is accepted as `{new: value}`
 * (the integer form settings had before they became group-setting values).
 */
export function parseGroupSettingChange(raw: unknown, name: string): GroupSettingChange {
  if (typeof raw === 'object' && raw !== null && !Array.isArray(raw) && 'new' in raw) {
    const obj = raw as Record<string, unknown>
    for (const key of Object.keys(obj)) if (key !== 'new' && key !== 'old') throw groupSettingValueInvalid(name, `unexpected key '${key}'`)
    const change: GroupSettingChange = { new: parseGroupSettingValue(obj.new, name) }
    if (obj.old !== undefined) change.old = parseGroupSettingValue(obj.old, name)
    return change
  }
  return { new: parseGroupSettingValue(raw, name) }
}

/** Same value? Anonymous values compare as sets (upstream's are_both_group_setting_values_equal). */
export function groupSettingValuesEqual(a: GroupSettingValue, b: GroupSettingValue): boolean {
  if (typeof a === 'number' || typeof b === 'number') return a === b
  const same = (x: number[], y: number[]) => {
    const sx = new Set(x)
    const sy = new Set(y)
    return sx.size === sy.size && [...sx].every((v) => sy.has(v))
  }
  return same(a.direct_members, b.direct_members) && same(a.direct_subgroups, b.direct_subgroups)
}

/** Throws upstream's EXPECTATION_MISMATCH when `old` is given and differs from the current value; false when `new` changes nothing. */
export function checkGroupSettingChange(current: GroupSettingValue, change: GroupSettingChange): boolean {
  if (change.old !== undefined && !groupSettingValuesEqual(change.old, current)) throw groupSettingOldMismatch()
  return !groupSettingValuesEqual(current, change.new)
}

export interface NamedGroupFacts {
  name: string
  isSystemGroup: boolean
}

/** Upstream's check_setting_configuration_for_system_groups, for a named group value. */
export function checkNamedGroupForSetting(group: NamedGroupFacts, setting: string, config: GroupPermissionConfig): void {
  if (config.requireSystemGroup && !group.isSystemGroup) throw groupSettingMustBeSystemGroup(setting)
  if (!group.isSystemGroup) return
  if (!config.allowInternetGroup && group.name === SYSTEM_GROUPS.internet) throw groupSettingNotAllowed(setting, group.name)
  if (!config.allowNobodyGroup && group.name === SYSTEM_GROUPS.nobody) throw groupSettingNotAllowed(setting, group.name)
  if (!config.allowEveryoneGroup && group.name === SYSTEM_GROUPS.everyone) throw groupSettingNotAllowed(setting, group.name)
  if (config.allowedSystemGroups.length > 0 && !config.allowedSystemGroups.includes(group.name)) throw groupSettingNotAllowed(setting, group.name)
}

/** An anonymous value where the setting takes only system groups. */
export function checkAnonymousAllowed(setting: string, config: GroupPermissionConfig): void {
  if (config.requireSystemGroup) throw groupSettingMustBeSystemGroup(setting)
}

/**
 * Does a user whose permission group IDs (recursive, see queries/group-setting-values.ts)
 * are `userGroupIds` hold the setting stored as group `settingGroupId`? Guests never hold a
 * setting that may not be "everyone" (upstream's user_has_permission_for_group_setting).
 */
export function holdsGroupSetting(userGroupIds: ReadonlySet<number>, settingGroupId: number, config: GroupPermissionConfig, isGuest: boolean): boolean {
  if (!config.allowEveryoneGroup && isGuest) return false
  return userGroupIds.has(settingGroupId)
}
