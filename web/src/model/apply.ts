// apply(state, lists, event): one case per event type the app registers for,
// so that state stays what a fresh POST /register would return
// (web/README in docs/web-client.md; checked by test/web/model.test.ts).
import type { AppEvent, FlagsEvent, UpdateMessageEvent, WireMessage } from './events.js'
import { dmKey, messageDmKey } from './narrow.js'
import { addToLists, refileInLists, removeFromLists, type Lists } from './lists.js'
import { applyPresenceEvent } from './presence.js'
import { forgetServerTopicMessages, seeServerTopic } from './unread.js'
import { addTypist, removeTypist, typingEventRecipient, typingKey } from './typing.js'
import { messageOf, personOf, topicKey, type GroupSetting, type State, type UnreadEntry } from './state.js'

const MENTION_FLAGS = ['mentioned', 'stream_wildcard_mentioned', 'topic_wildcard_mentioned']

export function apply(state: State, lists: Lists, event: AppEvent & { id?: number }): void {
  if (typeof event.id === 'number' && event.id > state.lastEventId) state.lastEventId = event.id
  switch (event.type) {
    case 'message': {
      const message = messageOf({ ...(event.message as WireMessage), flags: event.flags })
      state.messages.set(message.id, message)
      // A channel's first message: register reports it as first_message_id.
      const sub = message.stream_id !== undefined ? state.subscriptions.get(message.stream_id) : undefined
      if (sub && sub.first_message_id === null) sub.first_message_id = message.id
      if (message.type === 'stream' && message.stream_id !== undefined) seeServerTopic(state, message.stream_id, message.subject, message.id)
      if (message.type === 'private') {
        const key = messageDmKey(message, state.selfId)
        if ((state.recentDms.get(key) ?? 0) < message.id) state.recentDms.set(key, message.id)
      }
      if (!message.flags.includes('read')) state.unread.set(message.id, unreadEntryOf(message, state.selfId))
      if (!message.flags.includes('read') && message.flags.some((f) => MENTION_FLAGS.includes(f))) state.mentions.add(message.id)
      addToLists(lists, message, state.selfId)
      return
    }
    case 'update_message':
      return applyUpdate(state, lists, event)
    case 'delete_message': {
      const ids = 'message_ids' in event ? event.message_ids : [event.message_id]
      forgetRecentDms(state, ids)
      if (event.message_type === 'stream') forgetServerTopicMessages(state, event.stream_id, event.topic, ids)
      for (const id of ids) {
        state.messages.delete(id)
        state.unread.delete(id)
        state.mentions.delete(id)
      }
      removeFromLists(lists, ids)
      return
    }
    case 'update_message_flags':
      return applyFlags(state, lists, event)
    case 'reaction': {
      const message = state.messages.get(event.message_id)
      if (!message) return
      // Changed messages, subscriptions and people are replaced, never mutated: views compare by identity.
      const same = (r: { user_id: number; emoji_code: string; reaction_type: string }) =>
        r.user_id === event.user_id && r.emoji_code === event.emoji_code && r.reaction_type === event.reaction_type
      if (event.op === 'add' && !message.reactions.some(same)) {
        const reaction = { emoji_name: event.emoji_name, emoji_code: event.emoji_code, reaction_type: event.reaction_type, user_id: event.user_id }
        state.messages.set(message.id, { ...message, reactions: [...message.reactions, reaction] })
      } else if (event.op === 'remove') state.messages.set(message.id, { ...message, reactions: message.reactions.filter((r) => !same(r)) })
      return
    }
    case 'typing': {
      // A start's expiry is timed by lib/typing.ts (watchTypists).
      const key = typingKey(typingEventRecipient(event), state.selfId)
      if (event.op === 'start') addTypist(state, key, event.sender.user_id)
      else removeTypist(state, key, event.sender.user_id)
      return
    }
    case 'stream': {
      if (event.op === 'delete') for (const s of event.streams) state.subscriptions.delete(s.stream_id)
      if (event.op !== 'update') return
      const old = state.subscriptions.get(event.stream_id)
      if (!old) return
      const sub = { ...old }
      state.subscriptions.set(sub.stream_id, sub)
      const record = sub as unknown as Record<string, unknown>
      if (event.property in record) record[event.property] = event.value
      if (event.rendered_description !== undefined) sub.rendered_description = event.rendered_description
      if (event.history_public_to_subscribers !== undefined) sub.history_public_to_subscribers = event.history_public_to_subscribers
      if (event.is_web_public !== undefined) sub.is_web_public = event.is_web_public
      return
    }
    case 'subscription': {
      if (event.op === 'add') for (const s of event.subscriptions) state.subscriptions.set(s.stream_id, s)
      else if (event.op === 'remove') for (const s of event.subscriptions) state.subscriptions.delete(s.stream_id)
      else if (event.op === 'update') {
        const old = state.subscriptions.get(event.stream_id)
        if (!old) return
        const sub = { ...old }
        state.subscriptions.set(sub.stream_id, sub)
        ;(sub as unknown as Record<string, unknown>)[event.property] = event.value
        if (event.property === 'in_home_view') sub.is_muted = !event.value
        if (event.property === 'is_muted') sub.in_home_view = !event.value
      } else {
        for (const id of event.stream_ids) {
          const old = state.subscriptions.get(id)
          if (!old?.subscribers) continue
          const sub = { ...old }
          state.subscriptions.set(id, sub)
          const set = new Set<number>(sub.subscribers as number[])
          for (const u of event.user_ids) if (event.op === 'peer_add') set.add(u)
          else set.delete(u)
          sub.subscribers = [...set].sort((a, b) => a - b)
        }
      }
      return
    }
    case 'realm_user': {
      if (event.op === 'add') state.users.set(event.person.user_id, personOf(event.person))
      else if (event.op === 'remove') state.users.delete(event.person.user_id)
      else {
        const old = state.users.get(event.person.user_id)
        if (!old) return
        const user = { ...old }
        state.users.set(user.id, user)
        const p = event.person as Record<string, unknown>
        if (typeof p.full_name === 'string') user.fullName = p.full_name
        if (typeof p.new_email === 'string') user.email = p.new_email
        if ('delivery_email' in p) user.deliveryEmail = (p.delivery_email as string | null) ?? null
        if ('avatar_url' in p) user.avatarUrl = (p.avatar_url as string | null) ?? null
        if (typeof p.is_active === 'boolean') user.isActive = p.is_active
        if (typeof p.role === 'number') user.role = p.role
      }
      return
    }
    case 'scheduled_messages':
      // Replaced, never mutated: the view compares by identity.
      if (event.op === 'add') for (const m of event.scheduled_messages) state.scheduledMessages.set(m.scheduled_message_id, m)
      else if (event.op === 'update') state.scheduledMessages.set(event.scheduled_message.scheduled_message_id, event.scheduled_message)
      else state.scheduledMessages.delete(event.scheduled_message_id)
      return
    case 'muted_users':
      // The whole list each time: replaced, so views comparing by identity see the change.
      state.mutedUsers = new Map(event.muted_users.map((m) => [m.id, m.timestamp]))
      return
    case 'user_status': {
      const status = { ...(state.userStatus.get(event.user_id) ?? {}) }
      if (event.away !== undefined) status.away = event.away
      if (event.status_text !== undefined) status.status_text = event.status_text
      if (event.emoji_name !== undefined) {
        status.emoji_name = event.emoji_name
        status.emoji_code = event.emoji_code
        status.reaction_type = event.reaction_type
      }
      // A status with nothing set is absent from a fresh register.
      for (const [k, v] of Object.entries(status)) if (v === '' || v === false || v === undefined) delete (status as Record<string, unknown>)[k]
      if (status.emoji_name === undefined) {
        delete status.emoji_code
        delete status.reaction_type
      }
      if (Object.keys(status).length === 0) state.userStatus.delete(event.user_id)
      else state.userStatus.set(event.user_id, status)
      return
    }
    case 'presence':
      applyPresenceEvent(state, event.user_id, event.presence, event.server_timestamp)
      return
    case 'user_settings':
      state.settings[event.property] = event.value
      return
    case 'user_topic': {
      const key = topicKey(event.stream_id, event.topic_name)
      if (event.visibility_policy === 0) state.userTopics.delete(key)
      else state.userTopics.set(key, event.visibility_policy)
      return
    }
    case 'drafts':
      if (event.op === 'add') for (const d of event.drafts) state.drafts.set(d.id, d)
      else if (event.op === 'update') state.drafts.set(event.draft.id, event.draft)
      else state.drafts.delete(event.draft_id)
      return
    case 'realm_emoji':
      state.realmEmoji = new Map(Object.entries(event.realm_emoji))
      return
    case 'alert_words':
      state.alertWords = [...event.alert_words]
      return
    case 'realm':
      if (event.op === 'update') applyRealmSetting(state, event.property, event.value)
      else if (event.op === 'update_dict') for (const [name, value] of Object.entries(event.data)) applyRealmSetting(state, name, value)
      return
    case 'user_group': {
      if (event.op === 'add') {
        state.groups.set(event.group.id, { members: [...event.group.members].sort((a, b) => a - b), subgroups: [...event.group.direct_subgroup_ids].sort((a, b) => a - b) })
        return
      }
      if (event.op === 'remove') {
        state.groups.delete(event.group_id)
        return
      }
      const old = state.groups.get(event.group_id)
      if (!old || event.op === 'update') return
      const change = (list: number[], ids: number[], add: boolean) => {
        const set = new Set(list)
        for (const id of ids) if (add) set.add(id)
        else set.delete(id)
        return [...set].sort((a, b) => a - b)
      }
      if ('user_ids' in event) state.groups.set(event.group_id, { ...old, members: change(old.members, event.user_ids, event.op === 'add_members') })
      else if ('direct_subgroup_ids' in event) state.groups.set(event.group_id, { ...old, subgroups: change(old.subgroups, event.direct_subgroup_ids, event.op === 'add_subgroups') })
      return
    }
    case 'heartbeat':
      return
  }
}

