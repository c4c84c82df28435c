// The app's one store: the model's State and message lists, the open narrow
// and the connection state, with Svelte's store contract (views read
// `$store` and re-render after every change).
import { emptyList, listKey, type Lists, type MessageList } from '../model/lists.js'
import type { Narrow } from '../model/narrow.js'
import type { State } from '../model/state.js'

export type Connection = 'connecting' | 'connected' | 'reconnecting'

/** What the main area shows: the open narrow's messages, or one of the views that are not message lists. */
export type View = 'messages' | 'recent' | 'drafts' | 'scheduled'
export const VIEW_HASHES: Record<Exclude<View, 'messages'>, string> = { recent: '#recent', drafts: '#drafts', scheduled: '#scheduled' }

export interface AppSnapshot {
  state: State | undefined
  lists: Lists
  narrow: Narrow
  /** The message a link opened the narrow at (`near/ID`), if any. */
  near: number | undefined
  view: View
  connection: Connection
  /** Bumped on every change: views key derived values on it. */
  version: number
}

type Listener = (snapshot: AppSnapshot) => void

class AppStore {
  snapshot: AppSnapshot = { state: undefined, lists: new Map(), narrow: { kind: 'all' }, near: undefined, view: 'messages', connection: 'connecting', version: 0 }
  private listeners = new Set<Listener>()

  subscribe(listener: Listener): () => void {
    this.listeners.add(listener)
    listener(this.snapshot)
    return () => this.listeners.delete(listener)
  }

  /** Runs a change to the snapshot's data, then tells every view. */
  change(fn: (snapshot: AppSnapshot) => void): void {
    fn(this.snapshot)
    // New identities for the snapshot and the state (their Maps are shared): Svelte re-derives what reads them.
    const state = this.snapshot.state && { ...this.snapshot.state }
    this.snapshot = { ...this.snapshot, state, version: this.snapshot.version + 1 }
    for (const l of this.listeners) l(this.snapshot)
  }

  /** The narrow's list, or the one opened at a linked message (`near`). */
  list(narrow: Narrow, near?: number): MessageList {
    const key = listKey(narrow, near)
    let list = this.snapshot.lists.get(key)
    if (!list) {
      list = emptyList(narrow, near)
      this.snapshot.lists.set(key, list)
    }
    return list
  }
}

export const store = new AppStore()
