// POST /register's answer (spec "Register an event queue"; §States event
// queue): an event queue and the state it starts from, read so that no change
// is both in the state and delivered, and none is missed.
//
// The queue first, then the snapshot: a change made in between is in both,
// never in neither, and the queue drops the events of transactions that
// committed before the snapshot (recordSnapshot). When all the database state
// asked for is the core statement's, that statement is the snapshot;
// otherwise the reads share one repeatable-read transaction.
import type { RequestContext } from '../services.js'
import type { PrismaClient, User } from '../db/index.js'
import { transactionAsClient } from '../db/transaction-client.js'
import type { RegisterQueueInput } from '../events/queues/index.js'
import type { PresenceDirectory } from './presence-directory.js'
import { readRegisterCore } from './register-core.js'
import { fetchRegisterState, registerCoreParts, stateIsCoreOnly, type RegisterStateOptions } from './register-state.js'

export type RegisterAnswer = { queue_id: string | null; last_event_id: number } & Record<string, unknown>

const SNAPSHOT_TRANSACTION = { isolationLevel: 'RepeatableRead', maxWait: 10_000, timeout: 30_000 } as const

/** A web-public visitor: the state alone, no queue. */
export async function registerVisitor(ctx: RequestContext, options: RegisterStateOptions): Promise<RegisterAnswer> {
  const state = await fetchRegisterState(
    { prisma: ctx.prisma, realm: ctx.realm, user: null, core: null, config: ctx.config, presence: ctx.presence, presenceMirror: ctx.presenceMirror, now: ctx.now },
    options,
  )
  return { queue_id: null, last_event_id: -1, ...state }
}

/** A user: a new event queue and the state it starts from, in one snapshot. */
export async function registerQueue(ctx: RequestContext, user: User, queueInput: RegisterQueueInput, options: RegisterStateOptions): Promise<RegisterAnswer> {
  const queue = await ctx.events.register(queueInput)
  ctx.log.info({ queue_id: queue.queueId }, 'event queue registered')
  const parts = registerCoreParts(options.fetchEventTypes, options.capabilities)
  const stateContext = { realm: ctx.realm, user, config: ctx.config, presence: ctx.presence, presenceMirror: ctx.presenceMirror, now: ctx.now }
  const readState = async (prisma: PrismaClient, presenceDirectory?: PresenceDirectory) => {
    const core = await readRegisterCore(prisma, user, parts)
    return { snapshot: core.snapshot, state: await fetchRegisterState({ ...stateContext, prisma, presenceDirectory, core }, options) }
  }
  const { snapshot, state } = stateIsCoreOnly(options.fetchEventTypes, { includeSubscribers: options.includeSubscribers }, user)
    ? await readState(ctx.prisma, ctx.presenceDirectory)
    : await ctx.prisma.$transaction((tx) => readState(transactionAsClient(tx)), SNAPSHOT_TRANSACTION)
  await ctx.events.recordSnapshot(queue, snapshot)
  return { queue_id: queue.queueId, last_event_id: -1, ...state }
}
