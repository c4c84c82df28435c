// A model of a client: applies delivered events to a POST /register state
// the way upstream's apply_event (zerver/lib/events.py) does, for every event
// type Roost sends. Pure: returns a new state and never touches the input.
//
// Where upstream's apply_event reads the database (presence, a deleted
// message's effect on max_message_id and recent conversations, default
// channels after a role change) a client cannot; this model does what a
// client can do with the event alone, and checkStateAfter's callers avoid or
// name those cases (test/support/state-check.ts).
//
// unread_msgs is kept as upstream keeps it while applying (raw, per message)
// and aggregated again like Roost's getUnreadSummary (src/queries/register-unread.ts):
// by message ID, groups in order of their oldest message, muted channels and
// topics left out of `count` and of wildcard `mentions`.
import type { Static } from 'typebox'
import { inaccessibleUserDict } from '../../src/present/user.js'
import type {
  AlertWordsEventSchema,
  CustomProfileFieldsEventSchema,
  DefaultStreamsEventSchema,
  DeleteMessageEventSchema,
  DraftsEventSchema,
  MessageEventSchema,
  MutedTopicsEventSchema,
  MutedUsersEventSchema,
  PresenceEventSchema,
  RealmEmojiEventSchema,
  RealmEventSchema,
  RealmFiltersEventSchema,
  RealmLinkifiersEventSchema,
  RealmUserEventSchema,
  SavedSnippetsEventSchema,
  ScheduledMessagesEventSchema,
  StreamEventSchema,
  SubscriptionEventSchema,
  UpdateDisplaySettingsEventSchema,
  UpdateGlobalNotificationsEventSchema,
  UpdateMessageEventSchema,
  UpdateMessageFlagsEventSchema,
  UserGroupEventSchema,
  UserSettingsEventSchema,
  UserStatusEventSchema,
  UserTopicEventSchema,
} from '../../src/events/schemas/index.js'

/** A delivered event, as the schemas describe it (with the queue's `id`). */
export type DeliveredEvent = { id?: number } & (
  | Static<typeof MessageEventSchema>
  | Static<typeof UpdateMessageEventSchema>
  | Static<typeof DeleteMessageEventSchema>
  | Static<typeof UpdateMessageFlagsEventSchema>
  | Static<typeof StreamEventSchema>
  | Static<typeof SubscriptionEventSchema>
  | Static<typeof RealmUserEventSchema>
  | Static<typeof UserStatusEventSchema>
  | Static<typeof PresenceEventSchema>
  | Static<typeof CustomProfileFieldsEventSchema>
  | Static<typeof UserGroupEventSchema>
  | Static<typeof RealmEmojiEventSchema>
  | Static<typeof UserSettingsEventSchema>
  | Static<typeof UpdateDisplaySettingsEventSchema>
  | Static<typeof UpdateGlobalNotificationsEventSchema>
  | Static<typeof AlertWordsEventSchema>
  | Static<typeof UserTopicEventSchema>
  | Static<typeof MutedTopicsEventSchema>
  | Static<typeof DraftsEventSchema>
  | Static<typeof SavedSnippetsEventSchema>
  | Static<typeof ScheduledMessagesEventSchema>
  | Static<typeof RealmEventSchema>
  | Static<typeof DefaultStreamsEventSchema>
  | Static<typeof RealmLinkifiersEventSchema>
  | Static<typeof RealmFiltersEventSchema>
  | Static<typeof MutedUsersEventSchema>
  | { type: 'reaction' | 'typing' | 'typing_edit_message' | 'attachment' | 'invites_changed' | 'heartbeat' }
)

type Obj = Record<string, unknown>
/** The register response, read as JSON. */
export type RegisterState = Obj

export interface ClientOptions {
  userId: number
  includeSubscribers: boolean
  /** The queue's client_capabilities.user_list_incomplete. */
  userListIncomplete: boolean
  /** The queue's client_gravatar (client_extavatar): the client computes gravatar URLs itself. */
  clientExtavatar: boolean
}

