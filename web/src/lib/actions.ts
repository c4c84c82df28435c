// What views call: open a narrow (fetched around the first unread, or
// around a linked message), load older/newer pages by anchor, mark messages
// read in batches. Results go into the store; views never fetch on their own.
import { fetchMessage, fetchMessages, fetchStreamTopics, setFlag } from '../api/messages.js'
import { listKey, mergePage } from '../model/lists.js'
import { conversationOf, messageHash, narrowKey, type Narrow } from '../model/narrow.js'
import { messageOf } from '../model/state.js'
import { store, type View } from './store.js'

const PAGE = 100
const loading = new Set<string>()
/** Counts openings: a `with` link's lookup that answers after another view was opened changes nothing. */
let openings = 0

/**
 * Opens a narrow: at its first unread message, or at the message `near`
 * (a link to a message: the page around it, as upstream's `near`). With
 * `follow` (a `with/ID` link) the message is looked up first, and a topic,
 * channel or direct conversation it has left is replaced by the one it is
 * in now (the address too, without a new history entry).
 */
export async function openNarrow(narrow: Narrow, near?: number, follow = false): Promise<void> {
  const opening = ++openings
  if (near !== undefined && follow && store.snapshot.state) {
    const selfId = store.snapshot.state.selfId
    const message = store.snapshot.state.messages.get(near) ?? (await fetchMessage(near).then(messageOf, () => undefined))
    if (opening !== openings) return
    const now = message && movedTo(narrow, conversationOf(message, selfId))
    if (now) {
      narrow = now
      history.replaceState(history.state, '', messageHash(now, near, 'with'))
    }
  }
  store.change((s) => {
    s.narrow = narrow
    s.near = near
    s.view = 'messages'
  })
  if (narrow.kind === 'channel' || narrow.kind === 'topic') void loadTopics(narrow.streamId)
  const list = store.list(narrow, near)
  if (list.ids.length > 0) return
  await load(narrow, near, near ?? 'first_unread', PAGE / 2, PAGE / 2, near === undefined)
}

/** Where a `with` link's narrow goes when its message is elsewhere now: the message's topic, channel or direct conversation (undefined: stay). */
function movedTo(narrow: Narrow, conversation: Narrow): Narrow | undefined {
  const to =
    narrow.kind === 'channel' && conversation.kind === 'topic' ? { kind: 'channel' as const, streamId: conversation.streamId }
    : narrow.kind === 'topic' || narrow.kind === 'dm' ? conversation
    : undefined
  return to && narrowKey(to) !== narrowKey(narrow) ? to : undefined
}

export async function loadOlder(narrow: Narrow, near?: number): Promise<void> {
  const list = store.list(narrow, near)
  if (list.foundOldest || list.ids.length === 0) return
  await load(narrow, near, list.ids[0]!, PAGE, 0, false)
}

export async function loadNewer(narrow: Narrow, near?: number): Promise<void> {
  const list = store.list(narrow, near)
  if (list.foundNewest || list.ids.length === 0) return
  await load(narrow, near, list.ids[list.ids.length - 1]!, 0, PAGE, false)
}

/** Fetches a page into the list of the narrow (or of the narrow opened at `near`). */
async function load(narrow: Narrow, near: number | undefined, anchor: number | 'first_unread', before: number, after: number, first: boolean): Promise<void> {
  const key = `${listKey(narrow, near)}:${anchor}`
  if (loading.has(key)) return
  loading.add(key)
  try {
    const page = await fetchMessages(narrow, anchor, before, after)
    store.change((s) => {
      const list = store.list(narrow, near)
      if (s.state) mergePage(s.state, list, page.messages.map(messageOf), { foundOldest: page.found_oldest, foundNewest: page.found_newest })
      if (first) list.firstUnreadId = page.messages.find((m) => !m.flags.includes('read'))?.id
    })
  } finally {
    loading.delete(key)
  }
}

/** How many messages one page of the recent conversations view fetches (as upstream's first fetch for it). */
export const RECENT_PAGE = 400
let recentOldest: number | undefined
let recentDone = false

/**
 * Loads the newest messages of every channel and conversation (the first
 * call), or the page before the oldest loaded (`more`); their topics and
 * conversations become rows of the recent conversations view. Returns
 * whether older messages remain.
 */