/** One organization setting of a `realm` update or update_dict event (named without the realm_ prefix of register). */
function applyRealmSetting(state: State, name: string, value: unknown): void {
  if (name === 'name' && typeof value === 'string') state.realmName = value
  else if (name === 'allow_message_editing' && typeof value === 'boolean') state.allowEditing = value
  else if (name === 'message_content_edit_limit_seconds') state.editLimitSeconds = (value as number | null) ?? null
  else if (name === 'message_content_delete_limit_seconds') state.deleteLimitSeconds = (value as number | null) ?? null
  else if (name === 'can_delete_own_message_group') state.canDeleteOwn = value as GroupSetting
  else if (name === 'can_delete_any_message_group') state.canDeleteAny = value as GroupSetting
}

/**
 * Deleted messages that were a direct conversation's newest: the newest
 * loaded message left in it takes their place. With none loaded, the
 * conversation is taken out and marked in emptiedDms, for the server to say
 * whether older messages remain (a fresh register gives the newest in the
 * database, which the app may not have loaded): upstream's direct message
 * list removes such a conversation and asks the server the same way.
 */
function forgetRecentDms(state: State, ids: number[]): void {
  const gone = new Set(ids)
  for (const [key, maxId] of state.recentDms) {
    if (!gone.has(maxId)) continue
    let newest = 0
    for (const m of state.messages.values()) if (m.type === 'private' && !gone.has(m.id) && m.id > newest && messageDmKey(m, state.selfId) === key) newest = m.id
    if (newest > 0) state.recentDms.set(key, newest)
    else {
      state.recentDms.delete(key)
      state.emptiedDms.add(key)
    }
  }
}

