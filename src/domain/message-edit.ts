// Rules of PATCH /messages/{id} and DELETE /messages/{id} that need no I/O:
// who may edit content, topics and channels, the time limits (with upstream's
// 20-second grace), the MOVE_MESSAGES_TIME_LIMIT_EXCEEDED window, and the
// wording of the notification bot's move and resolve notices
// (upstream-behaviour §5, §6, §15).
import { badRequest, moveTimeLimitExceeded } from '../errors.js'
import { hashEncode, streamNarrowSlug } from './markdown.js'
import { isModeratorOrAbove, type PolicyRealm, type PolicyUser } from './roles.js'
import { NO_TOPIC_NAME, topicResolutionChange } from './topics.js'

/** Upstream allows 20 seconds past every edit and move limit (network delays, the compose box's countdown). */
export const EDIT_LIMIT_BUFFER_SECONDS = 20
/** A resolve notice this young is deleted, instead of answered, by the opposite toggle. */
export const RESOLVE_TOPIC_UNDO_GRACE_PERIOD_SECONDS = 60

export type PropagateMode = 'change_one' | 'change_later' | 'change_all'
export const PROPAGATE_MODES: readonly PropagateMode[] = ['change_one', 'change_later', 'change_all']

export interface EditRealm extends PolicyRealm {
  allowMessageEditing: boolean
  messageContentEditLimitSeconds: number | null
  moveMessagesWithinStreamLimitSeconds: number | null
  moveMessagesBetweenStreamsLimitSeconds: number | null
  messageContentDeleteLimitSeconds: number | null
}

/**
 * The realm group settings an edit or delete consults (queries/realm-permissions.ts),
 * resolved for the acting user before the pure checks run.
 */
export interface EditPermissions {
  /** can_move_messages_between_topics_group */
  moveBetweenTopics: boolean
  /** can_resolve_topics_group */
  resolveTopics: boolean
  /** can_move_messages_between_channels_group */
  moveBetweenChannels: boolean
  /** can_delete_own_message_group */
  deleteOwn: boolean
  /** can_delete_any_message_group */
  deleteAny: boolean
}

export interface EditActor extends PolicyUser {
  id: number
}

const ageSeconds = (sentAt: Date, now: Date): number => (now.getTime() - sentAt.getTime()) / 1000

/** Past `limit` (+ the grace) since `sentAt`? A null limit never passes. */
export function pastLimit(limitSeconds: number | null, sentAt: Date, now: Date, buffer = EDIT_LIMIT_BUFFER_SECONDS): boolean {
  return limitSeconds !== null && ageSeconds(sentAt, now) > limitSeconds + buffer
}

/** Administrators and moderators move messages without time limits. */
export const exemptFromMoveLimits = (role: number): boolean => isModeratorOrAbove(role)

/** `buffer`: the grace past the limit (upstream's typing notification for an edit allows none). */
export function checkContentEdit(o: { realm: EditRealm; actor: EditActor; senderId: number; sentAt: Date; now: Date; buffer?: number }): void {
  if (!o.realm.allowMessageEditing) throw badRequest('Your organization has turned off message editing')
  if (o.senderId !== o.actor.id) throw badRequest("You don't have permission to edit this message")
  if (pastLimit(o.realm.messageContentEditLimitSeconds, o.sentAt, o.now, o.buffer)) throw badRequest('The time limit for editing this message has passed')
}

/** A topic change: resolving or unresolving needs can_resolve_topics_group (level 367), any other rename can_move_messages_between_topics_group. */
export function checkTopicEdit(o: { realm: EditRealm; actor: EditActor; perms: EditPermissions; currentTopic: string; resolvingOnly: boolean; sentAt: Date; now: Date }): void {
  // Anyone may retitle messages without a topic: the empty topic, or "(no topic)" as sent before level 370.
  const allowed = o.currentTopic === '' || o.currentTopic === NO_TOPIC_NAME || (o.resolvingOnly ? o.perms.resolveTopics : o.perms.moveBetweenTopics)
  if (!allowed) throw badRequest("You don't have permission to edit this message")
  if (!exemptFromMoveLimits(o.actor.role) && pastLimit(o.realm.moveMessagesWithinStreamLimitSeconds, o.sentAt, o.now)) {
    throw badRequest("The time limit for editing this message's topic has passed.")
  }
}

export function checkChannelMovePermission(o: { perms: EditPermissions }): void {
  if (!o.perms.moveBetweenChannels) {
    throw badRequest("You don't have permission to move this message")
  }
}

