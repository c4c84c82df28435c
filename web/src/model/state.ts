// The client's state: what POST /register returned, kept exact by apply()
// (apply.ts). Plain data and Maps, no I/O, no framework: the unit tests
// compare a state that applied events with one built from a fresh register.
import type { WireDraft, WireScheduledMessage, WireMessage, WireReaction, WireRealmEmoji, WireSubscription, WireUser } from './events.js'
import { dmKey, type NarrowMessage } from './narrow.js'
import { applyPresences, timingOf, type LegacyPresence, type ModernPresence, type PresenceTimes, type Timing } from './presence.js'

export interface UserStatus { away?: boolean; status_text?: string; emoji_name?: string; emoji_code?: string; reaction_type?: string }

export type UnreadEntry = { kind: 'stream'; streamId: number; topic: string } | { kind: 'dm'; key: string }

export interface Message extends NarrowMessage {
  sender_full_name: string
  sender_email: string
  content: string
  timestamp: number
  reactions: WireReaction[]
  avatar_url: string | null
  last_edit_timestamp?: number
  last_moved_timestamp?: number
}

/** The register response, as far as the app reads it. */
export interface RegisterResponse {
  queue_id: string
  last_event_id: number
  user_id: number
  realm_name?: string
  max_message_id?: number
  realm_users?: WireUser[]
  /** Deactivated users (with realm_user), listed so administrators can reactivate them. */
  realm_non_active_users?: WireUser[]
  realm_user_groups?: { id: number; members: number[]; direct_subgroup_ids: number[] }[]
  realm_can_delete_own_message_group?: GroupSetting
  realm_can_delete_any_message_group?: GroupSetting
  subscriptions?: WireSubscription[]
  unread_msgs?: {
    pms: { other_user_id: number; unread_message_ids: number[] }[]
    streams: { stream_id: number; topic: string; unread_message_ids: number[] }[]
    huddles: { user_ids_string: string; unread_message_ids: number[] }[]
    mentions: number[]
  }
  user_status?: Record<string, UserStatus>
  /** slim_presence: by user ID, either upstream's modern form or the per-client one. */
  presences?: Record<string, ModernPresence | LegacyPresence>
  presence_last_update_id?: number
  server_timestamp?: number
  user_settings?: Record<string, unknown>
  user_topics?: { stream_id: number; topic_name: string; visibility_policy: number }[]
  drafts?: WireDraft[]
  alert_words?: string[]
  muted_users?: { id: number; timestamp: number }[]
  scheduled_messages?: WireScheduledMessage[]
  recent_private_conversations?: { max_message_id: number; user_ids: number[] }[]
  realm_message_content_edit_limit_seconds?: number | null
  realm_message_content_delete_limit_seconds?: number | null
  realm_allow_message_editing?: boolean
  max_file_upload_size_mib?: number
  realm_emoji?: Record<string, WireRealmEmoji>
}

/** A group-setting value: a group's ID, or an anonymous group of users and subgroups. */
export type GroupSetting = number | { direct_members: number[]; direct_subgroups: number[] }

/** `email` is the API's address (a stand-in when the user hides the real one); `deliveryEmail` the real one, when this user may see it. */
export interface Person { id: number; fullName: string; email: string; deliveryEmail: string | null; avatarUrl: string | null; isActive: boolean; isBot: boolean; role: number }

