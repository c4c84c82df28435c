// Unread counts derived from State.unread: per channel, per topic, per
// direct conversation, mentions, and the total (muted channels and topics
// left out, as upstream counts them).
import { isDmMuted } from './muted-users.js'
import { topicKey, type State } from './state.js'

/** visibility_policy values of user_topics (0, inherit, is never stored). */
export const VISIBILITY_MUTED = 1
export const VISIBILITY_UNMUTED = 2
export const VISIBILITY_FOLLOWED = 3

export interface UnreadCounts {
  total: number
  mentions: number
  byStream: Map<number, number>
  byTopic: Map<string, number>
  byDm: Map<string, number>
}

export function isTopicMuted(state: State, streamId: number, topic: string): boolean {
  return state.userTopics.get(topicKey(streamId, topic)) === VISIBILITY_MUTED
}

export function unreadCounts(state: State): UnreadCounts {
  const counts: UnreadCounts = { total: 0, mentions: state.mentions.size, byStream: new Map(), byTopic: new Map(), byDm: new Map() }
  for (const entry of state.unread.values()) {
    if (entry.kind === 'dm') {
      counts.byDm.set(entry.key, (counts.byDm.get(entry.key) ?? 0) + 1)
      counts.total++
      continue
    }
    const key = topicKey(entry.streamId, entry.topic)
    counts.byTopic.set(key, (counts.byTopic.get(key) ?? 0) + 1)
    if (isTopicMuted(state, entry.streamId, entry.topic)) continue
    counts.byStream.set(entry.streamId, (counts.byStream.get(entry.streamId) ?? 0) + 1)
    if (!state.subscriptions.get(entry.streamId)?.is_muted) counts.total++
  }
  return counts
}

/** A channel's topics, newest first, from the loaded messages and the unread ones. */
export function topicsOf(state: State, streamId: number): { topic: string; maxId: number }[] {
  const topics = new Map<string, { topic: string; maxId: number }>()
  const see = (topic: string, id: number) => {
    const key = topic.toLowerCase()
    const old = topics.get(key)
    if (!old || old.maxId < id) topics.set(key, { topic, maxId: id })
  }
  for (const m of state.messages.values()) if (m.type === 'stream' && m.stream_id === streamId) see(m.subject, m.id)
  for (const [id, e] of state.unread) if (e.kind === 'stream' && e.streamId === streamId) see(e.topic, id)
  return [...topics.values()].sort((a, b) => b.maxId - a.maxId)
}

/** Direct conversations, newest first, from loaded and unread messages; those made only of muted users left out. */
export function dmConversations(state: State): { key: string; maxId: number }[] {
  const convs = new Map<string, number>()
  for (const m of state.messages.values()) {
    if (m.type !== 'private' || !Array.isArray(m.display_recipient)) continue
    const ids = m.display_recipient.map((r) => r.id).filter((id) => id !== state.selfId)
    const key = (ids.length > 0 ? ids.sort((a, b) => a - b) : [state.selfId]).join(',')
    convs.set(key, Math.max(convs.get(key) ?? 0, m.id))
  }
  for (const [id, e] of state.unread) if (e.kind === 'dm') convs.set(e.key, Math.max(convs.get(e.key) ?? 0, id))
  return [...convs].filter(([key]) => !isDmMuted(state, key)).map(([key, maxId]) => ({ key, maxId })).sort((a, b) => b.maxId - a.maxId)
}
