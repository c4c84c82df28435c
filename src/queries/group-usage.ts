// Where a user group is in use, as upstream's access_user_group_for_deactivation
// lists it (level 298's `objections`): as a subgroup of an active named group,
// as the value of a setting of an active channel, of an active group or of the
// realm, directly or as a subgroup of the anonymous group that is the value.
// Each table below names a setting's wire name and its column; a new group
// setting is a new row.
import type { Prisma, PrismaClient, Tx } from '../db/index.js'
import { GROUP_PERMISSION_SETTING_NAMES, groupSettingColumn, REALM_PERMISSION_SETTING_NAMES, realmSettingColumn, STREAM_PERMISSION_SETTING_NAMES, streamSettingColumn } from '../domain/permission-settings.js'

type Db = PrismaClient | Tx

type RealmGroupColumn = keyof Prisma.RealmWhereInput & `${string}Id`
type StreamGroupColumn = keyof Prisma.StreamWhereInput & `${string}GroupId`
type UserGroupGroupColumn = keyof Prisma.UserGroupWhereInput & `${string}GroupId`

/** Realm settings whose value is a user group (every one of domain/permission-settings.ts), by name. */
export const REALM_GROUP_SETTINGS: readonly (readonly [string, RealmGroupColumn])[] = [...REALM_PERMISSION_SETTING_NAMES]
  .sort()
  .map((name) => [name, realmSettingColumn(name) as RealmGroupColumn] as const)

/** Channel settings whose value is a user group (every one of domain/permission-settings.ts), by name. */
export const STREAM_GROUP_SETTINGS: readonly (readonly [string, StreamGroupColumn])[] = [...STREAM_PERMISSION_SETTING_NAMES]
  .sort()
  .map((name) => [name, streamSettingColumn(name) as StreamGroupColumn] as const)

/** User group settings whose value is a user group (every one of domain/permission-settings.ts). */
export const USER_GROUP_GROUP_SETTINGS: readonly (readonly [string, UserGroupGroupColumn])[] = GROUP_PERMISSION_SETTING_NAMES.map(
  (name) => [name, groupSettingColumn(name) as UserGroupGroupColumn] as const,
)

export type GroupObjection =
  | { type: 'subgroup'; supergroup_ids: number[] }
  | { type: 'channel'; channel_id: number; settings: string[] }
  | { type: 'user_group'; group_id: number; settings: string[] }
  | { type: 'realm'; settings: string[] }

const usesGroup = <C extends string>(settings: readonly (readonly [string, C])[], row: Record<string, unknown>, values: number[]): string[] =>
  settings.filter(([, column]) => values.includes(row[column] as number)).map(([name]) => name)

/** Every place where `groupId` is in use; empty when it may be deactivated. */
export async function getGroupObjections(db: Db, realmId: number, groupId: number): Promise<GroupObjection[]> {
  const supergroups = await db.userGroupSubgroup.findMany({
    where: { subgroupId: groupId, supergroup: { realmId } },
    select: { supergroupId: true, supergroup: { select: { deactivated: true, isAnonymous: true } } },
    orderBy: { supergroupId: 'asc' },
  })
  // The group itself, and the anonymous groups it is a subgroup of: a setting holding either uses it.
  const values = [groupId, ...supergroups.filter((s) => s.supergroup.isAnonymous).map((s) => s.supergroupId)]
  const [streams, groups, realm] = await Promise.all([
    db.stream.findMany({ where: { realmId, deactivated: false, OR: STREAM_GROUP_SETTINGS.map(([, column]) => ({ [column]: { in: values } })) }, orderBy: { id: 'asc' } }),
    db.userGroup.findMany({
      where: { realmId, deactivated: false, isAnonymous: false, id: { not: groupId }, OR: USER_GROUP_GROUP_SETTINGS.map(([, column]) => ({ [column]: { in: values } })) },
      orderBy: { id: 'asc' },
    }),
    db.realm.findUniqueOrThrow({ where: { id: realmId } }),
  ])
  const objections: GroupObjection[] = []
  const named = supergroups.filter((s) => !s.supergroup.isAnonymous && !s.supergroup.deactivated).map((s) => s.supergroupId)
  if (named.length > 0) objections.push({ type: 'subgroup', supergroup_ids: named })
  for (const stream of streams) objections.push({ type: 'channel', channel_id: stream.id, settings: usesGroup(STREAM_GROUP_SETTINGS, stream, values) })
  for (const group of groups) objections.push({ type: 'user_group', group_id: group.id, settings: usesGroup(USER_GROUP_GROUP_SETTINGS, group, values) })
  const realmSettings = usesGroup(REALM_GROUP_SETTINGS, realm, values)
  if (realmSettings.length > 0) objections.push({ type: 'realm', settings: realmSettings })
  return objections
}