export function checkChannelMoveTime(o: { realm: EditRealm; actor: EditActor; sentAt: Date; now: Date }): void {
  if (!exemptFromMoveLimits(o.actor.role) && pastLimit(o.realm.moveMessagesBetweenStreamsLimitSeconds, o.sentAt, o.now)) {
    throw badRequest("The time limit for editing this message's channel has passed")
  }
}

/** The deadline of a change_all move: the smaller of the limits that apply, null when none does. */
export function moveDeadlineSeconds(realm: EditRealm, change: { topic: boolean; stream: boolean }): number | null {
  const limits: number[] = []
  if (change.topic && realm.moveMessagesWithinStreamLimitSeconds !== null) limits.push(realm.moveMessagesWithinStreamLimitSeconds)
  if (change.stream && realm.moveMessagesBetweenStreamsLimitSeconds !== null) limits.push(realm.moveMessagesBetweenStreamsLimitSeconds)
  return limits.length === 0 ? null : Math.min(...limits) + EDIT_LIMIT_BUFFER_SECONDS
}

/**
 * Throws MOVE_MESSAGES_TIME_LIMIT_EXCEEDED unless every message of the topic
 * (those the actor can access, oldest first) is younger than the deadline.
 */
export function checkMoveWindow(messages: readonly { id: number; dateSent: Date }[], deadlineSeconds: number | null, now: Date): void {
  if (deadlineSeconds === null) return
  const allowed = messages.filter((m) => ageSeconds(m.dateSent, now) < deadlineSeconds).map((m) => m.id).sort((a, b) => a - b)
  if (allowed.length === messages.length) return
  throw moveTimeLimitExceeded({
    firstMessageIdAllowedToMove: allowed[0] ?? null,
    totalMessagesInTopic: messages.length,
    totalMessagesAllowedToMove: allowed.length,
  })
}

/** Upstream validate_can_delete_message. */
export function checkDelete(o: { realm: EditRealm; actor: EditActor; perms: EditPermissions; senderId: number; senderBotOwnerId: number | null; sentAt: Date; now: Date }): void {
  if (o.perms.deleteAny) return
  const own = o.senderId === o.actor.id || o.senderBotOwnerId === o.actor.id
  if (!own || !o.perms.deleteOwn) {
    throw badRequest("You don't have permission to delete this message")
  }
  if (pastLimit(o.realm.messageContentDeleteLimitSeconds, o.sentAt, o.now, 0)) throw badRequest('The time limit for deleting this message has passed')
}

/** Validation of the request's shape, before any permission (upstream validate_message_edit_payload). */
export function checkEditPayload(o: {
  isStreamMessage: boolean
  content: boolean
  topic: boolean
  stream: boolean
  propagateMode: PropagateMode
}): void {
  if (!o.content && !o.topic && !o.stream) throw badRequest('Nothing to change')
  if (!o.isStreamMessage) {
    if (o.stream) throw badRequest('Direct messages cannot be moved to channels.')
    if (o.topic) throw badRequest('Direct messages cannot have topics.')
  }
  if (o.propagateMode !== 'change_one' && !o.topic && !o.stream) throw badRequest('Invalid propagate_mode without topic edit')
  if (o.stream && o.content) throw badRequest('Cannot change message content while changing channel')
}

// ---------------------------------------------------------------------------
// Notification wording (Notification Bot, realm default language: English)

export interface Mentionable {
  id: number
  fullName: string
}

/** `@_**Name|ID**`: a mention that notifies nobody. */
export const silentMention = (user: Mentionable): string => `@_**${user.fullName}|${user.id}**`
export const topicLink = (streamName: string, topic: string): string => `#**${streamName}>${topic}**`

/** Upstream near_stream_message_url: where the moved message now is. */
export function nearMessageUrl(realmUrl: string, stream: { id: number; name: string }, topic: string, messageId: number): string {
  return `${realmUrl}/#narrow/channel/${streamNarrowSlug(stream)}/topic/${hashEncode(topic)}/near/${messageId}`
}

export function resolveNotice(actor: Mentionable, resolved: boolean): string {
  return `${silentMention(actor)} has marked this topic as ${resolved ? 'resolved' : 'unresolved'}.`
}

const RESOLVE_NOTICE = /^@_\*\*[^|*]+\|\d+\*\* has marked this topic as (un)?resolved\.$/
export const isResolveNotice = (content: string): boolean => RESOLVE_NOTICE.test(content)

export function oldThreadNotice(o: { actor: Mentionable; newLocation: string; count: number; movedAll: boolean }): string {
  const user = silentMention(o.actor)
  if (o.movedAll) return `This topic was moved to ${o.newLocation} by ${user}.`
  if (o.count === 1) return `A message was moved from this topic to ${o.newLocation} by ${user}.`
  return `${o.count} messages were moved from this topic to ${o.newLocation} by ${user}.`
}

