// Delivery of scheduled messages, safe on any number of nodes.
//
// Every node runs one loop (jobs/loop.ts). A short timer (TICK_MS) looks for
// due rows (jobs/leased.ts's probe); each transaction locks up to BATCH_SIZE
// due rows with `FOR UPDATE SKIP LOCKED` (jobs/leased.ts's lockDue, without a
// lease: the work is done inside the locking transaction),
// sends each through the ordinary send path (a real message with its own
// flags and message events), marks them delivered and emits
// scheduled_messages remove for each. Another node's claim skips rows locked
// here, and a committed `delivered` excludes them from every later claim, so
// each row is sent exactly once. Events are held until the commit
// (held-services.ts). A batch shares one claim, one `delivered` update and one
// commit; each send runs under a savepoint, so a row that fails to send rolls
// back alone and the others still commit.
//
// A row that cannot be sent (sender or organization deactivated, channel
// gone, permission lost, more than ten minutes late) is marked failed, after
// the batch, with the error as failure_message; the sender gets
// scheduled_messages update (failed: true) and, except for deactivations, a
// direct message from the notification bot, as upstream does.
import type { FastifyBaseLogger } from 'fastify'
import type { ActionContext, Services } from '../services.js'
import type { PrismaClient, Realm, ScheduledMessage, Tx, User } from '../db/index.js'
import { ApiError } from '../errors.js'
import { sendMessage } from '../actions/send-message.js'
import { scheduledMessagesRemoveEvent, scheduledMessagesUpdateEvent } from '../actions/scheduled-messages.js'
import { presentScheduledMessage } from '../queries/scheduled-messages.js'
import { HeldBus, heldServices } from './held-services.js'
import { startWorkerLoop, type WorkerLoop } from '../jobs/loop.js'
import { anyDue, lockDue } from '../jobs/leased.js'

export const TICK_MS = 100
/** Upstream's SCHEDULED_MESSAGE_LATE_CUTOFF_MINUTES. */
export const LATE_CUTOFF_MS = 10 * 60 * 1000
const SCHEDULER_CLIENT = 'Roost scheduler'
const TRANSACTION_OPTIONS = { maxWait: 10_000, timeout: 30_000 }

/** Rows claimed per transaction (measured with test/cluster/scheduled-delivery.test.ts: 200 due in one second on three nodes all delivered in 0.6–1.0 s with 25 and a 100 ms tick). */
export const BATCH_SIZE = 25
export interface DeliveryOptions {
  log: FastifyBaseLogger
  /** Only rows of these realms (tests that share a database with other tests). */
  realmIds?: number[]
  tickMs?: number
  /** Rows claimed per transaction; BATCH_SIZE unless given. */
  batchSize?: number
}

/** Why a row could not be sent; `notify`: whether the sender hears of it by a direct message. */
class DeliveryFailure extends Error {
  constructor(
    message: string,
    readonly notify: boolean,
  ) {
    super(message)
  }
}

type ClaimedRow = ScheduledMessage & { sender: User; realm: Realm }

/** Locks up to `limit` due rows (jobs/leased.ts states the condition), or the one row `onlyId` if still unsettled, that no other transaction holds. */
async function claimDue(tx: Tx, now: Date, realmIds: number[] | undefined, limit: number, onlyId?: number): Promise<ClaimedRow[]> {
  const claimed = await lockDue(tx, 'scheduled_message', { now, realmIds, limit, onlyId })
  if (claimed.length === 0) return []
  const rows = await tx.scheduledMessage.findMany({ where: { id: { in: claimed } }, include: { sender: true, realm: true } })
  const byId = new Map(rows.map((row) => [row.id, row]))
  return claimed.flatMap((id) => byId.get(id) ?? [])
}

function contextFor(services: Services, realm: Realm, user: User, log: FastifyBaseLogger): ActionContext {
  return { ...services, realm, user, log: log.child({ user_id: user.id }), clientName: SCHEDULER_CLIENT }
}

function checkDeliverable(row: ClaimedRow, now: Date): void {
  if (row.realm.deactivated) throw new DeliveryFailure('This organization has been deactivated', false)
  if (!row.sender.isActive) throw new DeliveryFailure('Account is deactivated', false)
  if (now.getTime() - row.scheduledTimestamp.getTime() > LATE_CUTOFF_MS) {
    throw new DeliveryFailure('Message could not be sent at the scheduled time.', true)
  }
}

/** `to` of the send path: the channel ID, or the JSON list of user IDs. */
const sendTarget = (row: ScheduledMessage): string => (row.recipientType === 'stream' ? String(row.streamId) : JSON.stringify(row.to))

function asFailure(error: unknown): DeliveryFailure {
  if (error instanceof DeliveryFailure) return error
  return error instanceof ApiError ? new DeliveryFailure(error.msg, true) : new DeliveryFailure('Internal server error', true)
}

/**
 * Sends one claimed row under a savepoint: if the send fails, only its own
 * writes roll back. The savepoint is not released (a round trip saved per
 * row): a later one of the same name shadows it, and the commit ends them all.
 */
