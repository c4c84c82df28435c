// Sends missed-message emails, exactly once on any number of nodes.
//
// The claim, lease, retry and loop are jobs/leased.ts's and jobs/loop.ts's.
// Claim: one transaction locks a due row with `FOR UPDATE SKIP LOCKED` and
// leases every pending row of that user to this node (claimed_by,
// claim_expires_at = now + lease), then commits. Another node skips locked
// rows and rows under a live lease; a node that stops or dies mid-batch
// stops renewing nothing: its lease simply expires and another node claims
// the rows it had not settled yet.
// Send: the user's rows go out as one email per conversation (upstream
// batches per user, one email per stream topic or direct-message
// conversation). Rows whose message was read meanwhile are dropped; a deleted
// message's rows are gone with it (ON DELETE CASCADE). After the SMTP server
// accepts an email its rows are deleted at once — still only if the lease is
// this node's. Before each email the lease is renewed, and rows whose lease
// lapsed meanwhile are left to the node that took them over. LEASE_MS is far
// longer than one SMTP exchange may take (SMTP_TIMEOUT_MS per step), so a
// live node keeps its claim. A failed email keeps its rows: attempts + 1, due again after
// an exponential backoff (capped), the lease released, the failure logged and
// counted (roost_missed_message_email_failures_total). Nothing is dropped on
// failure.
import { accessibleAmong } from '../access/user.js'
import { INACCESSIBLE_USER_NAME } from '../present/user.js'
import type { FastifyBaseLogger } from 'fastify'
import type { Services } from '../services.js'
import { FLAG_BITS } from '../domain/flags.js'
import { mailerFor, noreplyAddress, type Mailer } from '../mail/outbox.js'
import { realmUrl } from '../present/realm.js'
import { startWorkerLoop, type WorkerLoop } from '../jobs/loop.js'
import { anyDue, claimLeased, renewLeases, retryLeased, settleLeased } from '../jobs/leased.js'
import { Prisma } from '../db/index.js'
import { renderMissedMessageEmail } from './email-content.js'
import { mentionedUserGroup } from './mentioned-group.js'
import { conversationKey } from './enqueue.js'
import { unsubscribePath, unsubscribeToken } from './unsubscribe.js'

export const TICK_MS = 1000
/** How long a claim holds before another node may take the rows over. */
export const LEASE_MS = 5 * 60 * 1000
export const RETRY_BASE_MS = 30 * 1000
export const RETRY_MAX_MS = 60 * 60 * 1000

export interface EmailDeliveryOptions {
  log: FastifyBaseLogger
  /** Only rows of these realms (tests sharing a database). */
  realmIds?: number[]
  tickMs?: number
  leaseMs?: number
  retryBaseMs?: number
  /** The mail sink; mailerFor(config) unless given. */
  mailer?: Mailer
  /** Counts a failed email (the metric). */
  onFailure?: () => void
}

interface ClaimedRow {
  id: number
  user_id: number
  message_id: number
  conversation: string
  attempts: number
}

const TABLE = 'missed_message_email'

/** Locks the first due row and leases every unleased row of its user to this node. */
function claimUserBatch(services: Services, options: EmailDeliveryOptions, now: Date): Promise<ClaimedRow[]> {
  return claimLeased<ClaimedRow>(services.prisma, TABLE, {
    now,
    limit: 1,
    realmIds: options.realmIds,
    nodeId: services.nodeId,
    leaseMs: options.leaseMs ?? LEASE_MS,
    columns: Prisma.sql`id, user_id, message_id, conversation, attempts`,
    wholeUser: true,
  })
}

interface MessageRow {
  id: number
  sender_id: number
  sender_name: string
  content: string
  rendered_content: string
  stream_id: number | null
  stream_name: string | null
  topic: string
  dm_user_ids: number[]
  flags: number | null
}

const locationOf = (m: MessageRow) => ({ streamId: m.stream_id, topic: m.topic, dmUserIds: m.dm_user_ids })

/** Deletes rows still leased to this node. */
const settle = (services: Services, ids: number[]): Promise<void> => settleLeased(services.prisma, TABLE, ids, services.nodeId)

async function retryLater(services: Services, options: EmailDeliveryOptions, rows: ClaimedRow[], error: unknown): Promise<void> {
  await retryLeased(services.prisma, TABLE, rows, error, { nodeId: services.nodeId, now: services.now(), retryBaseMs: options.retryBaseMs ?? RETRY_BASE_MS, retryMaxMs: RETRY_MAX_MS })
}

const renewLease = (services: Services, options: EmailDeliveryOptions, rows: ClaimedRow[]): Promise<ClaimedRow[]> =>
  renewLeases(services.prisma, TABLE, rows, { nodeId: services.nodeId, now: services.now(), leaseMs: options.leaseMs ?? LEASE_MS })

