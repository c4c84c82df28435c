// PATCH /realm (upstream zerver/views/realm.py update_realm): organization
// settings, administrators only (owners only for some). Every value is
// checked before anything is written; unchanged values are skipped. Each
// change is one `realm` event to every active user (`update`, or
// `update_dict` with property "default" for the message-editing and group
// settings, as upstream), and the response lists what changed (strings as
// "updated").
//
// Group permission settings take a group-setting value as `{new, old?}`
// (domain/group-setting-value.ts); `old` that no longer matches is
// EXPECTATION_MISMATCH. The spec's deprecated `*_policy` settings set the
// group setting that replaced them to the policy's system group; when a
// change moves the policy derived from a group setting, clients also get the
// policy's own event, so both old and new clients stay current.
import { realmUpdateDictEvent, realmUpdateEvent } from '../events/schemas/index.js'
import type { Prisma } from '../db/index.js'
import type { ActionContext } from './context.js'
import { inTransaction } from './context.js'
import { moderationChannelMustBePrivate, mustBeAdmin, mustBeOwner } from '../errors.js'
import { isAdmin, isOwner } from '../domain/roles.js'
import { parsePolicyValue, REALM_SETTINGS, type RealmSetting, type SettingValue } from '../domain/realm-settings.js'
import { checkGroupSettingChange, parseGroupSettingChange, type GroupSettingChange, type GroupSettingValue } from '../domain/group-setting-value.js'
import {
  botCreationGroups,
  isRealmPermissionSetting,
  LEGACY_POLICIES,
  REALM_PERMISSION_SETTINGS,
  realmSettingColumn,
  type RealmPermissionSettingName,
} from '../domain/permission-settings.js'
import { accessStreamByIdIn } from '../access/stream.js'
import { renderPlainDescription } from './render-description.js'
import { getSystemGroupIds, presentGroupSettingValues } from '../queries/group-setting-values.js'
import { derivedPolicies, getRealmSettingGroupIds, storedRealmSettingGroupId } from '../queries/realm-permissions.js'
import { dropReplacedAnonymousGroups, storeGroupSettingValue } from './group-setting-values.js'
import { watchBillingAdmins } from './billing-admin-events.js'

/** Scalars as declared by the route; group settings as decoded JSON. */
export type RealmUpdateInput = Record<string, unknown>

const ANNOUNCEMENT_STREAMS = {
  new_stream_announcements_stream_id: 'newStreamAnnouncementsStreamId',
  signup_announcements_stream_id: 'signupAnnouncementsStreamId',
  moderation_request_channel_id: 'moderationRequestChannelId',
} as const

/** A group change by system group name (from a deprecated policy) or by wire value. */
type PendingGroupChange = { change: GroupSettingChange } | { systemGroup: string }

/** The group settings a request changes: explicit ones first, then those its deprecated policies stand for. */
function groupChangesOf(given: [string, unknown][]): Map<RealmPermissionSettingName, PendingGroupChange> {
  const out = new Map<RealmPermissionSettingName, PendingGroupChange>()
  for (const [name, raw] of given) if (isRealmPermissionSetting(name)) out.set(name, { change: parseGroupSettingChange(raw, name) })
  for (const [name, raw] of given) {
    const policy = LEGACY_POLICIES[name]
    if (policy) {
      const value = parsePolicyValue(raw as SettingValue, name, Object.keys(policy.groups).map(Number))
      if (!out.has(policy.setting)) out.set(policy.setting, { systemGroup: policy.groups[value] as string })
    } else if (name === 'bot_creation_policy') {
      const groups = botCreationGroups(parsePolicyValue(raw as SettingValue, name, [1, 2, 3]))
      for (const [setting, group] of Object.entries(groups) as [RealmPermissionSettingName, string][]) {
        if (!out.has(setting)) out.set(setting, { systemGroup: group })
      }
    }
  }
  return out
}

function requireRole(ctx: ActionContext, given: [string, unknown][]): void {
  if (!isAdmin(ctx.user.role)) throw mustBeAdmin()
  const ownerOnly = given.some(([name]) => {
    if (REALM_SETTINGS[name]?.ownerOnly || LEGACY_POLICIES[name]?.ownerOnly) return true
    return isRealmPermissionSetting(name) && (REALM_PERMISSION_SETTINGS[name] as { ownerOnly?: boolean }).ownerOnly === true
  })
  if (ownerOnly && !isOwner(ctx.user.role)) throw mustBeOwner()
}