export function newThreadNotice(o: { actor: Mentionable; oldLocation: string; count: number; wholeTopicIntoEmpty: boolean; messageLink: string }): string {
  const user = silentMention(o.actor)
  if (o.wholeTopicIntoEmpty) return `This topic was moved here from ${o.oldLocation} by ${user}.`
  if (o.count === 1) return `[A message](${o.messageLink}) was moved here from ${o.oldLocation} by ${user}.`
  return `${o.count} messages were moved here from ${o.oldLocation} by ${user}.`
}

/** Merged policy when a moved topic lands where the user already has one (upstream get_visibility_policy_after_merge). */
export function visibilityPolicyAfterMerge(orig: number, target: number): number {
  if (orig === target) return orig
  if (orig === 3 || target === 3) return 3
  if (orig === 2 || target === 2) return 2
  return 0
}


/** Keys of a stored edit-history entry that upstream no longer sends (level 284). */
const HIDDEN_HISTORY_KEYS: ReadonlySet<string> = new Set(['prev_rendered_content_version'])

/** An edit-history entry as clients see it: without prev_rendered_content_version (upstream level 284). */
export function shownHistoryEntry(entry: unknown): unknown {
  if (entry === null || typeof entry !== 'object' || Array.isArray(entry)) return entry
  return Object.fromEntries(Object.entries(entry).filter(([key]) => !HIDDEN_HISTORY_KEYS.has(key)))
}

/** Upstream's MessageEditHistoryVisibilityPolicyEnum (level 358): the stored value of each wire name. */
export const EDIT_HISTORY_VISIBILITY = { all: 1, moves: 2, none: 3 } as const
export type EditHistoryVisibilityName = keyof typeof EDIT_HISTORY_VISIBILITY

export function editHistoryVisibilityName(stored: number): EditHistoryVisibilityName {
  return stored === EDIT_HISTORY_VISIBILITY.none ? 'none' : stored === EDIT_HISTORY_VISIBILITY.moves ? 'moves' : 'all'
}

const CONTENT_HISTORY_KEYS = ['prev_content', 'prev_rendered_content', 'content_html_diff']

/**
 * The edit-history entries (stored or filled in) a viewer sees under the
 * organization's policy, as upstream's visible_edit_history_for_message:
 * all of them; under "moves", an entry that changed the content only if it
 * also changed the topic, without its content fields; under "none", none.
 */
export function visibleEditHistory<T>(policy: number, entries: readonly T[]): T[] {
  if (policy === EDIT_HISTORY_VISIBILITY.none) return []
  if (policy !== EDIT_HISTORY_VISIBILITY.moves) return [...entries]
  const out: T[] = []
  for (const entry of entries) {
    if (entry === null || typeof entry !== 'object') continue
    const e = entry as Record<string, unknown>
    if (!('prev_content' in e)) out.push(entry)
    else if ('prev_topic' in e) out.push(Object.fromEntries(Object.entries(e).filter(([key]) => !CONTENT_HISTORY_KEYS.includes(key))) as T)
  }
  return out
}

/**
 * A message's `last_edit_timestamp` and `last_moved_timestamp` (upstream
 * level 365), from its stored edit history (newest first): the newest entry
 * that changed the content, and the newest that changed the channel or the
 * topic other than only resolving or unresolving it. A message edited
 * without a readable history counts as content-edited at `lastEditTime`.
 */
export function editTimestamps(history: unknown, lastEditTime: number | null): { lastEdit: number | null; lastMoved: number | null } {
  if (lastEditTime === null) return { lastEdit: null, lastMoved: null }
  if (!Array.isArray(history)) return { lastEdit: lastEditTime, lastMoved: null }
  let lastEdit: number | null = null
  let lastMoved: number | null = null
  for (const entry of history as unknown[]) {
    if (entry === null || typeof entry !== 'object') continue
    const e = entry as Record<string, unknown>
    const at = typeof e.timestamp === 'number' ? e.timestamp : null
    if (at === null) continue
    if ('prev_content' in e && (lastEdit === null || at > lastEdit)) lastEdit = at
    const topicMoved = typeof e.prev_topic === 'string' && typeof e.topic === 'string' && topicResolutionChange(e.prev_topic, e.topic) === null
    if (('prev_stream' in e || topicMoved) && (lastMoved === null || at > lastMoved)) lastMoved = at
  }
  return { lastEdit, lastMoved }
}