async function sendClaimed(services: Services, tx: Tx, row: ClaimedRow, bus: HeldBus, log: FastifyBaseLogger): Promise<number> {
  await tx.$executeRaw`SAVEPOINT scheduled_delivery`
  try {
    const ctx = contextFor(heldServices(services, tx, bus), row.realm, row.sender, log)
    const message = await sendMessage(ctx, {
      type: row.recipientType === 'stream' ? 'stream' : 'private',
      to: sendTarget(row),
      topic: row.recipientType === 'stream' ? row.topic : undefined,
      content: row.content,
      readBySender: row.readBySender,
    })
    return message.id
  } catch (error) {
    await tx.$executeRaw`ROLLBACK TO SAVEPOINT scheduled_delivery`
    throw error
  }
}

/**
 * Claims and delivers up to a batch of due rows in one transaction, then
 * marks those that could not be sent as failed. Returns how many rows were
 * settled (sent or failed); 0 when nothing was due.
 */
export async function deliverBatch(services: Services, options: DeliveryOptions): Promise<number> {
  const now = services.now()
  if (!(await anyDue(services.prisma, 'scheduled_message', now, options.realmIds))) return 0
  const sent: HeldBus[] = []
  const failed: { row: ClaimedRow; error: unknown }[] = []
  const claimed = await services.prisma.$transaction(async (tx) => {
    sent.length = 0
    failed.length = 0
    const rows = await claimDue(tx, now, options.realmIds, options.batchSize ?? BATCH_SIZE)
    const delivered: { id: number; messageId: number }[] = []
    for (const row of rows) {
      const held = new HeldBus(services.bus)
      try {
        checkDeliverable(row, now)
        const messageId = await sendClaimed(services, tx, row, held, options.log)
        await held.publish({ realmId: row.realmId, userIds: [row.senderId], event: scheduledMessagesRemoveEvent(row.id), origin: services.nodeId })
        delivered.push({ id: row.id, messageId })
        sent.push(held)
      } catch (error) {
        failed.push({ row, error })
      }
    }
    if (delivered.length > 0) {
      await tx.$executeRaw`
        UPDATE scheduled_message AS s SET delivered = true, delivered_message_id = d.message_id
        FROM unnest(${delivered.map((d) => d.id)}::int[], ${delivered.map((d) => d.messageId)}::int[]) AS d(id, message_id)
        WHERE s.id = d.id`
    }
    return rows.length
  }, TRANSACTION_OPTIONS)
  for (const held of sent) await held.release()
  for (const { row, error } of failed) {
    if (!(error instanceof DeliveryFailure) && !(error instanceof ApiError)) {
      options.log.error({ err: error, scheduled_message_id: row.id }, 'scheduled message delivery failed')
    }
    await markFailed(services, options, row.id, asFailure(error))
  }
  return claimed
}

const failureNotice = (row: ScheduledMessage, error: string): string =>
  `The message you scheduled for <time:${row.scheduledTimestamp.toISOString()}> was not sent because of the following error:\n\n` +
  `> ${error}\n\n[View scheduled messages](#scheduled)`

async function markFailed(services: Services, options: DeliveryOptions, id: number, failure: DeliveryFailure): Promise<void> {
  const held = new HeldBus(services.bus)
  await services.prisma.$transaction(async (tx) => {
    const [row] = await claimDue(tx, services.now(), options.realmIds, 1, id)
    if (!row) return // another node settled it meanwhile
    const updated = await tx.scheduledMessage.update({ where: { id }, data: { failed: true, failureMessage: failure.message } })
    await held.publish({ realmId: row.realmId, userIds: [row.senderId], event: scheduledMessagesUpdateEvent(presentScheduledMessage(updated)), origin: services.nodeId })
    const botId = row.realm.notificationBotId
    if (!failure.notify || botId === null) return
    const bot = await tx.user.findUnique({ where: { id: botId } })
    if (!bot) return
    const ctx = contextFor(heldServices(services, tx, held), row.realm, bot, options.log)
    await sendMessage(ctx, { type: 'private', to: JSON.stringify([row.senderId]), content: failureNotice(row, failure.message) })
  }, TRANSACTION_OPTIONS)
  await held.release()
}

/** Rows due now that are neither sent nor failed: what claimDue would still pick up (the backlog metric). */
export async function countDue(prisma: PrismaClient, now: Date): Promise<number> {
  const [row] = await prisma.$queryRaw<{ n: number }[]>`
    SELECT count(*)::int AS n FROM scheduled_message
    WHERE NOT delivered AND NOT failed AND scheduled_timestamp <= ${now}::timestamptz`
  return row?.n ?? 0
}

/** Delivers every row due now; returns how many rows were settled (sent or failed). */
export async function deliverDue(services: Services, options: DeliveryOptions): Promise<number> {
  let settled = 0
  for (let n = await deliverBatch(services, options); n > 0; n = await deliverBatch(services, options)) settled += n
  return settled
}

export type ScheduledDelivery = WorkerLoop

/** Starts this node's delivery loop; `stop()` waits for a delivery in progress. */
export function startScheduledDelivery(services: Services, options: DeliveryOptions): ScheduledDelivery {
  return startWorkerLoop(() => deliverBatch(services, options), { log: options.log, tickMs: options.tickMs ?? TICK_MS, name: 'scheduled delivery' })
}
