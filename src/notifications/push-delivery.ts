// Sends push notifications, exactly once on any number of nodes, through the
// leased-job module (jobs/leased.ts) as notifications/delivery.ts: one transaction locks due
// missed_push_notification rows with `FOR UPDATE SKIP LOCKED` and leases them
// to this node (claimed_by, claim_expires_at); a node that dies mid-batch
// leaves rows whose lease expires and another node claims them.
//
// Each row becomes upstream's `message` data payload (the keys upstream's
// mobile apps read, get_message_payload + get_message_payload_gcm) — or,
// for `remove` rows (queued by queuePushRemovals when a pushed message is
// read or deleted), upstream's `remove` payload: all of a user's due removal
// rows go out together, one notice per device listing up to
// PUSH_REMOVE_MAX_IDS message IDs (upstream's handle_remove_push_notification
// caps a notice at 200 IDs, for APNs' payload size limit; more IDs make more
// notices, none dropped) — sent to
// every target of the user for which a sender is configured. Rows whose
// message was read meanwhile, or whose user or organization is deactivated,
// are dropped; deleting a message drops its pending pushes and queues
// removal notices for the copies already pushed (queuePushRemovalsForDeletion).
// A target the provider rejects as gone (Web Push 404 / 410, FCM
// UNREGISTERED, APNs 410…) is deleted (pruned) at once. Any other failure
// keeps the row: attempts + 1, due again after an exponential backoff
// (PUSH_RETRY_BASE_MS doubling, at most PUSH_RETRY_MAX_MS), logged and counted
// (roost_push_notification_failures_total); a row that failed
// PUSH_MAX_ATTEMPTS times is dropped. The failing target itself backs off the
// same way (retry_at: no request reaches it before then, whatever the number
// of pending rows) and is deleted after PUSH_TARGET_MAX_FAILURES consecutive
// failures; a success clears its count.
// A sent message push marks the copy active_mobile_push_notification (in the
// statement that deletes the row), as upstream, so its removal can follow.
// A row remembers the targets it reached (delivered_to): after a partial
// failure its retry goes only to the targets that have not had it, so no
// device gets the same notification twice.
import { accessibleAmong } from '../access/user.js'
import type { FastifyBaseLogger } from 'fastify'
import type { Services } from '../services.js'
import { Prisma } from '../db/index.js'
import { FLAG_BITS } from '../domain/flags.js'
import { avatarUrl, INACCESSIBLE_USER_NAME } from '../present/user.js'
import { realmUrl } from '../present/realm.js'
import { startWorkerLoop, type WorkerLoop } from '../jobs/loop.js'
import { anyDue, backoffMs as backoff, claimLeased, retryLeased, settleLeased, type RetryPolicy } from '../jobs/leased.js'
import { PUSH_KIND } from '../domain/push-kind.js'
import { PUSH_REMOVE } from './enqueue.js'
import { mentionedUserGroup, type MentionedGroup } from './mentioned-group.js'
import { pushSendersFor, type PushSender, type PushSenderOptions, type PushTarget } from './push-senders.js'
import { flagMask } from '../db/flag-sql.js'

export const PUSH_TICK_MS = 1000
export const PUSH_LEASE_MS = 2 * 60 * 1000
export const PUSH_BATCH = 20
export const PUSH_RETRY_BASE_MS = 30 * 1000
export const PUSH_RETRY_MAX_MS = 60 * 60 * 1000
/** Failed attempts after which a pending notification is dropped (about two hours of backoff). */
export const PUSH_MAX_ATTEMPTS = 8
/** Consecutive failed sends after which a browser subscription or mobile token is deleted. */
export const PUSH_TARGET_MAX_FAILURES = 8
/** Message IDs in one removal notice (upstream's MAX_APNS_MESSAGE_IDS). */
export const PUSH_REMOVE_MAX_IDS = 200
/** Further removal rows of one user claimed with a batch (the rest go with the next batch). */
const PUSH_REMOVE_CLAIM_LIMIT = 5 * PUSH_REMOVE_MAX_IDS
/** Upstream truncates the content of a push to 200 characters. */
export const PUSH_CONTENT_LIMIT = 200

export interface PushDeliveryOptions extends PushSenderOptions {
  log: FastifyBaseLogger
  /** Only rows of these realms (tests sharing a database). */
  realmIds?: number[]
  tickMs?: number
  leaseMs?: number
  retryBaseMs?: number
  /** The senders; pushSendersFor(config) unless given. */
  senders?: Map<PushTarget['kind'], PushSender>
  onFailure?: () => void
}

