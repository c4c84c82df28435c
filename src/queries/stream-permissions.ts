// Reads for a channel's group permission settings (domain/stream-settings.ts):
// the context presenting them needs, a user's group grants, and the users
// whose groups grant access to private channels (levels 349 and 354).
import type { PrismaClient, Tx } from '../db/index.js'
import { STREAM_PERMISSION_SETTING_NAMES } from '../domain/permission-settings.js'
import { storedStreamSettingGroupId, type StreamGroupColumns, type StreamGroupContext } from '../domain/stream-settings.js'
import { ROLE } from '../domain/roles.js'
import { getSystemGroupIds, presentGroupSettingValues } from './group-setting-values.js'

type Db = PrismaClient | Tx

/** Loads what presentStream needs for these channels (three queries at most, whatever their number). */
export async function getStreamGroupContext(db: Db, realmId: number, streams: readonly StreamGroupColumns[]): Promise<StreamGroupContext> {
  const systemIds = await getSystemGroupIds(db, realmId)
  const stored = new Set<number>()
  for (const stream of streams) {
    for (const name of STREAM_PERMISSION_SETTING_NAMES) {
      const id = storedStreamSettingGroupId(stream, name)
      if (id !== null) stored.add(id)
    }
  }
  const values = await presentGroupSettingValues(db, stored)
  return { systemIds, systemNames: new Map([...systemIds].map(([name, id]) => [id, name])), values }
}

/**
 * Active non-guest users whose groups grant each channel's metadata (upstream's
 * get_users_dict_with_metadata_access_to_streams_via_permission_groups), by channel.
 * Three queries whatever the number of channels.
 */
export async function metadataGranteesByStream(db: Db, realmId: number, streams: readonly (StreamGroupColumns & { id: number })[]): Promise<Map<number, Set<number>>> {
  const out = new Map<number, Set<number>>(streams.map((s) => [s.id, new Set<number>()]))
  const roots = new Set<number>()
  for (const s of streams) for (const id of [s.canAdministerChannelGroupId, s.canAddSubscribersGroupId, s.canSubscribeGroupId]) if (id !== null) roots.add(id)
  if (roots.size === 0) return out
  const members = await recursiveMembers(db, realmId, roots)
  for (const s of streams) {
    const set = out.get(s.id) as Set<number>
    for (const id of [s.canAdministerChannelGroupId, s.canAddSubscribersGroupId, s.canSubscribeGroupId]) for (const user of (id === null ? undefined : members.get(id)) ?? []) set.add(user)
  }
  return out
}

/** Active non-guest users of each group, through subgroups (deactivated subgroups do not count). */
async function recursiveMembers(db: Db, realmId: number, roots: ReadonlySet<number>): Promise<Map<number, Set<number>>> {
  const edges = await db.userGroupSubgroup.findMany({ where: { supergroup: { realmId, deactivated: false } }, select: { supergroupId: true, subgroupId: true } })
  const subgroupsOf = new Map<number, number[]>()
  for (const e of edges) subgroupsOf.set(e.supergroupId, [...(subgroupsOf.get(e.supergroupId) ?? []), e.subgroupId])
  const descendants = new Map<number, Set<number>>()
  for (const root of roots) {
    const seen = new Set<number>()
    const pending = [root]
    while (pending.length > 0) {
      const id = pending.pop() as number
      if (seen.has(id)) continue
      seen.add(id)
      pending.push(...(subgroupsOf.get(id) ?? []))
    }
    descendants.set(root, seen)
  }
  const all = new Set([...descendants.values()].flatMap((set) => [...set]))
  const rows = await db.userGroupMember.findMany({
    where: { groupId: { in: [...all] }, group: { deactivated: false }, user: { isActive: true, role: { not: ROLE.GUEST } } },
    select: { groupId: true, userId: true },
  })
  const membersOf = new Map<number, number[]>()
  for (const r of rows) membersOf.set(r.groupId, [...(membersOf.get(r.groupId) ?? []), r.userId])
  const out = new Map<number, Set<number>>()
  for (const [root, groups] of descendants) out.set(root, new Set([...groups].flatMap((g) => membersOf.get(g) ?? [])))
  return out
}

export { storedStreamSettingGroupId, streamSettingsWire, type StreamGroupContext } from '../domain/stream-settings.js'
export { groupGrantsOf } from '../access/stream-grants.js'
