// What the service worker (sw.ts) shows for a Web Push payload: Roost's
// pushes carry upstream's `data` payload (docs/notifications.md). A message
// becomes a notification whose click opens its conversation; a removal
// notice names the messages whose notifications are closed.

// The app's addresses of a topic and a direct conversation, as narrowToHash
// (narrow.ts) writes them (the unit test checks they agree). Written here so
// that the service worker imports nothing the page's bundle shares: it stays
// one classic script.
const topicHash = (streamId: number, topic: string) => `#channel/${streamId}/topic/${encodeURIComponent(topic)}`
const dmHash = (userIds: number[]) => `#dm/${[...userIds].sort((a, b) => a - b).join(',')}`

export interface PushPayload {
  event?: string
  user_id?: number
  sender_id?: number
  sender_full_name?: string
  sender_avatar_url?: string
  recipient_type?: string
  stream?: string
  stream_id?: number
  topic?: string
  pm_users?: string
  zulip_message_id?: number
  zulip_message_ids?: string
  content?: string
}

export interface PushNotice { title: string; body: string; tag: string; messageId: number; hash: string; icon?: string }

export function noticeFor(p: PushPayload): PushNotice | undefined {
  if (p.event !== 'message' || typeof p.zulip_message_id !== 'number') return undefined
  const sender = p.sender_full_name ?? ''
  const content = p.content ?? ''
  const base = { tag: `roost-${p.zulip_message_id}`, messageId: p.zulip_message_id, icon: p.sender_avatar_url }
  if (p.recipient_type === 'stream' && typeof p.stream_id === 'number') {
    return { ...base, title: `#${p.stream ?? ''} > ${p.topic ?? ''}`, body: `${sender}: ${content}`, hash: topicHash(p.stream_id, p.topic ?? '') }
  }
  if (typeof p.sender_id !== 'number') return undefined
  const group = (p.pm_users ?? '').split(',').filter(Boolean).map(Number).filter((id) => Number.isInteger(id) && id !== p.user_id)
  const userIds = group.length > 1 ? group : [p.sender_id]
  return { ...base, title: group.length > 1 ? `${sender} (group)` : sender, body: content, hash: dmHash(userIds) }
}

/** The messages a removal notice (event `remove`) is about. */
export function removedMessageIds(p: PushPayload): number[] {
  if (p.event !== 'remove') return []
  const ids = (p.zulip_message_ids ?? '').split(',').filter(Boolean).map(Number)
  if (typeof p.zulip_message_id === 'number') ids.push(p.zulip_message_id)
  return [...new Set(ids.filter((id) => Number.isInteger(id)))]
}