interface ClaimedRow {
  id: number
  user_id: number
  message_id: number
  trigger: string
  attempts: number
  /** Targets this row already reached (targetKey). */
  delivered_to: string[]
}

const CLAIMED_COLUMNS = Prisma.sql`id, user_id, message_id, trigger, attempts, COALESCE(delivered_to, '{}') AS delivered_to`

/** How a row records a target it reached. */
const targetKey = (target: PushTarget): string => `${target.kind}:${target.id}`

const TABLE = 'missed_push_notification'

const claimBatch = (services: Services, options: PushDeliveryOptions, now: Date): Promise<ClaimedRow[]> =>
  claimLeased<ClaimedRow>(services.prisma, TABLE, { now, limit: PUSH_BATCH, realmIds: options.realmIds, nodeId: services.nodeId, leaseMs: options.leaseMs ?? PUSH_LEASE_MS, columns: CLAIMED_COLUMNS })

const settle = (services: Services, id: number): Promise<void> => settleLeased(services.prisma, TABLE, [id], services.nodeId)

/** Deletes a sent message push and marks the copy active_mobile_push_notification, so reading it later sends a removal notice. */
async function settleSent(services: Services, row: ClaimedRow): Promise<void> {
  const active = FLAG_BITS.active_mobile_push_notification
  await services.prisma.$executeRaw`
    WITH gone AS (DELETE FROM missed_push_notification WHERE id = ${row.id} AND claimed_by = ${services.nodeId} RETURNING user_id, message_id)
    UPDATE user_message um SET flags = um.flags | ${flagMask(active)} FROM gone
    WHERE um.user_id = gone.user_id AND um.message_id = gone.message_id AND um.flags & ${flagMask(FLAG_BITS.read)} = 0`
}

const retryPolicy = (options: PushDeliveryOptions): RetryPolicy => ({ retryBaseMs: options.retryBaseMs ?? PUSH_RETRY_BASE_MS, retryMaxMs: PUSH_RETRY_MAX_MS, maxAttempts: PUSH_MAX_ATTEMPTS })

/** The capped exponential backoff after the `failures`-th consecutive failure (1-based); a failing target backs off the same way. */
const backoffMs = (options: PushDeliveryOptions, failures: number): number => backoff(retryPolicy(options), failures)

/** Due again after a backoff, remembering the targets reached so far (`reached`) so that the retry skips them; dropped after PUSH_MAX_ATTEMPTS. */
async function retryLater(services: Services, options: PushDeliveryOptions, row: ClaimedRow, error: unknown, reached: string[] = []): Promise<void> {
  const outcome = await retryLeased(services.prisma, TABLE, [row], error, {
    ...retryPolicy(options),
    nodeId: services.nodeId,
    now: services.now(),
    set: Prisma.sql`, delivered_to = ARRAY(SELECT DISTINCT unnest(COALESCE(delivered_to, '{}') || ${reached}::text[]))`,
  })
  if (outcome === 'dropped') {
    const message = error instanceof Error ? error.message : String(error)
    options.log.warn({ user_id: row.user_id, message_id: row.message_id, attempts: row.attempts + 1, err: message }, 'push notification dropped after its last attempt')
  }
}

interface PayloadSource {
  server: string
  realm: { id: number; name: string; url: string }
  userId: number
  sender: { id: number; email: string; fullName: string; avatarUrl: string }
  message: { id: number; content: string; dateSent: Date; streamId: number | null; streamName: string | null; topic: string; dmUserIds: number[] }
  /** The group through which the user was mentioned (upstream adds mentioned_user_group_id and _name). */
  mentionedGroup?: MentionedGroup | null
}

/** Upstream's get_base_payload: which server, organization and user a push is for. */
function basePayload(p: Pick<PayloadSource, 'server' | 'realm' | 'userId'>): Record<string, unknown> {
  return { server: p.server, realm_id: p.realm.id, realm_name: p.realm.name, realm_uri: p.realm.url, realm_url: p.realm.url, user_id: p.userId }
}