export interface State {
  queueId: string
  lastEventId: number
  selfId: number
  realmName: string
  users: Map<number, Person>
  subscriptions: Map<number, WireSubscription>
  /** Unread message IDs and where each is. */
  unread: Map<number, UnreadEntry>
  mentions: Set<number>
  userStatus: Map<number, UserStatus>
  /** The newest active and idle report per user (model/presence.ts). */
  presence: Map<number, PresenceTimes>
  /** The server's clock when the newest presence data was read: statuses are judged at it. */
  presenceServerTime: number
  /** The last presence_last_update_id, sent with the next presence report. */
  presenceLastUpdateId: number
  /** Presence and typing intervals from register (`realm`). */
  timing: Timing
  settings: Record<string, unknown>
  /** visibility_policy per `streamId\0topic` (lowercased topic). */
  userTopics: Map<string, number>
  drafts: Map<number, WireDraft>
  alertWords: string[]
  /** The organization's custom emoji by ID, deactivated ones included (their reactions still show). */
  realmEmoji: Map<string, WireRealmEmoji>
  /** The users this user muted, with when (Unix seconds); see muted-users.ts. */
  mutedUsers: Map<number, number>
  /** The user's scheduled messages not yet sent, by ID. */
  scheduledMessages: Map<number, WireScheduledMessage>
  /** The newest message ID per direct conversation (dmKey), from recent_private_conversations. */
  recentDms: Map<string, number>
  /**
   * Direct conversations (dmKey) a deletion took out of recentDms because no
   * loaded message of theirs was left: the server is asked for their newest
   * message (lib/actions.ts refreshEmptiedDms), which may bring them back.
   */
  emptiedDms: Set<string>
  /**
   * Each channel's topics as the server listed them (`GET
   * /users/me/{stream_id}/topics`, fetched when the channel is first opened;
   * by lowercased topic), kept current by message events. A channel absent
   * has not been fetched.
   */
  streamTopics: Map<number, Map<string, { topic: string; maxId: number }>>
  /** Fetched channels whose list a deletion or move left unsure (a topic's newest message gone): fetched again (lib/actions.ts refreshStaleTopics). */
  staleTopics: Set<number>
  /** Messages the app has fetched or received, by ID. */
  messages: Map<number, Message>
  /** Typing users per conversation key (see typingKey). */
  typing: Map<string, Set<number>>
  /** The organization's settings the app uses (realm_*, kept by `realm` events). */
  editLimitSeconds: number | null
  deleteLimitSeconds: number | null
  allowEditing: boolean
  canDeleteOwn: GroupSetting | null
  canDeleteAny: GroupSetting | null
  /** User groups (realm_user_groups, kept by `user_group` events): direct members and subgroups, for group settings. */
  groups: Map<number, { members: number[]; subgroups: number[] }>
}

export const topicKey = (streamId: number, topic: string) => `${streamId}\0${topic.toLowerCase()}`

export function personOf(user: WireUser): Person {
  return { id: user.user_id, fullName: user.full_name, email: user.email, deliveryEmail: user.delivery_email ?? null, avatarUrl: user.avatar_url, isActive: user.is_active !== false, isBot: user.is_bot, role: user.role }
}

export function fromRegister(r: RegisterResponse): State {
  const state = stateOf(r)
  applyPresences(state, r)
  return state
}

function stateOf(r: RegisterResponse): State {
  const unread = new Map<number, UnreadEntry>()
  for (const s of r.unread_msgs?.streams ?? []) for (const id of s.unread_message_ids) unread.set(id, { kind: 'stream', streamId: s.stream_id, topic: s.topic })
  for (const p of r.unread_msgs?.pms ?? []) for (const id of p.unread_message_ids) unread.set(id, { kind: 'dm', key: dmKey([p.other_user_id], r.user_id) })
  for (const h of r.unread_msgs?.huddles ?? []) {
    const key = dmKey(h.user_ids_string.split(',').map(Number), r.user_id)
    for (const id of h.unread_message_ids) unread.set(id, { kind: 'dm', key })
  }
  return {
    queueId: r.queue_id,
    lastEventId: r.last_event_id,
    selfId: r.user_id,
    realmName: r.realm_name ?? '',
    users: new Map([...(r.realm_users ?? []).map((u) => personOf(u)), ...(r.realm_non_active_users ?? []).map((u) => ({ ...personOf(u), isActive: false }))].map((p) => [p.id, p])),
    subscriptions: new Map((r.subscriptions ?? []).map((s) => [s.stream_id, s])),
    unread,
    mentions: new Set(r.unread_msgs?.mentions ?? []),
    userStatus: new Map(Object.entries(r.user_status ?? {}).map(([id, s]) => [Number(id), { ...s }])),
    presence: new Map(),
    presenceServerTime: 0,
    presenceLastUpdateId: -1,
    timing: timingOf(r as unknown as Record<string, unknown>),
    settings: { ...(r.user_settings ?? {}) },
    userTopics: new Map((r.user_topics ?? []).filter((t) => t.visibility_policy !== 0).map((t) => [topicKey(t.stream_id, t.topic_name), t.visibility_policy])),
    drafts: new Map((r.drafts ?? []).map((d) => [d.id, d])),
    alertWords: [...(r.alert_words ?? [])],
    realmEmoji: new Map(Object.entries(r.realm_emoji ?? {})),
    mutedUsers: new Map((r.muted_users ?? []).map((m) => [m.id, m.timestamp])),
    scheduledMessages: new Map((r.scheduled_messages ?? []).map((m) => [m.scheduled_message_id, m])),
    recentDms: new Map((r.recent_private_conversations ?? []).map((c) => [dmKey(c.user_ids, r.user_id), c.max_message_id])),
    emptiedDms: new Set(),
    streamTopics: new Map(),
    staleTopics: new Set(),
    messages: new Map(),
    typing: new Map(),
    editLimitSeconds: r.realm_message_content_edit_limit_seconds ?? null,
    deleteLimitSeconds: r.realm_message_content_delete_limit_seconds ?? null,
    allowEditing: r.realm_allow_message_editing ?? true,
    canDeleteOwn: r.realm_can_delete_own_message_group ?? null,
    canDeleteAny: r.realm_can_delete_any_message_group ?? null,
    groups: new Map((r.realm_user_groups ?? []).map((g) => [g.id, { members: [...g.members].sort((a, b) => a - b), subgroups: [...g.direct_subgroup_ids].sort((a, b) => a - b) }])),
  }
}

