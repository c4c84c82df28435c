// PATCH /realm (upstream 9.0 zerver/views/realm.py update_realm): organization
// settings, administrators only (owners only for some). Every value is
// checked before anything is written; unchanged values are skipped. Each
// change is one `realm` event to every active user (`update`, or
// `update_dict` with property "default" for the message-editing and group
// settings, as upstream), and the response lists what changed (strings as
// "updated").
import { realmUpdateDictEvent, realmUpdateEvent } from '../events/schemas/index.js'
import type { Prisma } from '../db/index.js'
import type { ActionContext } from './context.js'
import { inTransaction } from './context.js'
import { mustBeAdmin, groupSettingMustBeSystemGroup, groupSettingNotAllowed, invalidUserGroup, mustBeOwner } from '../errors.js'
import { isAdmin, isOwner } from '../domain/roles.js'
import { REALM_GROUP_SETTINGS, REALM_SETTINGS, type SettingValue } from '../domain/realm-settings.js'
import { accessStreamByIdIn } from '../access/stream.js'
import { renderPlainDescription } from './render-description.js'

export type RealmUpdateInput = Record<string, SettingValue | undefined>

const ANNOUNCEMENT_STREAMS = {
  new_stream_announcements_stream_id: 'newStreamAnnouncementsStreamId',
  signup_announcements_stream_id: 'signupAnnouncementsStreamId',
} as const

export async function updateRealm(ctx: ActionContext, input: RealmUpdateInput): Promise<Record<string, unknown>> {
  if (!isAdmin(ctx.user.role)) throw mustBeAdmin()
  const given = Object.entries(input).filter((e): e is [string, SettingValue] => e[1] !== undefined)
  for (const [name] of given) {
    if (REALM_SETTINGS[name]?.ownerOnly || REALM_GROUP_SETTINGS[name]?.ownerOnly) {
      if (!isOwner(ctx.user.role)) throw mustBeOwner()
    }
  }
  return inTransaction(ctx, async (tx, emit) => {
    const realm = await tx.realm.findUniqueOrThrow({ where: { id: ctx.realm.id } })
    const data: Record<string, unknown> = {}
    const changed: { name: string; value: SettingValue; dict: boolean }[] = []

    for (const [name, raw] of given) {
      const setting = REALM_SETTINGS[name]
      if (setting) {
        const value = setting.parse ? setting.parse(raw, name) : raw
        if (realm[setting.column] === value) continue
        data[setting.column] = value
        if (setting.column === 'description') data.renderedDescription = renderPlainDescription(String(value))
        changed.push({ name, value, dict: setting.dict === true })
        continue
      }
      const groupSetting = REALM_GROUP_SETTINGS[name]
      if (groupSetting && typeof raw === 'number') {
        if (realm[groupSetting.column] === raw) continue
        const group = await tx.userGroup.findUnique({ where: { id: raw } })
        if (!group || group.realmId !== realm.id || group.deactivated) throw invalidUserGroup()
        if (groupSetting.requireSystemGroup && !group.isSystemGroup) throw groupSettingMustBeSystemGroup(name)
        if (group.isSystemGroup && (groupSetting.forbidden.includes(group.name) || (groupSetting.only && !groupSetting.only.includes(group.name)))) {
          throw groupSettingNotAllowed(name, group.name)
        }
        data[groupSetting.column] = group.id
        changed.push({ name, value: group.id, dict: true })
        continue
      }
      if (name in ANNOUNCEMENT_STREAMS && typeof raw === 'number') {
        const column = ANNOUNCEMENT_STREAMS[name as keyof typeof ANNOUNCEMENT_STREAMS]
        const streamId = raw < 0 ? null : (await accessStreamByIdIn(tx, ctx.user, raw)).stream.id
        if (realm[column] === streamId) continue
        data[column] = streamId
        changed.push({ name, value: streamId ?? -1, dict: false })
      }
    }
    if (changed.length === 0) return {}
    await tx.realm.update({ where: { id: realm.id }, data: data as Prisma.RealmUncheckedUpdateInput })
    const users = (await tx.user.findMany({ where: { realmId: realm.id, isActive: true }, select: { id: true } })).map((u) => u.id)
    const out: Record<string, unknown> = {}
    for (const { name, value, dict } of changed) {
      if (dict) emit(realmUpdateDictEvent({ [name]: value }), users)
      else emit(realmUpdateEvent(name, value), users)
      out[name] = typeof value === 'string' ? 'updated' : value
    }
    return out
  })
}
