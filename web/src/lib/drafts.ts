// Unsent text, one draft per view's compose box: kept in localStorage at
// every keystroke (a reload or an ended session loses nothing) and, while
// the user's enable_drafts_synchronization setting is on, on the server
// through the drafts API (created, edited and deleted a moment after typing
// stops, deleted when the message is sent), as upstream's web app does.
// A view opens with the newer of its local draft and the server's draft for
// the same conversation (register state, kept live by drafts events).
import { createDraft, deleteDraft, editDraft, type DraftFields } from '../api/drafts.js'
import type { Destination } from '../api/messages.js'
import type { WireDraft } from '../model/events.js'
import { hashToNarrow, narrowToHash, type Narrow } from '../model/narrow.js'
import type { State } from '../model/state.js'
import { store } from './store.js'

const KEY = 'roost.drafts'
const SYNC_DELAY_MS = 800

export interface LocalDraft { text: string; topic: string; streamId?: number; serverId?: number; timestamp: number }

function readAll(): Record<string, LocalDraft> {
  try {
    const parsed = JSON.parse(localStorage.getItem(KEY) ?? '{}') as unknown
    return parsed && typeof parsed === 'object' ? (parsed as Record<string, LocalDraft>) : {}
  } catch {
    return {}
  }
}

function writeAll(all: Record<string, LocalDraft>): void {
  try {
    localStorage.setItem(KEY, JSON.stringify(all))
  } catch {
    /* storage unavailable or full: the server's copy (when synchronized) remains */
  }
}

export const synchronized = (state: State | undefined): boolean => state?.settings.enable_drafts_synchronization !== false

function sameUsers(a: number[], b: number[]): boolean {
  const x = [...a].sort((p, q) => p - q)
  const y = [...b].sort((p, q) => p - q)
  return x.length === y.length && x.every((v, i) => v === y[i])
}

/** The server's newest draft for the conversation a view writes to (a topic or a direct conversation). */
function serverDraftFor(state: State, narrow: Narrow): WireDraft | undefined {
  let found: WireDraft | undefined
  for (const d of state.drafts.values()) {
    const match =
      narrow.kind === 'topic'
        ? d.type === 'stream' && d.to[0] === narrow.streamId && d.topic.toLowerCase() === narrow.topic.toLowerCase()
        : narrow.kind === 'dm' && d.type === 'private' && sameUsers(d.to, narrow.userIds)
    if (match && (!found || d.timestamp > found.timestamp)) found = d
  }
  return found
}

export function fieldsOf(destination: Destination | undefined, text: string): DraftFields {
  const timestamp = Math.floor(Date.now() / 1000)
  if (!destination) return { type: '', to: [], topic: '', content: text, timestamp }
  return destination.type === 'stream'
    ? { type: 'stream', to: [destination.streamId], topic: destination.topic, content: text, timestamp }
    : { type: 'private', to: [...destination.userIds], topic: '', content: text, timestamp }
}

const copyOf = (d: DraftFields): string => JSON.stringify([d.type, d.to, d.topic, d.content])

/** One compose box's draft. */
export class Draft {
  private readonly key: string
  private serverId: number | undefined
  private timer: ReturnType<typeof setTimeout> | undefined
  private pending: { destination: Destination | undefined; text: string } | undefined
  /** Server calls run one after another, so a create is never raced by an edit. */
  private chain: Promise<unknown> = Promise.resolve()
  /** What the server holds of this draft (its fields without the timestamp): an unchanged draft is not sent again. */
  private serverCopy: string | undefined

  constructor(narrow: Narrow) {
    this.key = narrowToHash(narrow)
  }

  /** The text (and topic, for a channel view) the view opens with. */
  restore(state: State, narrow: Narrow): { text: string; topic?: string; streamId?: number } {
    const local = readAll()[this.key]
    const remote = synchronized(state) ? (local?.serverId !== undefined ? state.drafts.get(local.serverId) : undefined) ?? serverDraftFor(state, narrow) : undefined
    if (local?.serverId !== undefined && synchronized(state) && !state.drafts.has(local.serverId) && remote === undefined) {
      // Saved on the server and deleted there since (sent or discarded on another device).
      this.forget()
      return { text: '' }
    }
    this.serverId = remote?.id
    this.serverCopy = remote && copyOf(remote)
    if (remote && (!local || remote.timestamp > local.timestamp)) {
      return { text: remote.content, topic: remote.type === 'stream' ? remote.topic : undefined, streamId: remote.type === 'stream' ? remote.to[0] : undefined }
    }
    if (!local) return { text: '' }
    // The local copy is newer (typed while the server could not be told): the view's first change() sends it.
    return { text: local.text, topic: local.topic || undefined, streamId: local.streamId }
  }

  /** Called on every change of the text or the destination. */
  changed(destination: Destination | undefined, text: string, topic: string): void {
    const all = readAll()
    if (text) all[this.key] = { text, topic, streamId: destination?.type === 'stream' ? destination.streamId : undefined, serverId: this.serverId, timestamp: Date.now() / 1000 }
    else delete all[this.key]
    writeAll(all)
    this.pending = { destination, text }
    clearTimeout(this.timer)
    this.timer = setTimeout(() => this.flush(), SYNC_DELAY_MS)
  }