export function messageOf(m: WireMessage): Message {
  return {
    id: m.id,
    type: m.type,
    stream_id: m.stream_id,
    subject: m.subject,
    sender_id: m.sender_id,
    sender_full_name: m.sender_full_name,
    sender_email: m.sender_email,
    display_recipient: Array.isArray(m.display_recipient) ? m.display_recipient.map((r: { id: number; full_name: string; email: string }) => ({ id: r.id, full_name: r.full_name, email: r.email })) : m.display_recipient,
    flags: [...m.flags],
    content: m.content,
    timestamp: m.timestamp,
    reactions: (m.reactions as WireReaction[]).map((r) => ({ emoji_name: r.emoji_name, emoji_code: r.emoji_code, reaction_type: r.reaction_type, user_id: r.user_id })),
    avatar_url: m.avatar_url,
    last_edit_timestamp: m.last_edit_timestamp,
    last_moved_timestamp: m.last_moved_timestamp,
  }
}

/** Whether a user holds a group setting: a member of its group or of one of its subgroups, at any depth. Unknown (null): no. */
export function holdsGroupSetting(state: Pick<State, 'groups'>, setting: GroupSetting | null, userId: number): boolean {
  if (setting === null) return false
  const seen = new Set<number>()
  const inGroup = (id: number): boolean => {
    if (seen.has(id)) return false
    seen.add(id)
    const group = state.groups.get(id)
    return !!group && (group.members.includes(userId) || group.subgroups.some(inGroup))
  }
  return typeof setting === 'number' ? inGroup(setting) : setting.direct_members.includes(userId) || setting.direct_subgroups.some(inGroup)
}

/**
 * Upstream's rules for offering to edit or delete a message (message_edit.ts):
 * only one's own; editing while the organization allows it and within its
 * limit; deleting by anyone holding can_delete_any_message_group, else one's
 * own by those holding can_delete_own_message_group within its limit. A null
 * limit is none (0 too, as older servers sent it). `now` in seconds.
 */
export function canEditMessage(state: State, message: { sender_id: number; timestamp: number }, now: number): boolean {
  if (message.sender_id !== state.selfId || !state.allowEditing) return false
  return !state.editLimitSeconds || now - message.timestamp < state.editLimitSeconds
}

export function canDeleteMessage(state: State, message: { sender_id: number; timestamp: number }, now: number): boolean {
  // Before a server sends the group settings (older levels), one's own messages within the limit.
  if (state.canDeleteAny !== null && holdsGroupSetting(state, state.canDeleteAny, state.selfId)) return true
  if (message.sender_id !== state.selfId) return false
  if (state.canDeleteOwn !== null && !holdsGroupSetting(state, state.canDeleteOwn, state.selfId)) return false
  return !state.deleteLimitSeconds || now - message.timestamp < state.deleteLimitSeconds
}