interface SubDict extends Obj {
  stream_id: number
  name: string
  subscribers?: number[]
  first_message_id: number | null
  is_muted?: boolean
}
interface UserRow extends Obj {
  user_id: number
  is_active: boolean
}
interface UnreadEntry {
  id: number
  streamId: number | null
  topic: string
  /** DMs: the other participants, sorted (empty for a self-DM). */
  others: number[]
  mentioned: boolean
  wildcard: boolean
}
interface Unread {
  count: number
  pms: { other_user_id: number; sender_id: number; unread_message_ids: number[] }[]
  streams: { stream_id: number; topic: string; unread_message_ids: number[] }[]
  huddles: { user_ids_string: string; unread_message_ids: number[] }[]
  mentions: number[]
  old_unreads_missing: boolean
}

const ROLE_OWNER = 100
const ROLE_ADMIN = 200
const ROLE_MODERATOR = 300
const ROLE_GUEST = 600
const VISIBILITY_INHERIT = 0
const VISIBILITY_MUTED = 1

const byName = (a: { name: string }, b: { name: string }): number => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)
const ascending = (a: number, b: number): number => a - b
const list = <T>(state: Obj, key: string): T[] => (Array.isArray(state[key]) ? (state[key] as T[]) : [])

/** Applies `events` in order to a copy of `state`. */
export function applyEvents(state: RegisterState, events: DeliveredEvent[], options: ClientOptions): RegisterState {
  const out = structuredClone(state)
  let unread = 'unread_msgs' in out ? rawUnread(out) : undefined
  for (const event of events) unread = applyEvent(out, event, options, unread)
  if (unread !== undefined) out.unread_msgs = aggregateUnread(unread, out, options.userId, (out.unread_msgs as Unread).old_unreads_missing)
  return out
}

