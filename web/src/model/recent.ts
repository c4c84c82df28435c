// Recent conversations (upstream's "Recent conversations" view): one row per
// topic and per direct conversation, newest first, from the messages the app
// has loaded (the view fetches the newest page of all messages), the unread
// messages of register and recent_private_conversations.
//
// Rows are worked out again from that data on every change, so a deleted
// message simply stops counting: its row falls back to the newest loaded
// message left (time, senders, whether the user took part) and goes when
// nothing is left, as upstream recomputes a conversation from its loaded
// messages after a deletion.
import { isDmMuted } from './muted-users.js'
import { messageDmKey, type Narrow } from './narrow.js'
import { topicKey, type State } from './state.js'
import { unreadCounts, VISIBILITY_FOLLOWED, VISIBILITY_MUTED, VISIBILITY_UNMUTED } from './unread.js'

interface RowCommon {
  key: string
  narrow: Narrow
  /** The newest known message ID. */
  maxId: number
  unread: number
  /** The newest senders among the loaded messages, newest first. */
  senderIds: number[]
  /** Whether a loaded message of the conversation is the user's own (upstream's rule: only what the client has fetched). */
  participated: boolean
  /** Left out unless muted conversations are included: a muted topic, or a topic of a muted channel not unmuted or followed. */
  muted: boolean
}
export type RecentRow =
  | (RowCommon & { kind: 'topic'; streamId: number; topic: string })
  | (RowCommon & { kind: 'dm'; userIds: number[] })

/**
 * Which rows to show: every conversation, one channel's topics or direct
 * conversations only; unread ones only; those the user took part in only;
 * muted ones too.
 */
export interface RecentFilter { channel: 'all' | 'dm' | number; unreadOnly: boolean; participated: boolean; includeMuted: boolean }

/** At most this many senders are remembered per row (the newest). */
const SENDERS = 4

/**
 * Upstream's standard view: a topic muted by the user is muted; in a muted
 * channel every topic is, except those the user unmuted or follows.
 */
export function isConversationMuted(state: State, streamId: number, topic: string): boolean {
  const policy = state.userTopics.get(topicKey(streamId, topic))
  if (policy === VISIBILITY_MUTED) return true
  return state.subscriptions.get(streamId)?.is_muted === true && policy !== VISIBILITY_UNMUTED && policy !== VISIBILITY_FOLLOWED
}

export function recentConversations(state: State, filter: RecentFilter): RecentRow[] {
  const counts = unreadCounts(state)
  const rows = new Map<string, RecentRow>()
  const common = (key: string, id: number, unread: number) => ({ key, maxId: id, unread, senderIds: [], participated: false, muted: false })
  const seeTopic = (streamId: number, topic: string, id: number, senderId?: number) => {
    const key = `t:${topicKey(streamId, topic)}`
    let row = rows.get(key)
    if (!row) {
      row = { ...common(key, id, counts.byTopic.get(topicKey(streamId, topic)) ?? 0), kind: 'topic', narrow: { kind: 'topic', streamId, topic }, streamId, topic }
      row.muted = isConversationMuted(state, streamId, topic)
      rows.set(key, row)
    }
    if (id >= row.maxId && row.kind === 'topic') {
      row.maxId = id
      row.topic = topic
      row.narrow = { kind: 'topic', streamId, topic }
    }
    if (senderId !== undefined) addSender(row, senderId, state.selfId)
  }
  const seeDm = (key: string, id: number, senderId?: number) => {
    const rowKey = `d:${key}`
    let row = rows.get(rowKey)
    if (!row) {
      const userIds = key.split(',').map(Number)
      row = { ...common(rowKey, id, counts.byDm.get(key) ?? 0), kind: 'dm', narrow: { kind: 'dm', userIds }, userIds }
      rows.set(rowKey, row)
    }
    if (id > row.maxId) row.maxId = id
    if (senderId !== undefined) addSender(row, senderId, state.selfId)
  }
  // Newest first, so each row's senders are its newest ones.
  const loaded = [...state.messages.values()].sort((a, b) => b.id - a.id)
  for (const m of loaded) {
    if (m.type === 'stream' && m.stream_id !== undefined) seeTopic(m.stream_id, m.subject, m.id, m.sender_id)
    else if (m.type === 'private') seeDm(messageDmKey(m, state.selfId), m.id, m.sender_id)
  }
  for (const [id, entry] of state.unread) {
    if (entry.kind === 'stream') seeTopic(entry.streamId, entry.topic, id)
    else seeDm(entry.key, id)
  }
  for (const [key, maxId] of state.recentDms) seeDm(key, maxId)

  const shown = [...rows.values()].filter((row) => {
    if (filter.unreadOnly && row.unread === 0) return false
    if (filter.participated && !row.participated) return false
    // A conversation made only of muted users is left out, muted ones included or not, as upstream does.
    if (row.kind === 'dm') return (filter.channel === 'all' || filter.channel === 'dm') && !isDmMuted(state, row.key.slice(2))
    if (filter.channel === 'dm' || (typeof filter.channel === 'number' && filter.channel !== row.streamId)) return false
    if (!state.subscriptions.has(row.streamId)) return false
    if (!row.muted || filter.includeMuted) return true
    // A muted channel the reader chose shows its topics, all but those muted one by one.
    return filter.channel === row.streamId && state.userTopics.get(topicKey(row.streamId, row.topic)) !== VISIBILITY_MUTED
  })
  return shown.sort((a, b) => b.maxId - a.maxId)
}

function addSender(row: RecentRow, senderId: number, selfId: number): void {
  if (senderId === selfId) row.participated = true
  if (row.senderIds.length < SENDERS && !row.senderIds.includes(senderId)) row.senderIds.push(senderId)
}
