// What views call: open a narrow (fetched around the first unread), load
// older/newer pages by anchor, mark messages read in batches. Results go
// into the store; views never fetch on their own.
import { fetchMessages, setFlag } from '../api/messages.js'
import { mergePage } from '../model/lists.js'
import { narrowKey, type Narrow } from '../model/narrow.js'
import { messageOf } from '../model/state.js'
import { store } from './store.js'

const PAGE = 100
const loading = new Set<string>()

export async function openNarrow(narrow: Narrow): Promise<void> {
  store.change((s) => (s.narrow = narrow))
  const list = store.list(narrow)
  if (list.ids.length > 0 || loading.has(narrowKey(narrow))) return
  await load(narrow, 'first_unread', PAGE / 2, PAGE / 2, true)
}

export async function loadOlder(narrow: Narrow): Promise<void> {
  const list = store.list(narrow)
  if (list.foundOldest || list.ids.length === 0) return
  await load(narrow, list.ids[0]!, PAGE, 0, false)
}

export async function loadNewer(narrow: Narrow): Promise<void> {
  const list = store.list(narrow)
  if (list.foundNewest || list.ids.length === 0) return
  await load(narrow, list.ids[list.ids.length - 1]!, 0, PAGE, false)
}

async function load(narrow: Narrow, anchor: number | 'first_unread', before: number, after: number, first: boolean): Promise<void> {
  const key = `${narrowKey(narrow)}:${anchor}`
  if (loading.has(key)) return
  loading.add(key)
  try {
    const page = await fetchMessages(narrow, anchor, before, after)
    store.change((s) => {
      const list = store.list(narrow)
      if (s.state) mergePage(s.state, list, page.messages.map(messageOf), { foundOldest: page.found_oldest, foundNewest: page.found_newest })
      if (first) list.firstUnreadId = page.messages.find((m) => !m.flags.includes('read'))?.id
    })
  } finally {
    loading.delete(key)
  }
}

let pendingRead = new Set<number>()
let readTimer: ReturnType<typeof setTimeout> | undefined

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