/** Sends one user's claimed rows, one email per conversation. */
async function sendUserBatch(services: Services, options: EmailDeliveryOptions, mailer: Mailer, rows: ClaimedRow[]): Promise<void> {
  const userId = rows[0]!.user_id
  const user = await services.prisma.user.findUnique({ where: { id: userId }, include: { realm: true, settings: true } })
  const messages = await services.prisma.$queryRaw<MessageRow[]>`
    SELECT m.id, m.sender_id, s.full_name AS sender_name, m.content, m.rendered_content, m.stream_id, st.name AS stream_name,
      m.topic, m.dm_user_ids, um.flags
    FROM message m JOIN user_profile s ON s.id = m.sender_id
    LEFT JOIN stream st ON st.id = m.stream_id
    LEFT JOIN user_message um ON um.message_id = m.id AND um.user_id = ${userId}
    WHERE m.id = ANY(${rows.map((r) => r.message_id)}::int[])
    ORDER BY m.id`
  const byId = new Map(messages.map((m) => [m.id, m]))
  // Deactivated users or organizations and read or inaccessible messages: nothing to send.
  const live = (r: ClaimedRow) => {
    const m = byId.get(r.message_id)
    return m !== undefined && m.flags !== null && (m.flags & FLAG_BITS.read) === 0
  }
  if (!user || !user.isActive || user.realm.deactivated || !user.settings) return settle(services, rows.map((r) => r.id))
  await settle(services, rows.filter((r) => !live(r)).map((r) => r.id))

  const groups = new Map<string, ClaimedRow[]>()
  // Grouped by where each message is now (it may have moved since it was queued).
  for (const r of rows.filter(live)) {
    const key = conversationKey({ ...locationOf(byId.get(r.message_id)!) })
    groups.set(key, [...(groups.get(key) ?? []), r])
  }
  // A restricted guest sees "Unknown user" for senders it may not access, as in its user list.
  const knownSenders = await accessibleAmong(services.prisma, user.realm, user, messages.map((m) => m.sender_id))
  const base = realmUrl(user.realm, services.config.externalUrl)
  const realmNameInSubject = await includeRealmNameInSubject(services, user.settings.realmNameInEmailNotificationsPolicy, user.deliveryEmail)
  const unsubscribeUrl = `${base}${unsubscribePath(unsubscribeToken(user))}`
  for (const claimedGroup of groups.values()) {
    // Renews the lease of this email's rows before sending it; rows whose lease lapsed (this node was too slow) belong to whoever claimed them since.
    const group = await renewLease(services, options, claimedGroup)
    if (group.length === 0) continue
    const msgs = group.map((r) => byId.get(r.message_id)!).sort((a, b) => a.id - b.id)
    const first = msgs[0]!
    const dmOthers =
      first.stream_id === null
        ? await services.prisma.user.findMany({ where: { id: { in: first.dm_user_ids.filter((id) => id !== userId) } }, select: { id: true, fullName: true }, orderBy: { id: 'asc' } })
        : []
    const mail = renderMissedMessageEmail({
      realmName: user.realm.name,
      realmUrl: base,
      recipient: { id: user.id, fullName: user.fullName, email: user.deliveryEmail },
      stream: first.stream_id === null ? null : { id: first.stream_id, name: first.stream_name ?? '' },
      topic: first.topic,
      dmOthers,
      messages: msgs.map((m) => ({ id: m.id, senderId: m.sender_id, senderName: knownSenders.has(m.sender_id) ? m.sender_name : INACCESSIBLE_USER_NAME, content: m.content, renderedContent: m.rendered_content })),
      includeContent: user.settings.messageContentInEmailNotifications && user.realm.messageContentAllowedInEmailNotifications,
      realmNameInSubject,
      // Over all the email's messages: a personal mention anywhere names no group; else the smallest mentioned group of the user (upstream's get_mentioned_user_group).
      mentionedGroupName: (await mentionedUserGroup(services.prisma, userId, msgs.map((m) => m.rendered_content).join('\n')))?.name ?? null,
      unsubscribeUrl,
      noreply: noreplyAddress(services.config.externalUrl),
    })
    try {
      await mailer.send(mail, services.now())
    } catch (error) {
      options.onFailure?.()
      options.log.error({ err: error, user_id: userId, attempts: group[0]!.attempts + 1 }, 'missed-message email failed; will retry')
      await retryLater(services, options, group, error)
      continue
    }
    await settle(services, group.map((r) => r.id))
  }
}

/** Claims and sends one user's pending emails; returns how many rows were claimed (0: nothing due). */
export async function deliverMissedMessageEmails(services: Services, options: EmailDeliveryOptions, mailer: Mailer): Promise<number> {
  const now = services.now()
  if (!(await anyDue(services.prisma, TABLE, now, options.realmIds))) return 0
  const rows = await claimUserBatch(services, options, now)
  if (rows.length > 0) await sendUserBatch(services, options, mailer, rows)
  return rows.length
}

/** realm_name_in_email_notifications_policy values (upstream's REALM_NAME_IN_EMAIL_NOTIFICATIONS_POLICY_*). */
export const REALM_NAME_IN_SUBJECT = { AUTOMATIC: 1, ALWAYS: 2, NEVER: 3 } as const

/**
 * Upstream's include_realm_name_in_missedmessage_emails_subject: always, never,
 * or (automatic, the default) when the address receives notifications from
 * more than one organization (active human accounts in active organizations).
 */
async function includeRealmNameInSubject(services: Services, policy: number, deliveryEmail: string): Promise<boolean> {
  if (policy === REALM_NAME_IN_SUBJECT.ALWAYS) return true
  if (policy !== REALM_NAME_IN_SUBJECT.AUTOMATIC) return false
  const accounts = await services.prisma.user.count({
    where: { deliveryEmail: { equals: deliveryEmail, mode: 'insensitive' }, isActive: true, isBot: false, realm: { deactivated: false } },
  })
  return accounts > 1
}

export function startMissedMessageEmails(services: Services, options: EmailDeliveryOptions): WorkerLoop {
  const mailer = options.mailer ?? mailerFor(services.config)
  const onFailure = options.onFailure ?? (() => services.metrics.missedMessageEmailFailures.inc())
  return startWorkerLoop(() => deliverMissedMessageEmails(services, { ...options, onFailure }, mailer), {
    log: options.log,
    tickMs: options.tickMs ?? TICK_MS,
    name: 'missed-message email',
  })
}
