// Who may send direct messages (upstream check_can_send_direct_message, the
// realm settings of level 270): every direct message needs a member of
// direct_message_permission_group among its sender and recipients, and only
// members of direct_message_initiator_group start a conversation that has no
// message yet. Bots send freely, and so does anyone writing only to
// themselves and bots.
import type { User } from '../db/index.js'
import type { ActionContext } from './context.js'
import { directMessagesDisabled, mayNotInitiateDirectMessages, noAuthorizingUser } from '../errors.js'
import { SYSTEM_GROUPS } from '../domain/system-groups.js'
import { getSystemGroupIds, usersInPermissionGroup } from '../queries/group-setting-values.js'


/**
 * Throws upstream's error when the sender may not send this direct message.
 * `recipients` are the resolved recipients (the sender may be among them);
 * `participantIds` the conversation's sorted user IDs, as the message stores them;
 * `everyoneGroupId` the realm's "everyone" system group when the caller has it
 * (either setting at it, or unset, restricts nothing).
 */
export async function checkMaySendDirectMessage(
  ctx: ActionContext,
  recipients: readonly Pick<User, 'id' | 'isBot'>[],
  participantIds: readonly number[],
  everyoneGroupId?: number,
): Promise<void> {
  const sender = ctx.user
  if (sender.isBot) return
  if (recipients.every((u) => u.isBot || u.id === sender.id)) return
  const permissionGroupId = ctx.realm.directMessagePermissionGroupId
  const initiatorGroupId = ctx.realm.directMessageInitiatorGroupId
  if (permissionGroupId === null && initiatorGroupId === null) return
  const everyone = everyoneGroupId ?? (await getSystemGroupIds(ctx.prisma, ctx.realm.id)).get(SYSTEM_GROUPS.everyone)
  const open = (id: number | null) => id === null || id === everyone
  if (open(permissionGroupId) && open(initiatorGroupId)) return

  const ids = [...new Set([sender.id, ...recipients.map((u) => u.id)])]
  const users = await ctx.prisma.user.findMany({ where: { id: { in: ids } }, select: { id: true, role: true, dateJoined: true } })
  if (!open(permissionGroupId) && permissionGroupId !== null) {
    const holding = await usersInPermissionGroup(ctx.prisma, ctx.realm, users, permissionGroupId, ctx.now())
    if (holding.size === 0) {
      const system = await getSystemGroupIds(ctx.prisma, ctx.realm.id)
      throw system.get(SYSTEM_GROUPS.nobody) === permissionGroupId ? directMessagesDisabled() : noAuthorizingUser()
    }
  }
  if (open(initiatorGroupId) || initiatorGroupId === null) return
  const self = users.filter((u) => u.id === sender.id)
  if ((await usersInPermissionGroup(ctx.prisma, ctx.realm, self, initiatorGroupId, ctx.now())).size > 0) return
  // Not an initiator: only a conversation that already has a message (in either direction).
  const previous = await ctx.prisma.message.findFirst({
    where: { realmId: ctx.realm.id, streamId: null, dmUserIds: { equals: [...participantIds] } },
    select: { id: true },
  })
  if (!previous) throw mayNotInitiateDirectMessages()
}
