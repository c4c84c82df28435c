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

/** A channel's topics, newest first: the server's list (State.streamTopics), the loaded messages and the unread ones. */
export function topicsOf(state: State, streamId: number): { topic: string; maxId: number }[] {
  const topics = new Map<string, { topic: string; maxId: number }>()
  const see = (topic: string, id: number) => {
    const key = topic.toLowerCase()
    const old = topics.get(key)
    if (!old || old.maxId < id) topics.set(key, { topic, maxId: id })
  }
  for (const t of state.streamTopics.get(streamId)?.values() ?? []) see(t.topic, t.maxId)
  for (const m of state.messages.values()) if (m.type === 'stream' && m.stream_id === streamId) see(m.subject, m.id)
  for (const [id, e] of state.unread) if (e.kind === 'stream' && e.streamId === streamId) see(e.topic, id)
  return [...topics.values()].sort((a, b) => b.maxId - a.maxId)
}

/** Direct conversations, newest first: register's recent_private_conversations (State.recentDms), loaded and unread messages; those made only of muted users left out. */
export function dmConversations(state: State): { key: string; maxId: number }[] {
  const convs = new Map<string, number>()
  for (const m of state.messages.values()) {
    if (m.type !== 'private' || !Array.isArray(m.display_recipient)) continue
    const ids = m.display_recipient.map((r) => r.id).filter((id) => id !== state.selfId)
    const key = (ids.length > 0 ? ids.sort((a, b) => a - b) : [state.selfId]).join(',')
    convs.set(key, Math.max(convs.get(key) ?? 0, m.id))
  }
  for (const [key, maxId] of state.recentDms) convs.set(key, Math.max(convs.get(key) ?? 0, maxId))
  for (const [id, e] of state.unread) if (e.kind === 'dm') convs.set(e.key, Math.max(convs.get(e.key) ?? 0, id))
  return [...convs].filter(([key]) => !isDmMuted(state, key)).map(([key, maxId]) => ({ key, maxId })).sort((a, b) => b.maxId - a.maxId)
}

/** Records a topic's message in a fetched channel's list (State.streamTopics); nothing for a channel not fetched. */
export function seeServerTopic(state: State, streamId: number, topic: string, id: number): void {
  const topics = state.streamTopics.get(streamId)
  if (!topics) return
  const key = topic.toLowerCase()
  const old = topics.get(key)
  if (!old || old.maxId < id) topics.set(key, { topic, maxId: id })
}

/**
 * Messages gone from a fetched channel's topic (deleted or moved away): a
 * topic whose newest message went takes the newest loaded message left in it;
 * with none loaded it is dropped and the channel marked for fetching again
 * (the server knows whether older messages remain).
 */
export function forgetServerTopicMessages(state: State, streamId: number, topic: string, ids: readonly number[]): void {
  const topics = state.streamTopics.get(streamId)
  const key = topic.toLowerCase()
  const entry = topics?.get(key)
  if (!topics || !entry || !ids.includes(entry.maxId)) return
  const gone = new Set(ids)
  let newest = 0
  for (const m of state.messages.values()) {
    if (m.type === 'stream' && m.stream_id === streamId && !gone.has(m.id) && m.id > newest && m.subject.toLowerCase() === key) newest = m.id
  }
  if (newest > 0) topics.set(key, { topic: entry.topic, maxId: newest })
  else {
    topics.delete(key)
    state.staleTopics.add(streamId)
  }
}
