// Decides who gets a missed-message email for a new (or newly mentioning)
// message and stores one durable row per recipient (missed_message_email),
// as upstream's maybe_enqueue_notifications does for email:
//
// * never the sender, a bot, a deactivated user, one who muted the sender
//   (the message reaches them read), or a message already read;
// * triggers, in upstream's order: a direct message and a personal or group
//   mention (or an alert word) when enable_offline_email_notifications is on;
//   a wildcard mention in a followed topic when
//   enable_followed_topic_wildcard_mentions_notify is on; a wildcard mention
//   when the subscription's wildcard_mentions_notify (else the user's) is on
//   and the topic or channel is not muted; a message in a followed topic with
//   enable_followed_topic_email_notifications; a message in a channel whose
//   email_notifications (else enable_stream_email_notifications) is on and
//   that is not muted. "Muted" is upstream's user_allows_notifications_in_StreamTopic:
//   a muted topic, or a muted channel unless the topic is unmuted. Wildcard mentions also need
//   enable_offline_email_notifications, channel and followed-topic
//   notifications do not (upstream's rules);
// * only when the recipient is away: no event queue that receives messages
//   (upstream receiver_is_off_zulip) or presence not active in the last
//   140 seconds (upstream's presence-idle test, skipped when the organization
//   disabled presence). Alert words count as mentions, as the issue asks.
//
// The row is due after the user's email_notifications_batching_period_seconds;
// notifications/delivery.ts sends every pending row of the user then, one
// email per conversation.
//
// Push, in the same query (upstream's *_push_notify flags): the same triggers
// with enable_offline_push_notifications, enable_followed_topic_push_notifications
// and the subscription's push_notifications (else enable_stream_push_notifications);
// sent when the user is away or has enable_online_push_notifications on
// (upstream's is_push_notifiable). One missed_push_notification row per user
// and message, due at once, when a push sender is configured;
// notifications/push-delivery.ts sends it.
import type { Services } from '../services.js'
import { countRows } from '../jobs/leased.js'
import { FLAG_BITS } from '../domain/flags.js'
import { Prisma } from '../db/index.js'
import { fastQuery } from '../db/fast-read.js'
import { pushConfigured } from './push-senders.js'
import { flagMask } from '../db/flag-sql.js'

/** Upstream's OFFLINE_THRESHOLD_SECS: presence older than this is idle. */
export const PRESENCE_IDLE_SECONDS = 140
const AWAY_CHECK_CHUNK = 100

export interface MissedMessageCandidate {
  userId: number
  /** The recipient's flag bitmask for the message. */
  flags: number
}

export interface EnqueueInput {
  realmId: number
  /** The organization's presence_disabled: then only event queues tell who is away (upstream). */
  presenceDisabled: boolean
  senderId: number
  messageId: number
  /** null for a direct message. */
  streamId: number | null
  topic: string
  /** Sorted participant IDs of a direct message. */
  dmUserIds: number[]
  recipients: MissedMessageCandidate[]
  /** An edit: only mention triggers count (no channel or followed-topic email for an edited message). */
  mentionsOnly?: boolean
}

const MUTED = 1
const UNMUTED = 2
const FOLLOWED = 3

export function conversationKey(input: Pick<EnqueueInput, 'streamId' | 'topic' | 'dmUserIds'>): string {
  return input.streamId === null ? `dm:${input.dmUserIds.join(',')}` : `stream:${input.streamId}:${input.topic.toLowerCase()}`
}

/** Whether the user has no live queue receiving messages, or (unless the organization disabled presence) presence idle. */
async function isAway(services: Services, input: EnqueueInput, userId: number, nowSecs: number): Promise<boolean> {
  const queues = await services.events.store.queuesOf(userId)
  if (!queues.some((q) => q.eventTypes === null || q.eventTypes.includes('message'))) return true
  if (input.presenceDisabled) return false
  const presence = await services.presence.get(input.realmId, userId)
  return presence?.activeTime == null || nowSecs - presence.activeTime > PRESENCE_IDLE_SECONDS
}

const MENTION = FLAG_BITS.mentioned | FLAG_BITS.group_mentioned | FLAG_BITS.has_alert_word
const WILDCARD = FLAG_BITS.stream_wildcard_mentioned | FLAG_BITS.topic_wildcard_mentioned

/**
 * The trigger of one kind of notification, in upstream's order (the first
 * that applies names it; NULL when none does): the same rules for email and
 * push, each reading its own settings (`enable_offline_<via>_notifications`,
 * the subscription's `<via>_notifications`…).
 */
