// GET /scheduled_messages and register's `scheduled_messages`: the sender's
// undelivered scheduled messages (failed ones included), soonest first, in the
// wire shape that the scheduled_messages events also carry.
// (The presenter lives here rather than in present/ to keep the feature in
// the files its owner was given; it does no I/O.)
import type { PrismaClient, ScheduledMessage, Tx } from '../db/index.js'

import type { ScheduledMessageDict } from '../events/schemas/common.js'

export type { ScheduledMessageDict }

export function presentScheduledMessage(row: ScheduledMessage): ScheduledMessageDict {
  const common = {
    scheduled_message_id: row.id,
    content: row.content,
    rendered_content: row.renderedContent,
    scheduled_delivery_timestamp: Math.floor(row.scheduledTimestamp.getTime() / 1000),
    failed: row.failed,
  }
  if (row.recipientType === 'stream') {
    return { ...common, type: 'stream', to: row.streamId ?? 0, topic: row.topic }
  }
  return { ...common, type: 'private', to: [...row.to] }
}

export async function fetchScheduledMessages(prisma: PrismaClient | Tx, userId: number): Promise<ScheduledMessageDict[]> {
  const rows = await prisma.scheduledMessage.findMany({
    where: { senderId: userId, delivered: false },
    orderBy: [{ scheduledTimestamp: 'asc' }, { id: 'asc' }],
  })
  return rows.map(presentScheduledMessage)
}
