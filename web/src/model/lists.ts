// The loaded part of a narrow's messages: IDs in order and whether the
// oldest and newest ends were reached. Fetches (api/messages.ts) merge pages
// in; live events append only when the newest end is loaded.
import { matches, narrowKey, type Narrow } from './narrow.js'
import type { Message, State } from './state.js'

export interface MessageList {
  narrow: Narrow
  ids: number[]
  foundOldest: boolean
  foundNewest: boolean
  /** The first unread message when the list was opened (the view scrolls to it). */
  firstUnreadId?: number
}

export type Lists = Map<string, MessageList>

export function emptyList(narrow: Narrow): MessageList {
  return { narrow, ids: [], foundOldest: false, foundNewest: false }
}

/** Merges a page of GET /messages into the list (IDs sorted, no duplicates). */
export function mergePage(state: State, list: MessageList, messages: Message[], page: { foundOldest?: boolean; foundNewest?: boolean }): void {
  for (const m of messages) state.messages.set(m.id, m)
  const ids = new Set(list.ids)
  for (const m of messages) ids.add(m.id)
  list.ids = [...ids].sort((a, b) => a - b)
  if (page.foundOldest) list.foundOldest = true
  if (page.foundNewest) list.foundNewest = true
}

/** A new message: appended to every loaded list it belongs to whose newest end is loaded. */
export function addToLists(lists: Lists, message: Message, selfId: number): void {
  for (const list of lists.values()) {
    if (!list.foundNewest || matches(list.narrow, message, selfId) !== true) continue
    const last = list.ids[list.ids.length - 1]
    if (last === undefined || last < message.id) list.ids.push(message.id)
    else if (!list.ids.includes(message.id)) list.ids = [...list.ids, message.id].sort((a, b) => a - b)
  }
}

export function removeFromLists(lists: Lists, ids: Iterable<number>): void {
  const gone = new Set(ids)
  for (const list of lists.values()) if (list.ids.some((id) => gone.has(id))) list.ids = list.ids.filter((id) => !gone.has(id))
}

/** After a move or a flag change: lists that no longer match drop the message; lists that now match and are fully loaded gain it. */
export function refileInLists(lists: Lists, message: Message, selfId: number): void {
  for (const list of lists.values()) {
    const belongs = matches(list.narrow, message, selfId)
    if (belongs === undefined) continue
    const has = list.ids.includes(message.id)
    if (has && !belongs) list.ids = list.ids.filter((id) => id !== message.id)
    else if (!has && belongs && list.foundNewest && list.foundOldest) list.ids = [...list.ids, message.id].sort((a, b) => a - b)
  }
}

export { narrowKey }