function triggerCase(via: 'email' | 'push', isPrivate: boolean, everyMessage: boolean): Prisma.Sql {
  const raw = (sql: string) => Prisma.raw(sql)
  const offline = raw(`s.enable_offline_${via}_notifications`)
  return Prisma.sql`CASE
        WHEN ${isPrivate} AND ${offline} THEN 'direct_message'
        WHEN r.flags & ${flagMask(MENTION)} <> 0 AND ${offline} THEN 'mentioned'
        WHEN r.flags & ${flagMask(WILDCARD)} <> 0 AND ${offline}
          AND ut.visibility_policy = ${FOLLOWED} AND s.enable_followed_topic_wildcard_mentions_notify THEN 'followed_topic_wildcard_mentioned'
        WHEN r.flags & ${flagMask(WILDCARD)} <> 0 AND ${offline} AND NOT muted
          AND COALESCE(sub.wildcard_mentions_notify, s.wildcard_mentions_notify) THEN 'wildcard_mentioned'
        WHEN ${everyMessage} AND ut.visibility_policy = ${FOLLOWED} AND ${raw(`s.enable_followed_topic_${via}_notifications`)} THEN ${raw(`'followed_topic_${via}_notify'`)}
        WHEN ${everyMessage} AND NOT ${isPrivate} AND NOT muted AND COALESCE(${raw(`sub.${via}_notifications`)}, ${raw(`s.enable_stream_${via}_notifications`)}) THEN ${raw(`'stream_${via}_notify'`)}
      END`
}

/** Stores the missed-message email and push rows this message calls for; returns the users queued for an email. */
export async function enqueueMissedMessageEmails(services: Services, input: EnqueueInput): Promise<number[]> {
  const recipients = input.recipients.filter((r) => r.userId !== input.senderId && (r.flags & FLAG_BITS.read) === 0)
  if (recipients.length === 0) return []
  const isPrivate = input.streamId === null
  const everyMessage = !input.mentionsOnly
  // A prepared statement on the pg pool (db/fast-read.ts): this runs on every send; Prisma's $queryRaw would compile
  // each call, and an unnamed statement is planned each time (PostgreSQL's log showed ~5 ms binds under load).
  // Only recipients some trigger applies to come back: most messages notify no one, and a row costs both ends.
  const triggered = await fastQuery<{ user_id: number; trigger: string | null; push_trigger: string | null; online_push: boolean; period: number }>(services.prisma, Prisma.sql`
    SELECT * FROM (SELECT r.user_id, s.email_notifications_batching_period_seconds AS period, s.enable_online_push_notifications AS online_push,
      ${triggerCase('push', isPrivate, everyMessage)} AS push_trigger,
      ${triggerCase('email', isPrivate, everyMessage)} AS trigger
    FROM unnest(${recipients.map((r) => r.userId)}::int[], ${recipients.map((r) => r.flags)}::int[]) AS r(user_id, flags)
    JOIN user_profile u ON u.id = r.user_id AND u.is_active AND NOT u.is_bot
    JOIN user_settings s ON s.user_id = u.id
    LEFT JOIN subscription sub ON sub.user_id = u.id AND sub.stream_id = ${input.streamId ?? -1} AND sub.active
    LEFT JOIN user_topic ut ON ut.user_id = u.id AND ut.stream_id = ${input.streamId ?? -1} AND lower(ut.topic_name) = lower(${input.topic})
    CROSS JOIN LATERAL (SELECT COALESCE(ut.visibility_policy = ${MUTED}, false)
      OR (COALESCE(sub.is_muted, false) AND COALESCE(ut.visibility_policy <> ${UNMUTED}, true)) AS muted) m
    WHERE NOT EXISTS (SELECT 1 FROM muted_user mu WHERE mu.user_id = r.user_id AND mu.muted_user_id = ${input.senderId})) a
    WHERE a.trigger IS NOT NULL OR a.push_trigger IS NOT NULL`,
    'notification_audience',
  )
  const now = services.now()
  const nowSecs = Math.floor(now.getTime() / 1000)
  const queued: { userId: number; trigger: string; dueAt: Date }[] = []
  const pushes: { userId: number; trigger: string }[] = []
  // The away checks are Redis round trips: concurrent, a chunk at a time (a wildcard mention in a large channel has many).
  for (let i = 0; i < triggered.length; i += AWAY_CHECK_CHUNK) {
    const chunk = triggered.slice(i, i + AWAY_CHECK_CHUNK)
    const away = await Promise.all(chunk.map((row) => isAway(services, input, row.user_id, nowSecs)))
    chunk.forEach((row, k) => {
      if (away[k] && row.trigger !== null) queued.push({ userId: row.user_id, trigger: row.trigger, dueAt: new Date(now.getTime() + row.period * 1000) })
      // Upstream's is_push_notifiable: idle, or enable_online_push_notifications.
      if ((away[k] || row.online_push) && row.push_trigger !== null) pushes.push({ userId: row.user_id, trigger: row.push_trigger })
    })
  }
  if (pushes.length > 0 && pushConfigured(services.config)) {
    await services.prisma.$executeRaw`
      INSERT INTO missed_push_notification (realm_id, user_id, message_id, trigger, created_at, due_at)
      SELECT ${input.realmId}, q.user_id, ${input.messageId}, q.trigger, ${now}::timestamptz, ${now}::timestamptz
      FROM unnest(${pushes.map((q) => q.userId)}::int[], ${pushes.map((q) => q.trigger)}::text[]) AS q(user_id, trigger)
      ON CONFLICT (user_id, message_id) DO NOTHING`
  }
  if (queued.length === 0) return []
  // An edit that adds a mention to a message already queued for the user changes nothing (one row per user and message).
  await services.prisma.$executeRaw`
    INSERT INTO missed_message_email (realm_id, user_id, message_id, trigger, conversation, created_at, due_at)
    SELECT ${input.realmId}, q.user_id, ${input.messageId}, q.trigger, ${conversationKey(input)}, ${now}::timestamptz, q.due_at
    FROM unnest(${queued.map((q) => q.userId)}::int[], ${queued.map((q) => q.trigger)}::text[], ${queued.map((q) => q.dueAt)}::timestamptz[]) AS q(user_id, trigger, due_at)
    ON CONFLICT (user_id, message_id) DO NOTHING`
  return queued.map((q) => q.userId)
}