function applyEvent(state: Obj, event: DeliveredEvent, options: ClientOptions, unread: Map<number, UnreadEntry> | undefined): Map<number, UnreadEntry> | undefined {
  switch (event.type) {
    case 'message':
      applyMessage(state, event, options, unread)
      break
    case 'update_message':
      if (unread && event.stream_id !== undefined) {
        for (const id of event.message_ids) {
          const entry = unread.get(id)
          if (!entry) continue
          if (event.new_stream_id !== undefined) entry.streamId = event.new_stream_id
          if (event.subject !== undefined) entry.topic = event.subject
        }
      }
      break
    case 'delete_message': {
      // max_message_id and recent_private_conversations: upstream re-reads the database.
      const ids = 'message_ids' in event ? event.message_ids : [event.message_id]
      for (const id of ids) unread?.delete(id)
      break
    }
    case 'update_message_flags':
      if (event.flag === 'read' && unread) {
        if (event.op === 'add') for (const id of event.messages) unread.delete(id)
        else
          for (const [id, details] of Object.entries(event.message_details ?? {})) {
            unread.set(Number(id), {
              id: Number(id),
              streamId: details.type === 'stream' ? details.stream_id : null,
              topic: details.type === 'stream' ? details.topic : '',
              others: details.type === 'private' ? [...details.user_ids].sort(ascending) : [],
              mentioned: details.mentioned === true,
              wildcard: false,
            })
          }
      }
      if (event.flag === 'starred' && 'starred_messages' in state) {
        const starred = list<number>(state, 'starred_messages')
        state.starred_messages = event.op === 'add' ? [...starred, ...event.messages] : starred.filter((id) => !event.messages.includes(id))
      }
      break
    case 'stream':
      applyStream(state, event, options)
      break
    case 'subscription':
      applySubscription(state, event, options)
      break
    case 'realm_user':
      applyRealmUser(state, event, options)
      break
    case 'user_status': {
      const statuses = { ...(state.user_status as Record<string, Obj>) }
      const key = String(event.user_id)
      const status: Obj = { ...(statuses[key] ?? {}) }
      if (event.away !== undefined) {
        if (event.away) status.away = true
        else delete status.away
      }
      if (event.status_text !== undefined) {
        if (event.status_text === '') delete status.status_text
        else status.status_text = event.status_text
      }
      if (event.emoji_name !== undefined) {
        for (const [field, value] of [
          ['emoji_name', event.emoji_name],
          ['emoji_code', event.emoji_code],
          ['reaction_type', event.reaction_type],
        ] as const) {
          if (value === undefined || value === '' || event.emoji_name === '') delete status[field]
          else status[field] = value
        }
      }
      if (Object.keys(status).length > 0) statuses[key] = status
      else delete statuses[key]
      state.user_status = statuses
      break
    }
    case 'presence': {
      // Upstream reads the user's presence from the database; a client takes the event's.
      if (!('presences' in state)) break
      const website = event.presence.website
      if (!website) break
      const presences = state.presences as Record<string, Obj>
      const key = event.email ?? String(event.user_id)
      if (key === String(event.user_id)) {
        // Upstream's modern entry reports a user never active as active when it joined
        // (its apply_event reads that from the database; a client has it in realm_users).
        const joined = list<Obj>(state, 'realm_users').find((u) => u.user_id === event.user_id)?.date_joined
        const previous = presences[key] ?? (typeof joined === 'string' ? { active_timestamp: Math.floor(Date.parse(joined) / 1000) } : {})
        presences[key] =
          website.status === 'active'
            ? { ...previous, active_timestamp: website.timestamp, idle_timestamp: website.timestamp }
            : { ...previous, idle_timestamp: website.timestamp }
      } else {
        presences[key] = { aggregated: { client: website.client, status: website.status, timestamp: website.timestamp }, website }
      }
      break
    }
    case 'custom_profile_fields': {
      state.custom_profile_fields = event.fields
      const ids = new Set(event.fields.map((f) => String(f.id)))
      for (const key of ['realm_users', 'realm_non_active_users']) {
        for (const user of list<Obj>(state, key)) {
          const data = user.profile_data as Record<string, unknown> | undefined
          if (data) for (const id of Object.keys(data)) if (!ids.has(id)) delete data[id]
        }
      }
      break
    }
    case 'user_group': {
      const groups = list<Obj & { id: number; members: number[]; direct_subgroup_ids: number[] }>(state, 'realm_user_groups')
      const group = 'group_id' in event ? groups.find((g) => g.id === event.group_id) : undefined
      if (event.op === 'add') state.realm_user_groups = [...groups, event.group].sort((a, b) => Number(a.id) - Number(b.id))
      else if (event.op === 'remove') state.realm_user_groups = groups.filter((g) => g.id !== event.group_id)
      else if (event.op === 'update') Object.assign(group ?? {}, event.data)
      else if (group && event.op === 'add_members') group.members = [...group.members, ...event.user_ids].sort(ascending)
      else if (group && event.op === 'remove_members') group.members = group.members.filter((id) => !event.user_ids.includes(id))
      else if (group && event.op === 'add_subgroups') group.direct_subgroup_ids = [...group.direct_subgroup_ids, ...event.direct_subgroup_ids].sort(ascending)
      else if (group && event.op === 'remove_subgroups') group.direct_subgroup_ids = group.direct_subgroup_ids.filter((id) => !event.direct_subgroup_ids.includes(id))
      refreshOwnPermissionFlags(state)
      break
    }
    case 'realm_emoji':
      state.realm_emoji = event.realm_emoji
      break
    case 'user_settings':
      if (event.property in state) state[event.property] = event.value
      if (state.user_settings) (state.user_settings as Obj)[event.property] = event.value
      break
    case 'update_display_settings':
      state[event.setting_name] = event.setting
      break
    case 'update_global_notifications':
      state[event.notification_name] = event.setting
      break
    case 'alert_words':
      state.alert_words = event.alert_words
      break
    case 'muted_topics':
      state.muted_topics = event.muted_topics
      break
    case 'user_topic': {
      const topics = list<Obj & { stream_id: number; topic_name: string }>(state, 'user_topics')
      const kept = topics.filter((t) => !(t.stream_id === event.stream_id && t.topic_name === event.topic_name))
      const { id: _id, type: _type, ...row } = event
      state.user_topics = event.visibility_policy === VISIBILITY_INHERIT ? kept : [...kept, row]
      break
    }
    case 'drafts': {
      const drafts = list<Obj & { id: number }>(state, 'drafts')
      if (event.op === 'add') state.drafts = [...drafts, ...event.drafts]
      else if (event.op === 'update') state.drafts = drafts.map((d) => (d.id === event.draft.id ? event.draft : d))
      else state.drafts = drafts.filter((d) => d.id !== event.draft_id)
      break
    }
    case 'saved_snippets': {
      // Upstream's apply_event: append on add, replace by ID on update, drop on remove.
      const snippets = list<Obj & { id: number }>(state, 'saved_snippets')
      if (event.op === 'add') state.saved_snippets = [...snippets, event.saved_snippet]
      else if (event.op === 'update') state.saved_snippets = snippets.map((s) => (s.id === event.saved_snippet.id ? event.saved_snippet : s))
      else state.saved_snippets = snippets.filter((s) => s.id !== event.saved_snippet_id)
      break
    }
    case 'scheduled_messages': {
      const messages = list<Obj & { scheduled_message_id: number; scheduled_delivery_timestamp: number }>(state, 'scheduled_messages')
      const byTime = (a: { scheduled_delivery_timestamp: number }, b: { scheduled_delivery_timestamp: number }) => a.scheduled_delivery_timestamp - b.scheduled_delivery_timestamp
      if (event.op === 'add') state.scheduled_messages = [...messages, ...event.scheduled_messages].sort(byTime)
      else if (event.op === 'update') {
        state.scheduled_messages = messages.map((m) => (m.scheduled_message_id === event.scheduled_message.scheduled_message_id ? event.scheduled_message : m)).sort(byTime)
      } else state.scheduled_messages = messages.filter((m) => m.scheduled_message_id !== event.scheduled_message_id)
      break
    }
    case 'realm':
      // Upstream's apply_event: the setting's register key is realm_<name>.
      if (event.op === 'update') state[`realm_${event.property}`] = event.value
      // Upstream's clients stop on it: the organization is gone, nothing in the state changes.
      else if (event.op === 'deactivated') break
      else for (const [key, value] of Object.entries(event.data)) state[`realm_${key}`] = value
      refreshOwnPermissionFlags(state)
      break
    case 'default_streams':
      state.realm_default_streams = event.default_streams
      break
    case 'realm_linkifiers':
      state.realm_linkifiers = event.realm_linkifiers
      break
    case 'realm_filters':
      state.realm_filters = event.realm_filters
      break
    case 'muted_users':
      state.muted_users = event.muted_users
      break
    // No register state: reactions and submessages come with messages, typing
    // is transient, attachments and invitations are fetched on demand.
    case 'reaction':
    case 'typing':
    case 'typing_edit_message':
    case 'attachment':
    case 'invites_changed':
    case 'heartbeat':
      break
    default: {
      const unknown: never = event
      throw new Error(`the client model cannot apply ${JSON.stringify(unknown)}`)
    }
  }
  return unread
}