export async function loadRecent(more = false): Promise<boolean> {
  if (recentDone || (!more && recentOldest !== undefined)) return !recentDone
  const page = await fetchMessages({ kind: 'all' }, more && recentOldest !== undefined ? recentOldest : 'newest', RECENT_PAGE, 0)
  store.change((s) => {
    for (const m of page.messages) if (!s.state?.messages.has(m.id)) s.state?.messages.set(m.id, messageOf(m))
  })
  const oldest = page.messages.reduce((min, m) => Math.min(min, m.id), Number.MAX_SAFE_INTEGER)
  if (oldest !== Number.MAX_SAFE_INTEGER) recentOldest = oldest
  recentDone = page.found_oldest
  return !recentDone
}

/**
 * The direct conversations a deletion left with no known message
 * (State.emptiedDms): asks the server for each one's newest message
 * (`GET /messages`, anchor `newest`, one before, the conversation's narrow),
 * as upstream does for its direct message list. A conversation with a message
 * left comes back with that message loaded (its row's time and sender); an
 * empty one, or one whose request fails, stays out.
 */
export async function refreshEmptiedDms(): Promise<void> {
  const state = store.snapshot.state
  if (!state || state.emptiedDms.size === 0) return
  const keys = [...state.emptiedDms]
  state.emptiedDms.clear()
  await Promise.all(
    keys.map(async (key) => {
      const page = await fetchMessages({ kind: 'dm', userIds: key.split(',').map(Number) }, 'newest', 1, 0).catch(() => undefined)
      const newest = page?.messages.at(-1)
      if (!newest) return
      store.change((s) => {
        // A new register in the meantime has its own recent_private_conversations.
        if (s.state !== undefined && s.state.selfId === state.selfId && s.state.queueId === state.queueId) {
          if (!s.state.messages.has(newest.id)) s.state.messages.set(newest.id, messageOf(newest))
          if ((s.state.recentDms.get(key) ?? 0) < newest.id) s.state.recentDms.set(key, newest.id)
        }
      })
    }),
  )
}

const topicsLoading = new Set<number>()

/**
 * A channel's topics from the server (`GET /users/me/{stream_id}/topics`),
 * once per channel for each register (message events keep the list current
 * after that, State.streamTopics), as upstream fetches a channel's topic
 * history when the channel is opened. A failed request leaves the topics of
 * the loaded messages.
 */
export async function loadTopics(streamId: number, again = false): Promise<void> {
  const state = store.snapshot.state
  if (!state || (state.streamTopics.has(streamId) && !again) || topicsLoading.has(streamId)) return
  topicsLoading.add(streamId)
  try {
    const topics = await fetchStreamTopics(streamId)
    store.change((s) => {
      // A new register in the meantime fetches for itself.
      if (s.state?.queueId !== state.queueId) return
      const known = new Map(topics.map((t) => [t.name.toLowerCase(), { topic: t.name, maxId: t.max_id }]))
      // Messages that arrived while the request was under way.
      for (const [key, old] of s.state.streamTopics.get(streamId) ?? []) if ((known.get(key)?.maxId ?? 0) < old.maxId) known.set(key, old)
      s.state.streamTopics.set(streamId, known)
    })
  } catch {
    // The loaded messages' topics stay.
  } finally {
    topicsLoading.delete(streamId)
  }
}

/** Fetches again the channels whose topic list a deletion or a move left unsure (State.staleTopics). */
export async function refreshStaleTopics(): Promise<void> {
  const state = store.snapshot.state
  if (!state || state.staleTopics.size === 0) return
  const ids = [...state.staleTopics]
  state.staleTopics.clear()
  await Promise.all(ids.map((id) => loadTopics(id, true)))
}

/** Shows a view that is not a message list (recent conversations, drafts). */
export function openView(view: Exclude<View, 'messages'>): void {
  store.change((s) => (s.view = view))
}

/** A new register (the store starts again): the next recent view fetches again. */
export function resetRecent(): void {
  recentOldest = undefined
  recentDone = false
}

let pendingRead = new Set<number>()
let readTimer: ReturnType<typeof setTimeout> | undefined

/** Whether a message is read, or seen in the view and about to be marked read. */
export function readOrSeen(id: number): boolean {
  return pendingRead.has(id) || store.snapshot.state?.unread.has(id) !== true
}

/** Marks a message read soon (seen in the view), one request per batch. */
export function markSeen(id: number): void {
  const state = store.snapshot.state
  if (!state?.unread.has(id) || pendingRead.has(id)) return
  pendingRead.add(id)
  readTimer ??= setTimeout(() => {
    const ids = [...pendingRead]
    pendingRead = new Set()
    readTimer = undefined
    void setFlag(ids, 'read', 'add').catch(() => undefined)
  }, 300)
}
