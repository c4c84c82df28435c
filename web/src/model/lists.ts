// The loaded part of a narrow's messages: IDs in order and whether the
// oldest and newest ends were reached. Fetches (api/messages.ts) merge pages
// in; live events append only when the newest end is loaded.
import { matches, messageHash, narrowKey, type Narrow } from './narrow.js'
import type { Message, State } from './state.js'

export interface MessageList {
  narrow: Narrow
  ids: number[]
  foundOldest: boolean
  foundNewest: boolean
  /** The first unread message when the list was opened (the view scrolls to it). */
  firstUnreadId?: number
  /** The message a link opened the list at (fetched around it; the view scrolls to it). */
  near?: number
}

export type Lists = Map<string, MessageList>

export function emptyList(narrow: Narrow, near?: number): MessageList {
  return near === undefined ? { narrow, ids: [], foundOldest: false, foundNewest: false } : { narrow, ids: [], foundOldest: false, foundNewest: false, near }
}

/**
 * The key a list is kept under: its narrow's, and for a list opened at a
 * linked message the link's. A list opened at a message is a list of its own
 * (its loaded IDs are one run around the message, which need not meet the
 * conversation's other loaded run), as upstream makes a new list for it.
 */
export function listKey(narrow: Narrow, near?: number): string {
  return near === undefined ? narrowKey(narrow) : messageHash(narrow, near)
}

/** The index of the first of the sorted `ids` that is not below `id` (`ids.length` when all are). */
export function lowerBound(ids: readonly number[], id: number): number {
  let lo = 0
  let hi = ids.length
  while (lo < hi) {
    const mid = (lo + hi) >>> 1
    if (ids[mid]! < id) lo = mid + 1
    else hi = mid
  }
  return lo
}

/**
 * Merges a page of GET /messages into the list (IDs sorted, no duplicates).
 * The IDs older or newer than everything loaded (a page fetched by
 * scrolling, which holds its anchor too) are joined at the list's ends;
 * the list is sorted again only when a page brings IDs between loaded ones.
 */
export function mergePage(state: State, list: MessageList, messages: Message[], page: { foundOldest?: boolean; foundNewest?: boolean }): void {
  for (const m of messages) state.messages.set(m.id, m)
  const first = list.ids[0] ?? Infinity
  const last = list.ids[list.ids.length - 1] ?? -Infinity
  const older: number[] = []
  const newer: number[] = []
  let between = false
  for (const { id } of messages) {
    if (id < first) older.push(id)
    else if (id > last) newer.push(id)
    else if (list.ids[lowerBound(list.ids, id)] !== id) between = true
  }
  if (between) list.ids = [...new Set([...list.ids, ...messages.map((m) => m.id)])].sort((a, b) => a - b)
  else if (older.length > 0 || newer.length > 0) {
    const sorted = (ids: number[]) => [...new Set(ids)].sort((a, b) => a - b)
    list.ids = sorted(older).concat(list.ids, sorted(newer))
  }
  if (page.foundOldest) list.foundOldest = true
  if (page.foundNewest) list.foundNewest = true
}

/** A new message: appended to every loaded list it belongs to whose newest end is loaded. */
export function addToLists(lists: Lists, message: Message, selfId: number): void {
  for (const list of lists.values()) {
    if (!list.foundNewest || matches(list.narrow, message, selfId) !== true) continue
    const last = list.ids[list.ids.length - 1]
    // A new array, as for every change of a list: views compare lists' IDs by identity.
    if (last === undefined || last < message.id) list.ids = [...list.ids, message.id]
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