function applyMessage(state: Obj, event: Static<typeof MessageEventSchema>, options: ClientOptions, unread: Map<number, UnreadEntry> | undefined): void {
  const message = event.message
  if ('max_message_id' in state) state.max_message_id = Math.max(Number(state.max_message_id), message.id)
  if (unread && !event.flags.includes('read')) {
    const others = Array.isArray(message.display_recipient) ? message.display_recipient.map((u) => u.id).filter((id) => id !== options.userId).sort(ascending) : []
    unread.set(message.id, {
      id: message.id,
      streamId: message.stream_id ?? null,
      topic: message.type === 'stream' ? message.subject : '',
      others: [...new Set(others)],
      mentioned: event.flags.includes('mentioned'),
      wildcard: event.flags.some((f) => f === 'stream_wildcard_mentioned' || f === 'topic_wildcard_mentioned' || f === 'wildcard_mentioned'),
    })
  }
  if (message.type !== 'stream') {
    if ('recent_private_conversations' in state && Array.isArray(message.display_recipient)) {
      const userIds = [...new Set(message.display_recipient.map((u) => u.id).filter((id) => id !== options.userId))].sort(ascending)
      const key = userIds.join(',')
      const conversations = list<{ max_message_id: number; user_ids: number[] }>(state, 'recent_private_conversations').filter((c) => c.user_ids.join(',') !== key)
      state.recent_private_conversations = [...conversations, { max_message_id: message.id, user_ids: userIds }].sort((a, b) => b.max_message_id - a.max_message_id)
    }
    return
  }
  for (const key of ['subscriptions', 'streams']) {
    for (const sub of list<SubDict>(state, key)) if (sub.stream_id === message.stream_id && sub.first_message_id === null) sub.first_message_id = message.id
  }
}

