// Scheduled messages in the app: where each is going (the narrow its compose
// box is in), its time as a datetime-local value, and the one being edited
// in a compose box (restored there from the scheduled messages view, saved
// with PATCH /scheduled_messages/{id} rather than sent), as upstream does.
import type { WireScheduledMessage } from '../model/events.js'
import { narrowToHash, type Narrow } from '../model/narrow.js'

export function scheduledNarrow(m: WireScheduledMessage, selfId: number): Narrow {
  if (m.type === 'stream') return { kind: 'topic', streamId: typeof m.to === 'number' ? m.to : (m.to[0] ?? 0), topic: m.topic ?? '' }
  const others = (typeof m.to === 'number' ? [m.to] : m.to).filter((id) => id !== selfId)
  return { kind: 'dm', userIds: others.length > 0 ? others : [selfId] }
}

/** A UNIX time as an `<input type="datetime-local">` value, in the browser's time zone. */
export function localInputValue(timestamp: number): string {
  const d = new Date(timestamp * 1000)
  const p = (n: number) => String(n).padStart(2, '0')
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())}T${p(d.getHours())}:${p(d.getMinutes())}`
}
export const fromInputValue = (value: string) => Math.floor(new Date(value).getTime() / 1000)

export interface Editing { id: number; content: string; at: string; topic: string }

let pending: { hash: string; editing: Editing } | undefined

/** Opens a scheduled message in its conversation's compose box: returns the address to go to. */
export function editInCompose(m: WireScheduledMessage, selfId: number): string {
  const hash = narrowToHash(scheduledNarrow(m, selfId))
  pending = { hash, editing: { id: m.scheduled_message_id, content: m.content, at: localInputValue(m.scheduled_delivery_timestamp), topic: m.topic ?? '' } }
  return hash
}

/** The compose box of a narrow takes the scheduled message waiting for it, once. */
export function takeEditing(narrow: Narrow): Editing | undefined {
  if (!pending || pending.hash !== narrowToHash(narrow)) return undefined
  const { editing } = pending
  pending = undefined
  return editing
}