/** Trigger of a queued removal notice (upstream's `remove` push). */
export const PUSH_REMOVE = 'remove'

/**
 * Inside the transaction that marks messages read: for those whose push went
 * out (the active_mobile_push_notification flag, set when it was sent),
 * clears the flag and queues a removal notice (upstream's
 * handle_remove_push_notification), so the user's other devices drop it.
 */
export async function queuePushRemovals(tx: Pick<Services['prisma'], '$executeRaw'>, userId: number, messageIds: number[], now: Date): Promise<void> {
  if (messageIds.length === 0) return
  const active = FLAG_BITS.active_mobile_push_notification
  await tx.$executeRaw`
    WITH cleared AS (
      UPDATE user_message SET flags = flags & ~${flagMask(active)}
      WHERE user_id = ${userId} AND message_id = ANY(${messageIds}::int[]) AND flags & ${flagMask(active)} <> 0
      RETURNING message_id
    )
    INSERT INTO missed_push_notification (realm_id, user_id, message_id, trigger, created_at, due_at)
    SELECT u.realm_id, u.id, c.message_id, ${PUSH_REMOVE}, ${now}::timestamptz, ${now}::timestamptz
    FROM cleared c JOIN user_profile u ON u.id = ${userId}
    ON CONFLICT (user_id, message_id) DO NOTHING`
}

/**
 * Inside the transaction that deletes messages, before the deletion: their
 * pending pushes go (the table has no foreign key to message, so a removal
 * notice can outlive it), and each copy whose push went out (the
 * active_mobile_push_notification flag) queues a removal notice, as upstream's
 * do_delete_messages calls handle_remove_push_notification for those users.
 */
export async function queuePushRemovalsForDeletion(tx: Pick<Services['prisma'], '$executeRaw'>, messageIds: number[], now: Date): Promise<void> {
  if (messageIds.length === 0) return
  await tx.$executeRaw`DELETE FROM missed_push_notification WHERE message_id = ANY(${messageIds}::int[]) AND trigger <> ${PUSH_REMOVE}`
  await tx.$executeRaw`
    INSERT INTO missed_push_notification (realm_id, user_id, message_id, trigger, created_at, due_at)
    SELECT u.realm_id, um.user_id, um.message_id, ${PUSH_REMOVE}, ${now}::timestamptz, ${now}::timestamptz
    FROM user_message um JOIN user_profile u ON u.id = um.user_id
    WHERE um.message_id = ANY(${messageIds}::int[]) AND um.flags & ${flagMask(FLAG_BITS.active_mobile_push_notification)} <> 0
    ON CONFLICT (user_id, message_id) DO NOTHING`
}

/** Pending push rows (sent ones are deleted): the gauge of /metrics. */
export const countPendingPushNotifications = (prisma: Services['prisma']): Promise<number> => countRows(prisma, 'missed_push_notification')

/** Pending rows (sent ones are deleted): the gauge of /metrics. */
export const countPendingMissedMessageEmails = (prisma: Services['prisma']): Promise<number> => countRows(prisma, 'missed_message_email')