function applyStream(state: Obj, event: Static<typeof StreamEventSchema>, options: ClientOptions): void {
  if (event.op === 'create') {
    for (const stream of event.streams) {
      // Upstream puts a channel the user was subscribed to before into `unsubscribed` (a database read); a new channel has no such user.
      const data: Obj = { ...stream }
      if (options.includeSubscribers) data.subscribers = []
      if ('never_subscribed' in state) state.never_subscribed = [...list<SubDict>(state, 'never_subscribed'), data as SubDict].sort(byName)
      if ('streams' in state) state.streams = [...list<SubDict>(state, 'streams'), { ...stream, ...(options.includeSubscribers ? { subscribers: [] } : {}) } as SubDict].sort(byName)
    }
  } else if (event.op === 'delete') {
    const gone = new Set(event.stream_ids)
    for (const key of ['streams', 'subscriptions', 'unsubscribed', 'never_subscribed']) {
      if (key in state) state[key] = list<SubDict>(state, key).filter((s) => !gone.has(s.stream_id))
    }
  } else {
    for (const key of ['subscriptions', 'unsubscribed', 'never_subscribed', 'streams']) {
      for (const obj of list<SubDict>(state, key)) {
        if (obj.name.toLowerCase() !== event.name.toLowerCase()) continue
        if (key === 'streams' && !(event.property in obj)) continue
        obj[event.property] = event.value
        if (event.property === 'description') obj.rendered_description = event.rendered_description
        if (event.history_public_to_subscribers !== undefined) obj.history_public_to_subscribers = event.history_public_to_subscribers
        if (event.is_web_public !== undefined) obj.is_web_public = event.is_web_public
      }
    }
  }
}

function applySubscription(state: Obj, event: Static<typeof SubscriptionEventSchema>, options: ClientOptions): void {
  const subscriptions = list<SubDict>(state, 'subscriptions')
  if (event.op === 'add') {
    const added = new Set(event.subscriptions.map((s) => s.stream_id))
    const existing = new Set(subscriptions.map((s) => s.stream_id))
    const fresh = event.subscriptions
      .filter((s) => !existing.has(s.stream_id))
      .map((s) => {
        const copy: Obj = { ...s }
        if (!options.includeSubscribers) delete copy.subscribers
        return copy as SubDict
      })
    state.subscriptions = [...subscriptions, ...fresh]
    // Roost's `streams` carries subscribers too (with include_subscribers): the subscriber's own copy follows the subscription's.
    if (options.includeSubscribers) {
      for (const stream of list<SubDict>(state, 'streams')) {
        const sub = event.subscriptions.find((s) => s.stream_id === stream.stream_id)
        if (sub?.subscribers && stream.subscribers) stream.subscribers = [...sub.subscribers]
      }
    }
    state.unsubscribed = list<SubDict>(state, 'unsubscribed').filter((s) => !added.has(s.stream_id))
    state.never_subscribed = list<SubDict>(state, 'never_subscribed').filter((s) => !added.has(s.stream_id))
  } else if (event.op === 'remove') {
    const removed = new Set(event.subscriptions.map((s) => s.stream_id))
    const leaving = subscriptions.filter((s) => removed.has(s.stream_id))
    if (options.includeSubscribers) {
      for (const sub of leaving) sub.subscribers = (sub.subscribers ?? []).filter((id) => id !== options.userId)
      // Roost's `streams` carries subscribers too: the user leaves that copy's list as well.
      for (const stream of list<SubDict>(state, 'streams')) {
        if (removed.has(stream.stream_id) && stream.subscribers) stream.subscribers = stream.subscribers.filter((id) => id !== options.userId)
      }
    }
    state.unsubscribed = [...list<SubDict>(state, 'unsubscribed'), ...leaving]
    state.subscriptions = subscriptions.filter((s) => !removed.has(s.stream_id))
  } else if (event.op === 'update') {
    for (const sub of subscriptions) if (sub.stream_id === event.stream_id) sub[event.property] = event.value
  } else if (options.includeSubscribers) {
    const streamIds = new Set(event.stream_ids)
    for (const key of ['subscriptions', 'unsubscribed', 'never_subscribed', 'streams']) {
      for (const sub of list<SubDict>(state, key)) {
        if (!streamIds.has(sub.stream_id) || sub.subscribers === undefined) continue
        const current = new Set(sub.subscribers ?? [])
        for (const id of event.user_ids) {
          if (event.op === 'peer_add') current.add(id)
          else current.delete(id)
        }
        sub.subscribers = [...current].sort(ascending)
      }
    }
  }
}

