// Delivery of scheduled messages, safe on any number of nodes.
//
// Every node runs one loop. A short timer (TICK_MS) looks for due rows; each
// delivery is one transaction that claims a single due row with
// `FOR UPDATE SKIP LOCKED`, sends it through the ordinary send path (a real
// message with its own flags and message events), marks it delivered and
// emits scheduled_messages remove. Another node's claim on the same row skips
// it, and a committed `delivered` excludes it from every later claim, so each
// row is sent exactly once. Events are held until the commit (held-services.ts).
//
// A row that cannot be sent (sender or organization deactivated, channel
// gone, permission lost, more than ten minutes late) is marked failed with the
// error as failure_message; the sender gets scheduled_messages update
// (failed: true) and, except for deactivations, a direct message from the
// notification bot, as upstream does.
import type { FastifyBaseLogger } from 'fastify'
import type { ActionContext, Services } from '../actions/context.js'
import type { Realm, ScheduledMessage, Tx, User } from '../db/index.js'
import { Prisma } from '../db/index.js'
import { ApiError } from '../errors.js'
import { sendMessage } from '../actions/send-message.js'
import { scheduledMessagesRemoveEvent, scheduledMessagesUpdateEvent } from '../actions/scheduled-messages.js'
import { presentScheduledMessage } from '../queries/scheduled-messages.js'
import { HeldBus, heldServices } from './held-services.js'

export const TICK_MS = 250
/** Upstream's SCHEDULED_MESSAGE_LATE_CUTOFF_MINUTES. */
export const LATE_CUTOFF_MS = 10 * 60 * 1000
const SCHEDULER_CLIENT = 'Roost scheduler'
const TRANSACTION_OPTIONS = { maxWait: 10_000, timeout: 30_000 }

export interface DeliveryOptions {
  log: FastifyBaseLogger
  /** Only rows of these realms (tests that share a database with other tests). */
  realmIds?: number[]
  tickMs?: number
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

async function claimDue(tx: Tx, now: Date, realmIds: number[] | undefined, onlyId?: number): Promise<ClaimedRow | null> {
  const realmFilter = realmIds ? Prisma.sql`AND realm_id = ANY(${realmIds}::int[])` : Prisma.empty
  const idFilter = onlyId !== undefined ? Prisma.sql`AND id = ${onlyId}` : Prisma.sql`AND scheduled_timestamp <= ${now}::timestamptz`
  const rows = await tx.$queryRaw<{ id: number }[]>`
    SELECT id FROM scheduled_message
    WHERE NOT delivered AND NOT failed ${idFilter} ${realmFilter}
    ORDER BY scheduled_timestamp, id
    LIMIT 1
    FOR UPDATE SKIP LOCKED`
  const id = rows[0]?.id
  if (id === undefined) return null
  return tx.scheduledMessage.findUniqueOrThrow({ where: { id }, include: { sender: true, realm: true } })
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

/**
 * Delivers one due row, if any. Returns false when nothing was due.
 */
export async function deliverNext(services: Services, options: DeliveryOptions): Promise<boolean> {
  const now = services.now()
  const held = new HeldBus(services.bus)
  // Set inside the transaction callback; read again if it throws.
  const claim: { row: ClaimedRow | null } = { row: null }
  try {
    const delivered = await services.prisma.$transaction(async (tx) => {
      const row = await claimDue(tx, now, options.realmIds)
      claim.row = row
      if (!row) return false
      checkDeliverable(row, now)
      const inside = heldServices(services, tx, held)
      const ctx = contextFor(inside, row.realm, row.sender, options.log)
      const message = await sendMessage(ctx, {
        type: row.recipientType === 'stream' ? 'stream' : 'private',
        to: sendTarget(row),
        topic: row.recipientType === 'stream' ? row.topic : undefined,
        content: row.content,
        readBySender: row.readBySender,
      })
      await tx.scheduledMessage.update({ where: { id: row.id }, data: { delivered: true, deliveredMessageId: message.id } })
      await held.publish({ realmId: row.realmId, userIds: [row.senderId], event: scheduledMessagesRemoveEvent(row.id), origin: services.nodeId })
      return true
    }, TRANSACTION_OPTIONS)
    await held.release()
    return delivered
  } catch (error) {
    held.discard()
    const row = claim.row
    if (!row) throw error
    const failure =
      error instanceof DeliveryFailure ? error : error instanceof ApiError ? new DeliveryFailure(error.msg, true) : new DeliveryFailure('Internal server error', true)
    if (!(error instanceof DeliveryFailure) && !(error instanceof ApiError)) {
      options.log.error({ err: error, scheduled_message_id: row.id }, 'scheduled message delivery failed')
    }
    await markFailed(services, options, row.id, failure)
    return true
  }
}

const failureNotice = (row: ScheduledMessage, error: string): string =>
  `The message you scheduled for <time:${row.scheduledTimestamp.toISOString()}> was not sent because of the following error:\n\n` +
  `> ${error}\n\n[View scheduled messages](#scheduled)`

async function markFailed(services: Services, options: DeliveryOptions, id: number, failure: DeliveryFailure): Promise<void> {
  const held = new HeldBus(services.bus)
  await services.prisma.$transaction(async (tx) => {
    const row = await claimDue(tx, services.now(), options.realmIds, id)
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

/** Delivers every row due now; returns how many rows were settled (sent or failed). */
export async function deliverDue(services: Services, options: DeliveryOptions): Promise<number> {
  let settled = 0
  while (await deliverNext(services, options)) settled++
  return settled
}

export interface ScheduledDelivery {
  stop(): Promise<void>
}

/** Starts this node's delivery loop; `stop()` waits for a delivery in progress. */
export function startScheduledDelivery(services: Services, options: DeliveryOptions): ScheduledDelivery {
  const tickMs = options.tickMs ?? TICK_MS
  let stopped = false
  let timer: NodeJS.Timeout | undefined
  let running: Promise<void> = Promise.resolve()

  const tick = () => {
    running = (async () => {
      try {
        while (!stopped && (await deliverNext(services, options))) {
          // keep going while rows are due
        }
      } catch (error) {
        options.log.error({ err: error }, 'scheduled delivery loop error')
      }
    })()
    void running.then(() => {
      if (!stopped) {
        timer = setTimeout(tick, tickMs)
        timer.unref()
      }
    })
  }
  timer = setTimeout(tick, 0)
  timer.unref()

  return {
    async stop() {
      stopped = true
      if (timer) clearTimeout(timer)
      await running
    },
  }
}
