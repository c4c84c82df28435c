// Message calls: fetch a page around an anchor, send, edit, delete, flags,
// reactions, render a preview.
import type { WireMessage } from '../model/events.js'
import { narrowTerms, type Narrow } from '../model/narrow.js'
import { call } from './client.js'

export interface Page { messages: WireMessage[]; found_oldest: boolean; found_newest: boolean; found_anchor: boolean; anchor: number }

export function fetchMessages(narrow: Narrow, anchor: number | 'newest' | 'oldest' | 'first_unread', before: number, after: number): Promise<Page> {
  return call<Page>('GET', '/messages', { narrow: narrowTerms(narrow), anchor, num_before: before, num_after: after, apply_markdown: true, client_gravatar: false })
}

/** One message (`GET /messages/{id}`): rejects when it does not exist or the user may not see it. */
export function fetchMessage(id: number): Promise<WireMessage> {
  return call<{ message: WireMessage }>('GET', `/messages/${id}`, { apply_markdown: true }).then((r) => r.message)
}

export type Destination = { type: 'stream'; streamId: number; topic: string } | { type: 'direct'; userIds: number[] }

export function sendMessage(to: Destination, content: string, localId?: string): Promise<{ id: number }> {
  const params =
    to.type === 'stream'
      ? { type: 'stream', to: to.streamId, topic: to.topic, content }
      : { type: 'direct', to: to.userIds, content }
  return call<{ id: number }>('POST', '/messages', { ...params, local_id: localId, queue_id: undefined })
}

export function scheduleMessage(to: Destination, content: string, at: number): Promise<unknown> {
  const params = to.type === 'stream' ? { type: 'stream', to: to.streamId, topic: to.topic } : { type: 'direct', to: to.userIds }
  return call('POST', '/scheduled_messages', { ...params, content, scheduled_delivery_timestamp: at })
}

export const editMessage = (id: number, content: string) => call('PATCH', `/messages/${id}`, { content })
export const deleteMessage = (id: number) => call('DELETE', `/messages/${id}`)
export const rawContent = (id: number) => call<{ raw_content: string }>('GET', `/messages/${id}`, { apply_markdown: false }).then((r) => (r as unknown as { message: { content: string } }).message.content)
export const setFlag = (ids: number[], flag: string, op: 'add' | 'remove') => call('POST', '/messages/flags', { messages: ids, flag, op })
/** Adds or removes the user's reaction: the emoji by name, code and type (a custom emoji's code is its ID). */
export const react = (id: number, emoji: { name: string; code: string; type: string }, op: 'add' | 'remove') =>
  call(op === 'add' ? 'POST' : 'DELETE', `/messages/${id}/reactions`, { emoji_name: emoji.name, emoji_code: emoji.code, reaction_type: emoji.type })
export const renderPreview = (content: string) => call<{ rendered: string }>('POST', '/messages/render', { content }).then((r) => r.rendered)
export const setTyping = (to: Destination, op: 'start' | 'stop') =>
  call('POST', '/typing', to.type === 'stream' ? { type: 'stream', stream_id: to.streamId, topic: to.topic, op } : { type: 'direct', to: to.userIds, op })
/** A channel's topics, newest first (`GET /users/me/{stream_id}/topics`). */
export const fetchStreamTopics = (streamId: number) => call<{ topics: { name: string; max_id: number }[] }>('GET', `/users/me/${streamId}/topics`).then((r) => r.topics)

/** A scheduled message's new content, recipient or time (`PATCH /scheduled_messages/{id}`); a scheduled_messages event updates the store. */
export function editScheduled(id: number, changes: { to?: Destination; content?: string; at?: number }): Promise<unknown> {
  const to = changes.to
  const params = to === undefined ? {} : to.type === 'stream' ? { type: 'stream', to: to.streamId, topic: to.topic } : { type: 'direct', to: to.userIds }
  return call('PATCH', `/scheduled_messages/${id}`, { ...params, content: changes.content, scheduled_delivery_timestamp: changes.at })
}
export const deleteScheduled = (id: number) => call('DELETE', `/scheduled_messages/${id}`)