export async function updateRealm(ctx: ActionContext, input: RealmUpdateInput): Promise<Record<string, unknown>> {
  const given = Object.entries(input).filter(([, value]) => value !== undefined)
  requireRole(ctx, given)
  const groupChanges = groupChangesOf(given)
  return inTransaction(ctx, async (tx, emit) => {
    const realm = await tx.realm.findUniqueOrThrow({ where: { id: ctx.realm.id } })
    // The stored anonymous group may change in place: the snapshot comes first.
    const billingAdminsChanged = groupChanges.has('can_manage_billing_group') ? await watchBillingAdmins(tx, ctx, emit) : null
    const data: Record<string, unknown> = {}
    const changed: { name: string; value: SettingValue; dict: boolean }[] = []
    const out: Record<string, unknown> = {}

    // Group settings: compare with the current wire values, then store.
    const beforeIds = await getRealmSettingGroupIds(tx, realm)
    const afterIds = { ...beforeIds }
    const groupEvents: [string, GroupSettingValue][] = []
    if (groupChanges.size > 0) {
      const [current, system] = await Promise.all([presentGroupSettingValues(tx, Object.values(beforeIds)), getSystemGroupIds(tx, realm.id)])
      for (const [name, pending] of groupChanges) {
        const change = 'change' in pending ? pending.change : { new: system.get(pending.systemGroup) ?? 0 }
        if (!checkGroupSettingChange(current.get(beforeIds[name]) ?? beforeIds[name], change)) continue
        const id = await storeGroupSettingValue(tx, {
          realmId: realm.id,
          setting: name,
          config: REALM_PERMISSION_SETTINGS[name].config,
          value: change.new,
          currentGroupId: storedRealmSettingGroupId(realm, name),
        })
        data[realmSettingColumn(name)] = id
        afterIds[name] = id
        groupEvents.push([name, change.new])
        if ('change' in pending) out[name] = change.new
      }
    }

    const shown = (setting: RealmSetting, stored: SettingValue): SettingValue => (setting.present ? setting.present(stored) : stored)
    for (const [name, raw] of given) {
      const setting = REALM_SETTINGS[name]
      if (setting) {
        const value = setting.parse ? setting.parse(raw as SettingValue, name) : (raw as SettingValue)
        if (realm[setting.column] === value) continue
        data[setting.column] = value
        if (setting.column === 'description') data.renderedDescription = renderPlainDescription(String(value))
        changed.push({ name, value: shown(setting, value), dict: setting.dict === true })
        continue
      }
      if (name in ANNOUNCEMENT_STREAMS && typeof raw === 'number') {
        const column = ANNOUNCEMENT_STREAMS[name as keyof typeof ANNOUNCEMENT_STREAMS]
        const stream = raw < 0 ? null : (await accessStreamByIdIn(tx, ctx.user, raw)).stream
        if (column === 'moderationRequestChannelId' && stream && !stream.inviteOnly) throw moderationChannelMustBePrivate()
        const streamId = stream?.id ?? null
        if (realm[column] === streamId) continue
        data[column] = streamId
        changed.push({ name, value: streamId ?? -1, dict: false })
      }
    }
    // Another setting stored in a changed column (allow_edit_history beside
    // message_edit_history_visibility_policy) gets its event too when its wire value moves.
    for (const [name, setting] of Object.entries(REALM_SETTINGS)) {
      if (!(setting.column in data) || changed.some((c) => c.name === name)) continue
      const value = shown(setting, data[setting.column] as SettingValue)
      if (value !== shown(setting, realm[setting.column])) changed.push({ name, value, dict: setting.dict === true })
    }
    if (changed.length === 0 && groupEvents.length === 0) return out
    await tx.realm.update({ where: { id: realm.id }, data: data as Prisma.RealmUncheckedUpdateInput })
    await dropReplacedAnonymousGroups(tx, groupEvents.map(([name]) => storedRealmSettingGroupId(realm, name as RealmPermissionSettingName)), Object.values(afterIds))
    const users = (await tx.user.findMany({ where: { realmId: realm.id, isActive: true }, select: { id: true } })).map((u) => u.id)
    for (const { name, value, dict } of changed) {
      if (dict) emit(realmUpdateDictEvent({ [name]: value }), users)
      else emit(realmUpdateEvent(name, value), users)
      if (given.some(([g]) => g === name)) out[name] = typeof value === 'string' ? 'updated' : value
    }
    for (const [name, value] of groupEvents) emit(realmUpdateDictEvent({ [name]: value }), users)
    if (groupEvents.length > 0) {
      const system = await getSystemGroupIds(tx, realm.id)
      const nameOf = new Map([...system].map(([name, id]) => [id, name]))
      const before = derivedPolicies(beforeIds, (id) => nameOf.get(id) ?? null)
      const after = derivedPolicies(afterIds, (id) => nameOf.get(id) ?? null)
      for (const [policy, value] of Object.entries(after)) {
        if (before[policy] === value) continue
        if (LEGACY_POLICIES[policy]?.dict) emit(realmUpdateDictEvent({ [policy]: value }), users)
        else emit(realmUpdateEvent(policy, value), users)
        if (given.some(([name]) => name === policy)) out[policy] = value
      }
    }
    await billingAdminsChanged?.()
    return out
  })
}