function applyRealmUser(state: Obj, event: Static<typeof RealmUserEventSchema>, options: ClientOptions): void {
  // Upstream's raw_users: one map of every user with is_active; register splits it in two lists.
  if (!('realm_users' in state)) return
  const raw = new Map<number, UserRow>()
  for (const u of list<Obj>(state, 'realm_users')) raw.set(Number(u.user_id), { ...u, user_id: Number(u.user_id), is_active: true })
  for (const u of list<Obj>(state, 'realm_non_active_users')) raw.set(Number(u.user_id), { ...u, user_id: Number(u.user_id), is_active: false })
  const person = event.person
  const userId = person.user_id
  if (event.op === 'add') {
    // Upstream's apply_event: a client computing gravatar URLs itself keeps null for them.
    const gravatar = options.clientExtavatar && event.person.avatar_url?.startsWith('https://secure.gravatar.com/') === true
    raw.set(userId, { ...event.person, is_active: true, ...(gravatar ? { avatar_url: null } : {}), ...(event.person.is_bot ? {} : { profile_data: {} }) })
  } else if (event.op === 'remove') {
    // Upstream: the user leaves the list, or (without user_list_incomplete) becomes the "Unknown user" stand-in.
    if (options.userListIncomplete) raw.delete(userId)
    else if (raw.has(userId)) raw.set(userId, inaccessibleUser(userId, String(state.realm_bot_domain), event.person.full_name))
    if (options.includeSubscribers) {
      for (const sub of list<SubDict>(state, 'subscriptions')) sub.subscribers = (sub.subscribers ?? []).filter((id) => id !== userId)
    }
  } else {
    const update: Obj = { ...person }
    if (userId === options.userId) applyOwnPersonUpdate(state, update)
    const row = raw.get(userId)
    // Upstream's apply_event: a client computing gravatar URLs keeps null for users whose API email is their real one (not the stand-in).
    const standIn = `user${userId}@${String(state.realm_bot_domain)}`
    if (options.clientExtavatar && typeof update.avatar_url === 'string' && update.avatar_url.startsWith('https://secure.gravatar.com/') && row && row.email !== standIn) {
      update.avatar_url = null
      update.avatar_url_medium = null
    }
    if (row) {
      for (const field of Object.keys(row)) if (field in update && field !== 'custom_profile_field') row[field] = update[field]
      if (typeof update.role === 'number') {
        row.is_admin = update.role === ROLE_ADMIN || update.role === ROLE_OWNER
        row.is_owner = update.role === ROLE_OWNER
        row.is_guest = update.role === ROLE_GUEST
      }
      const field = update.custom_profile_field as { id: number; value: string | null; rendered_value?: string } | undefined
      if (field) {
        const data = { ...((row.profile_data as Record<string, unknown> | undefined) ?? {}) }
        if (field.value === null) delete data[String(field.id)]
        else data[String(field.id)] = field.rendered_value !== undefined ? { value: field.value, rendered_value: field.rendered_value } : { value: field.value }
        row.profile_data = data
      }
      if (typeof update.new_email === 'string') row.email = update.new_email
      if (update.is_active === false) {
        // Upstream's apply_event (level 303): a deactivated user is a member of no group, nor of any group-setting value.
        const dropFrom = (holder: Obj, key: string) => {
          const value = holder[key] as { direct_members?: number[] } | undefined
          if (value && typeof value === 'object' && Array.isArray(value.direct_members)) value.direct_members = value.direct_members.filter((id) => id !== userId)
        }
        for (const group of list<Obj & { members: number[] }>(state, 'realm_user_groups')) {
          group.members = group.members.filter((id) => id !== userId)
          for (const key of Object.keys(group)) if (key.startsWith('can_') && key.endsWith('_group')) dropFrom(group, key)
        }
        for (const key of Object.keys(state)) if (key.startsWith('realm_') && key.endsWith('_group')) dropFrom(state, key)
        for (const listKey of ['subscriptions', 'unsubscribed', 'never_subscribed', 'streams']) {
          for (const stream of list<Obj>(state, listKey)) for (const key of Object.keys(stream)) if (key.startsWith('can_') && key.endsWith('_group')) dropFrom(stream, key)
        }
      }
      if (update.is_active === false && options.includeSubscribers) {
        // Upstream's apply_event clears only `subscriptions`; its clients (and Roost's register) drop the user from every list.
        for (const key of ['subscriptions', 'unsubscribed', 'never_subscribed', 'streams']) {
          for (const sub of list<SubDict>(state, key)) if (sub.subscribers) sub.subscribers = sub.subscribers.filter((id) => id !== userId)
        }
      }
    }
  }
  const rows = [...raw.values()].sort((a, b) => a.user_id - b.user_id)
  const strip = ({ is_active: _active, ...rest }: UserRow): Obj => rest
  state.realm_users = rows.filter((u) => u.is_active).map(strip)
  state.realm_non_active_users = rows.filter((u) => !u.is_active).map(strip)
}

