// What a user's groups grant on channels (levels 349 and 354): membership of
// a channel's can_administer_channel_group, can_add_subscribers_group or
// can_subscribe_group, through subgroups. One load of the user's groups, then
// any number of channels.
import type { PrismaClient, Tx } from '../db/index.js'
import { recursiveGroupIds } from '../domain/group-membership.js'
import { ROLE } from '../domain/roles.js'
import { groupGrants, NO_GRANTS, type GroupGrants } from '../domain/stream-access.js'
import { grantingGroups, type StreamGroupColumns } from '../domain/stream-settings.js'

type Db = PrismaClient | Tx

export async function groupGrantsOf(db: Db, user: { id: number; role: number; realmId: number }): Promise<(stream: StreamGroupColumns) => GroupGrants> {
  if (user.role === ROLE.GUEST) return () => NO_GRANTS
  const [direct, edges] = await Promise.all([
    db.userGroupMember.findMany({ where: { userId: user.id, group: { realmId: user.realmId, deactivated: false } }, select: { groupId: true } }),
    db.userGroupSubgroup.findMany({ where: { supergroup: { realmId: user.realmId, deactivated: false } }, select: { supergroupId: true, subgroupId: true } }),
  ])
  const groups = recursiveGroupIds(direct.map((m) => m.groupId), edges)
  return (stream) => groupGrants(user, grantingGroups(stream), groups)
}
