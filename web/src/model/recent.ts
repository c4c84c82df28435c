// Recent conversations (upstream's "Recent conversations" view): one row per
// topic and per direct conversation, newest first, from the messages the app
// has loaded (the view fetches the newest page of all messages), the unread
// messages of register and recent_private_conversations.
import { messageDmKey, type Narrow } from './narrow.js'
import { topicKey, type State } from './state.js'
import { isTopicMuted, unreadCounts } from './unread.js'

export type RecentRow =
  | { kind: 'topic'; key: string; narrow: Narrow; streamId: number; topic: string; maxId: number; unread: number; senderIds: number[] }
  | { kind: 'dm'; key: string; narrow: Narrow; userIds: number[]; maxId: number; unread: number; senderIds: number[] }

/** Which rows to show: every conversation, one channel's topics or direct conversations only; unread ones only. */
export interface RecentFilter { channel: 'all' | 'dm' | number; unreadOnly: boolean }

/** At most this many senders are remembered per row (the newest). */
const SENDERS = 4

export function recentConversations(state: State, filter: RecentFilter): RecentRow[] {
  const counts = unreadCounts(state)
  const rows = new Map<string, RecentRow>()
  const seeTopic = (streamId: number, topic: string, id: number, senderId?: number) => {
    const key = `t:${topicKey(streamId, topic)}`
    let row = rows.get(key)
    if (!row) {
      row = { kind: 'topic', key, narrow: { kind: 'topic', streamId, topic }, streamId, topic, maxId: id, unread: counts.byTopic.get(topicKey(streamId, topic)) ?? 0, senderIds: [] }
      rows.set(key, row)
    }
    if (id >= row.maxId && row.kind === 'topic') {
      row.maxId = id
      row.topic = topic
      row.narrow = { kind: 'topic', streamId, topic }
    }
    if (senderId !== undefined) addSender(row, senderId)
  }
  const seeDm = (key: string, id: number, senderId?: number) => {
    const rowKey = `d:${key}`
    let row = rows.get(rowKey)
    if (!row) {
      const userIds = key.split(',').map(Number)
      row = { kind: 'dm', key: rowKey, narrow: { kind: 'dm', userIds }, userIds, maxId: id, unread: counts.byDm.get(key) ?? 0, senderIds: [] }
      rows.set(rowKey, row)
    }
    if (id > row.maxId) row.maxId = id
    if (senderId !== undefined) addSender(row, senderId)
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
    if (row.kind === 'dm') return filter.channel === 'all' || filter.channel === 'dm'
    if (filter.channel === 'dm' || (typeof filter.channel === 'number' && filter.channel !== row.streamId)) return false
    const sub = state.subscriptions.get(row.streamId)
    if (!sub) return false
    // Muted channels and topics are left out, unless the reader asked for that channel.
    return filter.channel === row.streamId ? !isTopicMuted(state, row.streamId, row.topic) : !sub.is_muted && !isTopicMuted(state, row.streamId, row.topic)
  })
  return shown.sort((a, b) => b.maxId - a.maxId)
}

function addSender(row: RecentRow, senderId: number): void {
  if (row.senderIds.length < SENDERS && !row.senderIds.includes(senderId)) row.senderIds.push(senderId)
}