/** Upstream's `remove` payload: the notifications of these messages should be dismissed (zulip_message_id too, for older apps). */
export function removePushPayload(p: Pick<PayloadSource, 'server' | 'realm' | 'userId'>, messageIds: number[]): Record<string, unknown> {
  return { ...basePayload(p), event: 'remove', zulip_message_ids: messageIds.join(','), zulip_message_id: messageIds[0] }
}

/** Upstream's data payload of a `message` push (key names as upstream's apps read them). */
export function messagePushPayload(p: PayloadSource): Record<string, unknown> {
  const text = p.message.content
  const truncated = text.length > PUSH_CONTENT_LIMIT
  const base = basePayload(p)
  const where =
    p.message.streamId !== null
      ? { recipient_type: 'stream', stream: p.message.streamName ?? '', stream_id: p.message.streamId, topic: p.message.topic }
      : p.message.dmUserIds.length > 2
        ? { recipient_type: 'private', pm_users: p.message.dmUserIds.join(',') }
        : { recipient_type: 'private' }
  return {
    ...base,
    sender_id: p.sender.id,
    sender_email: p.sender.email,
    sender_full_name: p.sender.fullName,
    sender_avatar_url: p.sender.avatarUrl,
    ...where,
    ...(p.mentionedGroup ? { mentioned_user_group_id: p.mentionedGroup.id, mentioned_user_group_name: p.mentionedGroup.name } : {}),
    event: 'message',
    zulip_message_id: p.message.id,
    time: Math.floor(p.message.dateSent.getTime() / 1000),
    content: truncated ? `${text.slice(0, PUSH_CONTENT_LIMIT - 1)}…` : text,
    content_truncated: truncated,
  }
}

async function targetsOf(services: Services, userId: number, senders: Map<PushTarget['kind'], PushSender>): Promise<PushTarget[]> {
  const targets: PushTarget[] = []
  if (senders.has('webpush')) {
    const subs = await services.prisma.webPushSubscription.findMany({ where: { userId }, orderBy: { id: 'asc' } })
    targets.push(...subs.map((s) => ({ kind: 'webpush' as const, id: s.id, endpoint: s.endpoint, p256dh: s.p256dh, auth: s.auth, failures: s.failures, retryAt: s.retryAt })))
  }
  if (senders.has('fcm')) {
    const devices = await services.prisma.pushDevice.findMany({ where: { userId, kind: PUSH_KIND.FCM }, orderBy: { id: 'asc' } })
    targets.push(...devices.map((d) => ({ kind: 'fcm' as const, id: d.id, token: d.token, failures: d.failures, retryAt: d.retryAt })))
  }
  if (senders.has('apns')) {
    const devices = await services.prisma.pushDevice.findMany({ where: { userId, kind: PUSH_KIND.APNS }, orderBy: { id: 'asc' } })
    targets.push(...devices.map((d) => ({ kind: 'apns' as const, id: d.id, token: d.token, appId: d.appId, failures: d.failures, retryAt: d.retryAt })))
  }
  if (senders.has('bouncer')) {
    // Upstream skips the bouncer for a user with no registered device.
    const devices = await services.prisma.pushDevice.findMany({ where: { userId }, orderBy: { id: 'asc' }, include: { user: { select: { realmId: true } } } })
    const tokens = (kind: number) => devices.filter((d) => d.kind === kind).map((d) => d.token)
    if (devices.length > 0) {
      targets.push({ kind: 'bouncer', id: userId, realmId: devices[0]!.user.realmId, androidDevices: tokens(PUSH_KIND.FCM), appleDevices: tokens(PUSH_KIND.APNS) })
    }
  }
  return targets
}

async function prune(services: Services, target: PushTarget): Promise<void> {
  if (target.kind === 'bouncer') return
  if (target.kind === 'webpush') await services.prisma.webPushSubscription.deleteMany({ where: { id: target.id } })
  else await services.prisma.pushDevice.deleteMany({ where: { id: target.id } })
}

/** A failed send to a target with a row of its own: backs off, or is deleted after PUSH_TARGET_MAX_FAILURES. */
async function targetFailed(services: Services, options: PushDeliveryOptions, target: PushTarget, userId: number): Promise<void> {
  if (target.kind === 'bouncer') return
  const failures = (target.failures ?? 0) + 1
  if (failures >= PUSH_TARGET_MAX_FAILURES) {
    options.log.warn({ user_id: userId, kind: target.kind, failures }, 'push target dropped after repeated failures')
    return prune(services, target)
  }
  const data = { failures, retryAt: new Date(services.now().getTime() + backoffMs(options, failures)) }
  if (target.kind === 'webpush') await services.prisma.webPushSubscription.updateMany({ where: { id: target.id }, data })
  else await services.prisma.pushDevice.updateMany({ where: { id: target.id }, data })
}

