// GET /messages/{message_id}/read_receipts (upstream views/read_receipts.py):
// who has read a message the requester can access, when the organization
// has read receipts on. As upstream, the list leaves out the sender, users
// who turned send_read_receipts off, deactivated users, users who muted the
// requester (their reading would reveal the mute) and users the requester
// muted; it includes bots and historical copies. A restricted guest sees
// only users it may access (access/user.ts). Ascending user IDs.
import type { ActionContext } from '../services.js'
import { Prisma } from '../db/index.js'
import { accessMessageById } from '../access/message.js'
import { FLAG_BITS } from '../domain/flags.js'
import { readReceiptsDisabled } from '../errors.js'
import { flagMask } from '../db/flag-sql.js'
import { guestMayAccessSql, isRestrictedGuest } from '../access/user.js'

export async function getReadReceipts(ctx: ActionContext, messageId: number): Promise<number[]> {
  const { message } = await accessMessageById(ctx, messageId)
  if (!ctx.realm.enableReadReceipts) throw readReceiptsDisabled()
  const viewer = ctx.user.id
  const accessible = (await isRestrictedGuest(ctx.prisma, ctx.realm, ctx.user))
    ? guestMayAccessSql(ctx.realm.id, viewer, Prisma.raw('um.user_id'))
    : Prisma.sql`TRUE`
  const rows = await ctx.prisma.$queryRaw<{ user_id: number }[]>(Prisma.sql`
    SELECT um.user_id FROM user_message um
    JOIN user_profile u ON u.id = um.user_id
    LEFT JOIN user_settings s ON s.user_id = um.user_id
    WHERE um.message_id = ${message.id}
      AND (um.flags & ${flagMask(FLAG_BITS.read)}) <> 0
      AND u.is_active
      AND COALESCE(s.send_read_receipts, TRUE)
      AND um.user_id <> ${message.senderId}
      AND NOT EXISTS (SELECT 1 FROM muted_user mu WHERE mu.user_id = um.user_id AND mu.muted_user_id = ${viewer})
      AND NOT EXISTS (SELECT 1 FROM muted_user mu WHERE mu.user_id = ${viewer} AND mu.muted_user_id = um.user_id)
      AND ${accessible}
    ORDER BY um.user_id`)
  return rows.map((r) => r.user_id)
}
