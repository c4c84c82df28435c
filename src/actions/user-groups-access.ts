// Who may change user groups (upstream's access_user_group_for_update):
// members and above, never guests or bots (require_member_or_admin); system
// groups are read-only. Creating needs the realm's can_create_groups. Every
// change of a group names the group setting it needs: can_manage_group for
// its name, description, settings, deactivation and subgroup removals;
// can_add_members_group (or can_join_group, for adding oneself) for new
// members and subgroups; can_remove_members_group (or can_leave_group, for
// removing oneself) for removals. The realm's can_manage_all_groups and the
// group's can_manage_group grant all of them.
import type { Realm, Tx, User, UserGroup } from '../db/index.js'
import type { ActionContext, TxContext } from './context.js'
import { holdsGroupSetting } from '../domain/group-setting-value.js'
import { GROUP_PERMISSION_SETTINGS, REALM_PERMISSION_SETTINGS, type GroupPermissionSettingName } from '../domain/permission-settings.js'
import { SYSTEM_GROUPS } from '../domain/system-groups.js'
import { isGuest } from '../domain/roles.js'
import { groupMentionNotAllowed, insufficientPermission, invalidUserGroup, userGroupDeactivated } from '../errors.js'
import { requireMemberOrAdmin } from '../access/member-or-admin.js'
import { getPermissionGroupIds, getSystemGroupIds } from '../queries/group-setting-values.js'
import { getRealmSettingGroupIds, holdsRealmPermission } from '../queries/realm-permissions.js'
import { groupSettingIds } from '../queries/user-groups.js'

type Db = Tx | ActionContext['prisma']

/** Upstream's require_member_or_admin, the first check of every group change. */
export function requireGroupEditPermission(ctx: TxContext): void {
  requireMemberOrAdmin(ctx)
}

/** POST /user_groups/create: the realm's can_create_groups. */
export async function requireGroupCreatePermission(ctx: ActionContext): Promise<void> {
  requireMemberOrAdmin(ctx)
  if (!(await holdsRealmPermission(ctx.prisma, ctx.realm, ctx.user, 'can_create_groups', ctx.now()))) throw insufficientPermission()
}

/**
 * A group of the user's realm, for reading (upstream's GET group endpoints
 * are require_member_or_admin too); a deactivated one is refused, as upstream
 * access_user_group_to_read_membership does.
 */
export async function accessUserGroupForRead(ctx: ActionContext, groupId: number, db: Db = ctx.prisma): Promise<UserGroup> {
  requireMemberOrAdmin(ctx)
  const group = await db.userGroup.findFirst({ where: { id: groupId, realmId: ctx.realm.id, isAnonymous: false } })
  if (!group) throw invalidUserGroup()
  if (group.deactivated) throw userGroupDeactivated()
  return group
}

/** Which of a group's settings the acting user holds (can_manage_all_groups and can_manage_group count for every one). */
export type GroupPermissionCheck = (setting: GroupPermissionSettingName) => boolean

export interface WritableGroup {
  group: UserGroup
  may: GroupPermissionCheck
}

/**
 * A group the user may change, locked for the rest of the transaction, with
 * the check of its settings for the user. Refused as upstream: unknown →
 * "Invalid user group"; deactivated (unless allowDeactivated: its name,
 * description, settings and members stay editable, levels 294 and 340) →
 * "User group is deactivated."; a system group → "Insufficient permission".
 * The caller checks the setting its change needs with requireGroupPermission.
 */
export async function accessUserGroupForUpdate(ctx: TxContext, tx: Tx, groupId: number, options: { allowDeactivated?: boolean } = {}): Promise<WritableGroup> {
  requireGroupEditPermission(ctx)
  await tx.$executeRaw`SELECT id FROM user_group WHERE id = ${groupId} FOR UPDATE`
  const [writable] = await writableGroups(ctx, tx, [groupId], options)
  return writable as WritableGroup
}