/** A successful send clears the target's failure count. */
async function targetRecovered(services: Services, target: PushTarget): Promise<void> {
  if (target.kind === 'bouncer' || !target.failures) return
  const data = { failures: 0, retryAt: null }
  if (target.kind === 'webpush') await services.prisma.webPushSubscription.updateMany({ where: { id: target.id }, data })
  else await services.prisma.pushDevice.updateMany({ where: { id: target.id }, data })
}

async function sendRow(services: Services, options: PushDeliveryOptions, senders: Map<PushTarget['kind'], PushSender>, row: ClaimedRow): Promise<void> {
  const user = await services.prisma.user.findUnique({ where: { id: row.user_id }, include: { realm: true } })
  if (!user || !user.isActive || user.realm.deactivated) return settle(services, row.id)
  const url = realmUrl(user.realm, services.config.externalUrl)
  const server = new URL(services.config.externalUrl).host
  const message = await services.prisma.message.findUnique({ where: { id: row.message_id }, include: { sender: true, stream: true } })
  const um = await services.prisma.userMessage.findFirst({ where: { userId: row.user_id, messageId: row.message_id } })
  if (!message || !um || (um.flags & FLAG_BITS.read) !== 0) return settle(services, row.id)
  const group = row.trigger === 'mentioned' ? await mentionedUserGroup(services.prisma, row.user_id, message.renderedContent) : null
  // A restricted guest sees "Unknown user" for a sender it may not access, as in its user list.
  const senderKnown = (await accessibleAmong(services.prisma, user.realm, user, [message.senderId])).has(message.senderId)
  const payload = messagePushPayload({
    mentionedGroup: group,
    server,
    realm: { id: user.realm.id, name: user.realm.name, url },
    userId: user.id,
    sender: { id: message.sender.id, email: message.sender.email, fullName: senderKnown ? message.sender.fullName : INACCESSIBLE_USER_NAME, avatarUrl: new URL(avatarUrl(message.sender), url).toString() },
    message: {
      id: message.id,
      content: message.content,
      dateSent: message.dateSent,
      streamId: message.streamId,
      streamName: message.stream?.name ?? null,
      topic: message.topic,
      dmUserIds: message.dmUserIds,
    },
  })
  return deliver(services, options, senders, [row], payload, true)
}

/** Claims the user's other due removal rows, so one notice carries them all. */
function claimMoreRemovals(services: Services, options: PushDeliveryOptions, userId: number, claimed: number[], now: Date): Promise<ClaimedRow[]> {
  return claimLeased<ClaimedRow>(services.prisma, TABLE, {
    now,
    limit: PUSH_REMOVE_CLAIM_LIMIT,
    where: Prisma.sql`AND user_id = ${userId} AND trigger = ${PUSH_REMOVE} AND id <> ALL(${claimed}::int[])`,
    orderBy: Prisma.sql`message_id`,
    nodeId: services.nodeId,
    leaseMs: options.leaseMs ?? PUSH_LEASE_MS,
    columns: CLAIMED_COLUMNS,
  })
}

/** Sends one user's removal rows: one `remove` notice per PUSH_REMOVE_MAX_IDS message IDs. */
async function sendRemovals(services: Services, options: PushDeliveryOptions, senders: Map<PushTarget['kind'], PushSender>, rows: ClaimedRow[], now: Date): Promise<void> {
  const userId = rows[0]!.user_id
  const all = [...rows, ...(await claimMoreRemovals(services, options, userId, rows.map((r) => r.id), now))].sort((a, b) => a.message_id - b.message_id)
  const user = await services.prisma.user.findUnique({ where: { id: userId }, include: { realm: true } })
  if (!user || !user.isActive || user.realm.deactivated) {
    for (const row of all) await settle(services, row.id)
    return
  }
  const realm = { id: user.realm.id, name: user.realm.name, url: realmUrl(user.realm, services.config.externalUrl) }
  const server = new URL(services.config.externalUrl).host
  for (let i = 0; i < all.length; i += PUSH_REMOVE_MAX_IDS) {
    const chunk = all.slice(i, i + PUSH_REMOVE_MAX_IDS)
    await deliver(services, options, senders, chunk, removePushPayload({ server, realm, userId }, chunk.map((r) => r.message_id)), false)
  }
}

