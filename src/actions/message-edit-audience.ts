// Who hears about a change to a message: everyone with a copy of it, plus
// the channel's subscribers when its history is open to them (upstream
// do_update_message / notify_reaction_update).
import type { Stream, Tx } from '../db/index.js'
import type { PrismaClient } from '../db/index.js'
import { flagsToList } from '../domain/flags.js'

type Db = PrismaClient | Tx

export interface MessageAudience {
  /** Users with a copy of the message → their flag bitmask. */
  rows: Map<number, number>
  /** Active, active-user subscribers of the channel whose history they may read (empty for direct messages). */
  subscribers: number[]
}

export async function activeSubscriberIds(db: Db, streamId: number): Promise<number[]> {
  const subs = await db.subscription.findMany({
    where: { streamId, active: true, user: { isActive: true } },
    select: { userId: true },
    orderBy: { userId: 'asc' },
  })
  return subs.map((s) => s.userId)
}

export async function messageAudience(db: Db, messageId: number, stream: Pick<Stream, 'id' | 'historyPublicToSubscribers'> | null): Promise<MessageAudience> {
  const rows = await db.userMessage.findMany({ where: { messageId, user: { isActive: true } }, select: { userId: true, flags: true } })
  const subscribers = stream && stream.historyPublicToSubscribers ? await activeSubscriberIds(db, stream.id) : []
  return { rows: new Map(rows.map((r) => [r.userId, r.flags])), subscribers }
}

/** Every user of the audience, sorted, and each one's `flags` for the event (an empty list without a copy). */
export function audienceOf(a: MessageAudience, exclude: ReadonlySet<number> = new Set()): { userIds: number[]; perUser: Record<number, Record<string, unknown>> } {
  const ids = new Set<number>([...a.rows.keys(), ...a.subscribers])
  const userIds = [...ids].filter((id) => !exclude.has(id)).sort((x, y) => x - y)
  const perUser: Record<number, Record<string, unknown>> = {}
  for (const id of userIds) {
    const flags = a.rows.get(id)
    if (flags !== undefined) perUser[id] = { flags: flagsToList(flags) }
  }
  return { userIds, perUser }
}