/** Upstream's rule: can_manage_all_groups or can_manage_group, else the named setting; "Insufficient permission" otherwise. */
export function requireGroupPermission(writable: WritableGroup, setting: GroupPermissionSettingName): void {
  if (!writable.may(setting)) throw insufficientPermission()
}

/**
 * Several groups the user may add members to (an invitation's group_ids), checked as
 * accessUserGroupForUpdate checks one (the first refused group in `groupIds` order decides
 * the error), in a fixed number of statements whatever their number, without locking them.
 */
export async function checkCanAddMembersToGroups(ctx: TxContext, db: Db, groupIds: number[]): Promise<void> {
  if (groupIds.length === 0) return
  requireGroupEditPermission(ctx)
  await writableGroups(ctx, db, groupIds, { setting: 'can_add_members_group' })
}

async function writableGroups(ctx: TxContext, db: Db, groupIds: number[], options: { allowDeactivated?: boolean; setting?: GroupPermissionSettingName }): Promise<WritableGroup[]> {
  const [rows, userGroups, realmIds, system] = await Promise.all([
    db.userGroup.findMany({ where: { id: { in: groupIds }, realmId: ctx.realm.id, isAnonymous: false } }),
    getPermissionGroupIds(db, ctx.realm, ctx.user, ctx.now()),
    getRealmSettingGroupIds(db, ctx.realm),
    getSystemGroupIds(db, ctx.realm.id),
  ])
  const byId = new Map(rows.map((g) => [g.id, g]))
  const guest = isGuest(ctx.user.role)
  const manageAll = holdsGroupSetting(userGroups, realmIds.can_manage_all_groups, REALM_PERMISSION_SETTINGS.can_manage_all_groups.config, guest)
  return groupIds.map((id) => {
    const group = byId.get(id)
    if (!group) throw invalidUserGroup()
    if (group.deactivated && !options.allowDeactivated) throw userGroupDeactivated()
    if (group.isSystemGroup) throw insufficientPermission()
    const ids = groupSettingIds(group, system)
    const holds = (setting: GroupPermissionSettingName) => holdsGroupSetting(userGroups, ids[setting], GROUP_PERMISSION_SETTINGS[setting], guest)
    const manages = manageAll || holds('can_manage_group')
    const writable: WritableGroup = { group, may: (setting) => manages || holds(setting) }
    if (options.setting) requireGroupPermission(writable, options.setting)
    return writable
  })
}

/**
 * Upstream's check_user_group_mention_allowed, for the groups a message mentions (not
 * silently): each group's can_mention_group must hold the sender, unless it is role:everyone;
 * a system bot may mention only those.
 */
export async function checkGroupMentionsAllowed(db: Db, realm: Realm, sender: Pick<User, 'id' | 'role' | 'dateJoined' | 'isSystemBot'>, groupIds: number[], now: Date): Promise<void> {
  if (groupIds.length === 0) return
  const [groups, system] = await Promise.all([
    db.userGroup.findMany({ where: { id: { in: groupIds }, realmId: realm.id, isAnonymous: false }, orderBy: { id: 'asc' } }),
    getSystemGroupIds(db, realm.id),
  ])
  let senderGroups: Set<number> | undefined
  for (const group of groups) {
    const settingGroupId = groupSettingIds(group, system).can_mention_group
    if (settingGroupId === system.get(SYSTEM_GROUPS.everyone)) continue
    if (sender.isSystemBot) throw groupMentionNotAllowed(group.name)
    senderGroups ??= await getPermissionGroupIds(db, realm, sender, now)
    if (!holdsGroupSetting(senderGroups, settingGroupId, GROUP_PERMISSION_SETTINGS.can_mention_group, isGuest(sender.role))) throw groupMentionNotAllowed(group.name)
  }
}

/** Serializes changes to the realm's subgroup graph, so two concurrent additions cannot form a cycle. */
export async function lockGroupGraph(tx: Tx, realmId: number): Promise<void> {
  await tx.$executeRaw`SELECT pg_advisory_xact_lock(7431, ${realmId}::int)`
}