/** Sends one payload to every target of the rows' user (one message, or removals); settles the rows, or schedules their retry. */
async function deliver(
  services: Services,
  options: PushDeliveryOptions,
  senders: Map<PushTarget['kind'], PushSender>,
  rows: ClaimedRow[],
  payload: Record<string, unknown>,
  isMessage: boolean,
): Promise<void> {
  const row = rows[0]!
  // Targets every row already reached (a retry after a partial failure) are not sent again.
  const done = new Set(row.delivered_to.filter((key) => rows.every((r) => r.delivered_to.includes(key))))
  const reached: string[] = []
  let failure: unknown
  try {
    for (const target of await targetsOf(services, row.user_id, senders)) {
      const key = targetKey(target)
      if (done.has(key)) continue
      if (target.kind !== 'bouncer' && target.retryAt && target.retryAt > services.now()) {
        // Backing off after a failure: not contacted; the row is retried later.
        failure ??= new Error(`the ${target.kind} target ${target.id} backs off until ${target.retryAt.toISOString()}`)
        continue
      }
      let outcome: Awaited<ReturnType<PushSender['send']>>
      try {
        outcome = await senders.get(target.kind)!.send(target, payload)
      } catch (error) {
        // The other targets are still tried; this one is retried later.
        failure ??= error
        options.log.warn({ err: error, user_id: row.user_id, kind: target.kind }, 'push to one target failed')
        await targetFailed(services, options, target, row.user_id)
        continue
      }
      reached.push(key)
      if (outcome !== 'invalid') await targetRecovered(services, target)
      if (outcome === 'invalid') {
        options.log.info({ user_id: row.user_id, kind: target.kind }, 'push target rejected by the provider; pruned')
        await prune(services, target)
      } else if (typeof outcome === 'object') {
        // The bouncer no longer has these tokens of the user: upstream deletes them locally.
        options.log.info({ user_id: row.user_id, fcm: outcome.gone.fcm.length, apns: outcome.gone.apns.length }, 'push tokens unknown to the bouncer; pruned')
        await services.prisma.pushDevice.deleteMany({
          where: { userId: row.user_id, OR: [{ kind: PUSH_KIND.FCM, token: { in: outcome.gone.fcm } }, { kind: PUSH_KIND.APNS, token: { in: outcome.gone.apns } }] },
        })
      }
    }
  } catch (error) {
    failure ??= error
  }
  if (failure !== undefined) {
    options.onFailure?.()
    options.log.error({ err: failure, user_id: row.user_id, attempts: row.attempts + 1 }, 'push notification failed; will retry')
    for (const r of rows) await retryLater(services, options, r, failure, reached)
    return
  }
  for (const r of rows) await (isMessage ? settleSent(services, r) : settle(services, r.id))
}

/** Claims and sends one batch of due push notifications; returns how many rows were claimed (0: nothing due). */
export async function deliverPushNotifications(services: Services, options: PushDeliveryOptions, senders: Map<PushTarget['kind'], PushSender>): Promise<number> {
  const now = services.now()
  if (!(await anyDue(services.prisma, TABLE, now, options.realmIds))) return 0
  const rows = await claimBatch(services, options, now)
  const removals = new Map<number, ClaimedRow[]>()
  for (const row of rows) {
    if (row.trigger === PUSH_REMOVE) removals.set(row.user_id, [...(removals.get(row.user_id) ?? []), row])
    else await sendRow(services, options, senders, row)
  }
  for (const group of removals.values()) await sendRemovals(services, options, senders, group, now)
  return rows.length
}

/** The push loop of this node; none when no sender is configured. */
export function startPushNotifications(services: Services, options: PushDeliveryOptions): WorkerLoop | undefined {
  const senders = options.senders ?? pushSendersFor(services.config, options)
  if (senders.size === 0) return undefined
  const onFailure = options.onFailure ?? (() => services.metrics.pushNotificationFailures.inc())
  return startWorkerLoop(() => deliverPushNotifications(services, { ...options, onFailure }, senders), {
    log: options.log,
    tickMs: options.tickMs ?? PUSH_TICK_MS,
    name: 'push notification',
  })
}