/** Upstream's stand-in for a user the client may no longer access (get_data_for_inaccessible_user), under the name the event gives. */
function inaccessibleUser(userId: number, domain: string, fullName: string): UserRow {
  return { ...inaccessibleUserDict(userId, domain), full_name: fullName }
}

/** Upstream's "is_me" branch of realm_user update: the register keys about the user. */
function applyOwnPersonUpdate(state: Obj, person: Obj): void {
  if ('avatar_url' in person && 'avatar_url' in state) {
    state.avatar_source = person.avatar_source
    state.avatar_url = person.avatar_url
    state.avatar_url_medium = person.avatar_url_medium
  }
  if (typeof person.role === 'number') {
    const role = person.role
    state.is_admin = role === ROLE_ADMIN || role === ROLE_OWNER
    state.is_owner = role === ROLE_OWNER
    state.is_moderator = role === ROLE_MODERATOR
    state.is_guest = role === ROLE_GUEST
    // Roost's policies: everyone but guests may create channels, subscribe others and invite.
    refreshOwnPermissionFlags(state)
  }
  for (const field of ['delivery_email', 'email', 'full_name', 'is_billing_admin']) if (field in person && field in state) state[field] = person[field]
  if (typeof person.new_email === 'string') state.email = person.new_email
}

function rawUnread(state: Obj): Map<number, UnreadEntry> {
  const summary = state.unread_msgs as Unread
  const mentions = new Set(summary.mentions)
  const out = new Map<number, UnreadEntry>()
  const add = (id: number, entry: Omit<UnreadEntry, 'id' | 'mentioned' | 'wildcard'>) => out.set(id, { id, ...entry, mentioned: mentions.has(id), wildcard: false })
  for (const s of summary.streams) for (const id of s.unread_message_ids) add(id, { streamId: s.stream_id, topic: s.topic, others: [] })
  for (const p of summary.pms) for (const id of p.unread_message_ids) add(id, { streamId: null, topic: '', others: p.other_user_id === state.user_id ? [] : [p.other_user_id] })
  for (const h of summary.huddles) {
    for (const id of h.unread_message_ids) add(id, { streamId: null, topic: '', others: h.user_ids_string.split(',').map(Number).filter((u) => u !== state.user_id) })
  }
  return out
}

