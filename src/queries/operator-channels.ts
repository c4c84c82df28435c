// What `roost channel list` prints: the organization's channels that are not
// archived, by name, with their active subscribers counted in one statement.
import type { PrismaClient } from '../db/index.js'

export interface OperatorChannel {
  stream_id: number
  name: string
  privacy: 'public' | 'private' | 'web-public'
  subscribers: number
  description: string
  date_created: string
}

export async function listOperatorChannels(db: PrismaClient, realmId: number): Promise<OperatorChannel[]> {
  const streams = await db.stream.findMany({ where: { realmId, deactivated: false }, orderBy: [{ name: 'asc' }, { id: 'asc' }] })
  const counts = await db.subscription.groupBy({
    by: ['streamId'],
    where: { stream: { realmId, deactivated: false }, active: true, user: { isActive: true } },
    _count: { _all: true },
  })
  const byStream = new Map(counts.map((c) => [c.streamId, c._count._all]))
  return streams.map((s) => ({
    stream_id: s.id,
    name: s.name,
    privacy: s.isWebPublic ? 'web-public' : s.inviteOnly ? 'private' : 'public',
    subscribers: byStream.get(s.id) ?? 0,
    description: s.description,
    date_created: s.dateCreated.toISOString(),
  }))
}