  /** Sends the pending change to the server now (typing stopped, the view closes). */
  flush(): Promise<unknown> {
    clearTimeout(this.timer)
    const change = this.pending
    this.pending = undefined
    if (!change || !synchronized(store.snapshot.state)) return this.chain
    if (this.serverCopy !== undefined && this.serverCopy === copyOf(fieldsOf(change.destination, change.text))) return this.chain
    this.chain = this.chain.then(() => this.sync(change.destination, change.text)).catch(() => undefined)
    return this.chain
  }

  /** The message was sent: the draft is gone, here and on the server. */
  sent(): void {
    clearTimeout(this.timer)
    this.pending = undefined
    this.forget()
  }

  private forget(): void {
    const all = readAll()
    delete all[this.key]
    writeAll(all)
    const id = this.serverId
    this.serverId = undefined
    this.serverCopy = undefined
    if (id !== undefined) this.chain = this.chain.then(() => deleteDraft(id)).catch(() => undefined)
  }

  private async sync(destination: Destination | undefined, text: string): Promise<void> {
    if (!text.trim()) {
      const id = this.serverId
      this.serverId = undefined
      this.serverCopy = undefined
      if (id !== undefined) await deleteDraft(id)
      return
    }
    const fields = fieldsOf(destination, text)
    if (this.serverId !== undefined && store.snapshot.state?.drafts.has(this.serverId) !== false) await editDraft(this.serverId, fields)
    else this.serverId = await createDraft(fields)
    this.serverCopy = copyOf(fields)
    const all = readAll()
    const local = all[this.key]
    if (local && local.text === text) {
      all[this.key] = { ...local, serverId: this.serverId }
      writeAll(all)
    }
  }
}

/** A draft as the drafts view lists it: one of the server's, or one kept in this browser only (never synchronized). */
export interface ListedDraft {
  key: string
  serverId?: number
  /** The view the draft is restored into. */
  narrow: Narrow
  streamId?: number
  topic: string
  userIds: number[]
  content: string
  timestamp: number
}

function narrowOfDraft(type: string, to: number[], topic: string): Narrow {
  if (type === 'stream' && to[0] !== undefined) return topic ? { kind: 'topic', streamId: to[0], topic } : { kind: 'channel', streamId: to[0] }
  if (type === 'private' && to.length > 0) return { kind: 'dm', userIds: [...to] }
  return { kind: 'all' }
}

/** The server's drafts (while synchronized) and this browser's unsynchronized ones, newest first. */
export function listDrafts(state: State): ListedDraft[] {
  const out: ListedDraft[] = []
  if (synchronized(state)) {
    for (const d of state.drafts.values()) {
      out.push({ key: `s${d.id}`, serverId: d.id, narrow: narrowOfDraft(d.type, d.to, d.topic), streamId: d.type === 'stream' ? d.to[0] : undefined, topic: d.topic, userIds: d.type === 'private' ? [...d.to] : [], content: d.content, timestamp: d.timestamp })
    }
  }
  for (const [hash, local] of Object.entries(readAll())) {
    if (!local.text.trim() || (local.serverId !== undefined && synchronized(state))) continue
    const narrow = hashToNarrow(hash)
    if (!narrow) continue
    const streamId = narrow.kind === 'channel' || narrow.kind === 'topic' ? narrow.streamId : local.streamId
    const topic = narrow.kind === 'topic' ? narrow.topic : local.topic
    out.push({ key: `l${hash}`, narrow, streamId: narrow.kind === 'dm' ? undefined : streamId, topic, userIds: narrow.kind === 'dm' ? narrow.userIds : [], content: local.text, timestamp: local.timestamp })
  }
  return out.sort((a, b) => b.timestamp - a.timestamp)
}

/**
 * Puts the draft into its view's compose box: the browser's copy for that
 * view becomes this draft (so the compose box opens with it, and further
 * typing edits the same server draft). Returns the view's address.
 */
export function restoreDraft(draft: ListedDraft): string {
  const hash = narrowToHash(draft.narrow)
  const all = readAll()
  all[hash] = { text: draft.content, topic: draft.topic, streamId: draft.streamId, serverId: draft.serverId, timestamp: draft.timestamp }
  writeAll(all)
  return hash
}

/** Deletes the draft: on the server (a drafts event removes it from the store) and in this browser. */
export async function discardDraft(draft: ListedDraft): Promise<void> {
  const all = readAll()
  for (const [hash, local] of Object.entries(all)) {
    if ((draft.serverId !== undefined && local.serverId === draft.serverId) || (draft.serverId === undefined && `l${hash}` === draft.key)) delete all[hash]
  }
  writeAll(all)
  if (draft.serverId !== undefined) await deleteDraft(draft.serverId)
  else store.change(() => undefined)
}
