// The organization's group permission settings (domain/permission-settings.ts):
// the group each stores (its default system group when the column is empty),
// their wire values for register, the deprecated policies derived from them,
// and whether a user holds one.
import type { PrismaClient, Realm, Tx, User } from '../db/index.js'
import { holdsGroupSetting, type GroupSettingValue } from '../domain/group-setting-value.js'
import {
  botCreationPolicyFor,
  DERIVED_ONLY_POLICIES,
  LEGACY_POLICIES,
  policyForGroup,
  REALM_PERMISSION_SETTING_NAMES,
  REALM_PERMISSION_SETTINGS,
  realmSettingColumn,
  type RealmPermissionSettingName,
} from '../domain/permission-settings.js'
import { isGuest } from '../domain/roles.js'
import type { EditPermissions } from '../domain/message-edit.js'
import { getPermissionGroupIds, getSystemGroupIds, presentGroupSettingValues } from './group-setting-values.js'

type Db = PrismaClient | Tx

/** The group ID a realm row stores for a setting (null: not set). */
export function storedRealmSettingGroupId(realm: Realm, setting: RealmPermissionSettingName): number | null {
  const value = (realm as unknown as Record<string, unknown>)[realmSettingColumn(setting)]
  return typeof value === 'number' ? value : null
}

/** Every setting's group ID, the default system group standing in for an empty column. */
export async function getRealmSettingGroupIds(db: Db, realm: Realm): Promise<Record<RealmPermissionSettingName, number>> {
  let system: Map<string, number> | undefined
  const out = {} as Record<RealmPermissionSettingName, number>
  for (const name of REALM_PERMISSION_SETTING_NAMES) {
    let id = storedRealmSettingGroupId(realm, name)
    if (id === null) {
      system ??= await getSystemGroupIds(db, realm.id)
      id = system.get(REALM_PERMISSION_SETTINGS[name].config.defaultGroupName) ?? 0
    }
    out[name] = id
  }
  return out
}

export interface RealmPermissionState {
  /** realm_<setting> keys: each setting's wire value. */
  values: Record<RealmPermissionSettingName, GroupSettingValue>
  /** realm_<policy> keys: the spec's deprecated policies, derived. */
  policies: Record<string, number>
}

/** Register's realm permission keys (a handful of queries for all settings). */
export async function getRealmPermissionState(db: Db, realm: Realm): Promise<RealmPermissionState> {
  const ids = await getRealmSettingGroupIds(db, realm)
  const [wire, system] = await Promise.all([presentGroupSettingValues(db, Object.values(ids)), getSystemGroupIds(db, realm.id)])
  const nameOf = new Map([...system].map(([name, id]) => [id, name]))
  const values = {} as Record<RealmPermissionSettingName, GroupSettingValue>
  for (const name of REALM_PERMISSION_SETTING_NAMES) values[name] = wire.get(ids[name]) ?? ids[name]
  return { values, policies: derivedPolicies(ids, (id) => nameOf.get(id) ?? null) }
}

/** The deprecated policies for the given setting group IDs. */
export function derivedPolicies(ids: Record<RealmPermissionSettingName, number>, systemNameOf: (id: number) => string | null): Record<string, number> {
  const out: Record<string, number> = {}
  for (const [policy, def] of Object.entries({ ...LEGACY_POLICIES, ...DERIVED_ONLY_POLICIES })) out[policy] = policyForGroup(def, systemNameOf(ids[def.setting]))
  out.bot_creation_policy = botCreationPolicyFor(systemNameOf(ids.can_create_bots_group), systemNameOf(ids.can_create_write_only_bots_group))
  return out
}

export type RealmPermissionCheck = (setting: RealmPermissionSettingName) => boolean

/**
 * A checker for the user's realm permissions: one load of the user's groups, then any
 * number of settings. Settings for features Roost lacks (billing, AI summaries) grant nothing.
 */
export async function realmPermissionsOf(db: Db, realm: Realm, user: Pick<User, 'id' | 'role' | 'dateJoined'>, now: Date): Promise<RealmPermissionCheck> {
  const [groups, ids] = await Promise.all([getPermissionGroupIds(db, realm, user, now), getRealmSettingGroupIds(db, realm)])
  return (setting) => {
    const def: { config: (typeof REALM_PERMISSION_SETTINGS)[RealmPermissionSettingName]['config']; inert?: boolean } = REALM_PERMISSION_SETTINGS[setting]
    if (def.inert) return false
    return holdsGroupSetting(groups, ids[setting], def.config, isGuest(user.role))
  }
}

/** Does the user hold one realm permission setting? */
export async function holdsRealmPermission(db: Db, realm: Realm, user: Pick<User, 'id' | 'role' | 'dateJoined'>, setting: RealmPermissionSettingName, now: Date): Promise<boolean> {
  return (await realmPermissionsOf(db, realm, user, now))(setting)
}

/** The settings PATCH and DELETE /messages/{id} consult, for the acting user. */
export async function getEditPermissions(db: Db, realm: Realm, user: Pick<User, 'id' | 'role' | 'dateJoined'>, now: Date): Promise<EditPermissions> {
  const holds = await realmPermissionsOf(db, realm, user, now)
  return {
    moveBetweenTopics: holds('can_move_messages_between_topics_group'),
    resolveTopics: holds('can_resolve_topics_group'),
    moveBetweenChannels: holds('can_move_messages_between_channels_group'),
    deleteOwn: holds('can_delete_own_message_group'),
    deleteAny: holds('can_delete_any_message_group'),
  }
}
