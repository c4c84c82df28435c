// The daily recheck of channels' is_recently_active (upstream level 323;
// actions/stream-activity.ts), safe on any number of nodes. Each realm has a
// stream_activity_check row (made here for realms that have none); a node's
// loop (jobs/loop.ts) probes for a due row every TICK_MS (jobs/leased.ts's
// anyDue), and actions/stream-activity.ts's recheckDueRealm locks one with
// `FOR UPDATE SKIP LOCKED` (lockDue, no lease: the work is one statement
// inside the locking transaction), recomputes the realm's channels, moves the
// row's due_at a day on and commits; the events go out after the commit. A node that fails or dies mid-way rolls back, and
// the row is due again for any node.
import type { FastifyBaseLogger } from 'fastify'
import type { Services } from '../services.js'
import { recheckDueRealm } from '../actions/stream-activity.js'
import { anyDue } from '../jobs/leased.js'
import { startWorkerLoop, type WorkerLoop } from '../jobs/loop.js'
import { Prisma } from '../db/index.js'

/** How often a node looks for a due realm. */
export const TICK_MS = 10 * 60 * 1000
/** How long after a check a realm is due again. */
export const CHECK_INTERVAL_MS = 24 * 3600 * 1000

export interface StreamActivityOptions {
  log: FastifyBaseLogger
  /** Only these realms (tests that share a database with other tests). */
  realmIds?: number[]
  tickMs?: number
}

/** Rechecks the channels of one due realm; returns 1, or 0 when no realm was due. */
export async function checkDueRealm(services: Services, options: Omit<StreamActivityOptions, 'log' | 'tickMs'> = {}): Promise<number> {
  const now = services.now()
  const only = options.realmIds ? Prisma.sql`AND r.id = ANY(${options.realmIds}::int[])` : Prisma.empty
  await services.prisma.$executeRaw`
    INSERT INTO stream_activity_check (realm_id, due_at)
    SELECT r.id, ${now}::timestamptz FROM realm r
    WHERE NOT r.deactivated ${only} AND NOT EXISTS (SELECT 1 FROM stream_activity_check c WHERE c.realm_id = r.id)
    ON CONFLICT (realm_id) DO NOTHING`
  if (!(await anyDue(services.prisma, 'stream_activity_check', now, options.realmIds))) return 0
  return recheckDueRealm(services, now, CHECK_INTERVAL_MS, options.realmIds)
}

export function startStreamActivityChecks(services: Services, options: StreamActivityOptions): WorkerLoop {
  return startWorkerLoop(() => checkDueRealm(services, { realmIds: options.realmIds }), {
    log: options.log,
    tickMs: options.tickMs ?? TICK_MS,
    name: 'stream activity',
  })
}