function aggregateUnread(entries: Map<number, UnreadEntry>, state: Obj, userId: number, oldUnreadsMissing: boolean): Unread {
  const mutedStreams = new Set(list<SubDict>(state, 'subscriptions').concat(list<SubDict>(state, 'unsubscribed')).filter((s) => s.is_muted).map((s) => s.stream_id))
  const policies = new Map(
    list<{ stream_id: number; topic_name: string; visibility_policy: number }>(state, 'user_topics').map((t) => [`${t.stream_id}\u0000${t.topic_name.toLowerCase()}`, t.visibility_policy]),
  )
  const isMuted = (streamId: number, topic: string): boolean => {
    const policy = policies.get(`${streamId}\u0000${topic.toLowerCase()}`)
    if (policy !== undefined && policy !== VISIBILITY_INHERIT) return policy === VISIBILITY_MUTED
    return mutedStreams.has(streamId)
  }
  const streams = new Map<string, Unread['streams'][number]>()
  const pms = new Map<number, number[]>()
  const huddles = new Map<string, number[]>()
  const mentions: number[] = []
  let count = 0
  for (const entry of [...entries.values()].sort((a, b) => a.id - b.id)) {
    let muted = false
    if (entry.streamId !== null) {
      muted = isMuted(entry.streamId, entry.topic)
      const key = `${entry.streamId}\u0000${entry.topic}`
      const group = streams.get(key) ?? { stream_id: entry.streamId, topic: entry.topic, unread_message_ids: [] }
      group.unread_message_ids.push(entry.id)
      streams.set(key, group)
    } else if (entry.others.length <= 1) {
      const other = entry.others[0] ?? userId
      pms.set(other, [...(pms.get(other) ?? []), entry.id])
    } else {
      const key = [...entry.others, userId].sort(ascending).join(',')
      huddles.set(key, [...(huddles.get(key) ?? []), entry.id])
    }
    if (!muted) count++
    if (entry.mentioned || (entry.wildcard && !muted)) mentions.push(entry.id)
  }
  return {
    count,
    pms: [...pms].map(([other, ids]) => ({ other_user_id: other, sender_id: other, unread_message_ids: ids })),
    streams: [...streams.values()],
    huddles: [...huddles].map(([key, ids]) => ({ user_ids_string: key, unread_message_ids: ids })),
    mentions,
    old_unreads_missing: oldUnreadsMissing,
  }
}

/**
 * Upstream's client rule for the user's own permission flags of register: membership
 * (through subgroups) of the realm's group settings, guests never holding a setting that
 * refuses role:everyone (none of these accepts it). Needs realm_user_groups and the settings.
 */
function refreshOwnPermissionFlags(state: Obj): void {
  if (!('can_create_public_streams' in state) || !Array.isArray(state.realm_user_groups) || !('realm_can_add_subscribers_group' in state)) return
  const groups = state.realm_user_groups as { id: number; members: number[]; direct_subgroup_ids: number[] }[]
  const me = state.user_id as number
  const reached = new Set(groups.filter((g) => g.members.includes(me)).map((g) => g.id))
  for (let grew = true; grew; ) {
    grew = false
    for (const g of groups) if (!reached.has(g.id) && g.direct_subgroup_ids.some((id) => reached.has(id))) (reached.add(g.id), (grew = true))
  }
  const holds = (setting: string): boolean => {
    if (state.is_guest === true) return false
    const value = state[`realm_${setting}`] as number | { direct_members: number[]; direct_subgroups: number[] }
    if (typeof value === 'number') return reached.has(value)
    return value.direct_members.includes(me) || value.direct_subgroups.some((id) => reached.has(id))
  }
  const pub = holds('can_create_public_channel_group')
  const priv = holds('can_create_private_channel_group')
  const web = holds('can_create_web_public_channel_group')
  Object.assign(state, {
    can_create_streams: pub || priv || web,
    can_create_public_streams: pub,
    can_create_private_streams: priv,
    can_create_web_public_streams: web,
    can_subscribe_other_users: holds('can_add_subscribers_group'),
    can_invite_others_to_realm: holds('can_invite_users_group'),
  })
}