function unreadEntryOf(message: { type: string; stream_id?: number; subject: string; display_recipient: string | { id: number }[] }, selfId: number): UnreadEntry {
  if (message.type === 'stream') return { kind: 'stream', streamId: message.stream_id ?? 0, topic: message.subject }
  return { kind: 'dm', key: messageDmKey(message as Parameters<typeof messageDmKey>[0], selfId) }
}

const RESOLVED_PREFIX = '✔ '
/** Upstream's topic_resolve_toggled: the topics differ only by the resolved prefix. */
const isResolveToggle = (from: string, to: string): boolean =>
  (to.startsWith(RESOLVED_PREFIX) && !from.startsWith(RESOLVED_PREFIX) && to.slice(RESOLVED_PREFIX.length) === from) ||
  (from.startsWith(RESOLVED_PREFIX) && !to.startsWith(RESOLVED_PREFIX) && from.replace(/^[✔ ]+/, '') === to)

function applyUpdate(state: State, lists: Lists, event: UpdateMessageEvent): void {
  const first = state.messages.get(event.message_id)
  if (first && event.rendered_content !== undefined) {
    state.messages.set(first.id, { ...first, content: event.rendered_content, last_edit_timestamp: event.rendering_only ? first.last_edit_timestamp : event.edit_timestamp })
  }
  const moved = event.subject !== undefined || event.new_stream_id !== undefined
  if (!moved) return
  // The channels' topic lists (State.streamTopics): the moved messages leave their topic for another.
  const from = event.orig_subject ?? first?.subject
  if (event.stream_id !== undefined && from !== undefined && event.message_ids.length > 0) {
    if (event.propagate_mode === 'change_all') state.streamTopics.get(event.stream_id)?.delete(from.toLowerCase())
    else forgetServerTopicMessages(state, event.stream_id, from, event.message_ids)
    seeServerTopic(state, event.new_stream_id ?? event.stream_id, event.subject ?? from, Math.max(...event.message_ids))
  }
  const resolveOnly =
    event.new_stream_id === undefined && event.subject !== undefined && event.orig_subject !== undefined && isResolveToggle(event.orig_subject, event.subject)
  for (const id of event.message_ids) {
    const entry = state.unread.get(id)
    if (entry?.kind === 'stream') {
      state.unread.set(id, { kind: 'stream', streamId: event.new_stream_id ?? entry.streamId, topic: event.subject ?? entry.topic })
    }
    const old = state.messages.get(id)
    if (!old) continue
    const message = { ...old }
    state.messages.set(id, message)
    if (event.subject !== undefined) message.subject = event.subject
    if (event.new_stream_id !== undefined) {
      message.stream_id = event.new_stream_id
      const sub = state.subscriptions.get(event.new_stream_id)
      if (sub) message.display_recipient = sub.name
    }
    // As the server's last_moved_timestamp: a resolve or unresolve alone is no move.
    if (!resolveOnly) message.last_moved_timestamp = event.edit_timestamp
    refileInLists(lists, message, state.selfId)
  }
}

function applyFlags(state: State, lists: Lists, event: FlagsEvent): void {
  if (event.flag === 'read' && event.op === 'add') {
    if (event.all) {
      state.unread.clear()
      state.mentions.clear()
    }
    for (const id of event.messages) {
      state.unread.delete(id)
      state.mentions.delete(id)
    }
  } else if (event.flag === 'read' && event.op === 'remove') {
    for (const id of event.messages) {
      const details = event.message_details?.[String(id)]
      if (!details) continue
      state.unread.set(id, details.type === 'stream' ? { kind: 'stream', streamId: details.stream_id, topic: details.topic } : { kind: 'dm', key: dmKey(details.user_ids, state.selfId) })
      if (details.mentioned) state.mentions.add(id)
    }
  }
  const ids = event.all ? [...state.messages.keys()] : event.messages
  for (const id of ids) {
    const old = state.messages.get(id)
    if (!old) continue
    const has = old.flags.includes(event.flag)
    if (has === (event.op === 'add')) continue
    const message = { ...old, flags: event.op === 'add' ? [...old.flags, event.flag] : old.flags.filter((f) => f !== event.flag) }
    state.messages.set(id, message)
    if (event.flag === 'starred') refileInLists(lists, message, state.selfId)
  }
}
