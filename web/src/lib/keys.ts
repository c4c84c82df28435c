// Keyboard shortcuts, as upstream's web app has them, outside text fields:
// `/` search, `n` the next unread topic, `j`/`k` (or the arrow keys on a
// message) move between messages, `r` or Enter replies to the focused
// message, `c` focuses the compose box; Escape in the compose box returns to
// the messages (compose.svelte). Links, buttons and fields are reachable by
// Tab as well.
import { isTopicMuted } from '../model/unread.js'
import { conversationOf, narrowKey, narrowToHash, type Narrow } from '../model/narrow.js'
import { composer } from './composer.js'
import { store } from './store.js'

const rows = (): HTMLElement[] => [...document.querySelectorAll<HTMLElement>('.messages [data-id]')]

function move(step: 1 | -1, from: HTMLElement | null): void {
  const all = rows()
  if (all.length === 0) return
  const at = from ? all.indexOf(from) : -1
  const next = at < 0 ? all[step > 0 ? 0 : all.length - 1]! : all[Math.max(0, Math.min(all.length - 1, at + step))]!
  next.focus()
  next.scrollIntoView({ block: 'nearest' })
}

function reply(row: HTMLElement): void {
  const state = store.snapshot.state
  const m = state?.messages.get(Number(row.dataset.id))
  if (!state || !m) return
  const target = conversationOf(m, state.selfId)
  if (narrowKey(target) === narrowKey(store.snapshot.narrow)) return composer.focus()
  composer.focusNext()
  window.location.hash = narrowToHash(target)
}

/** The topic of the oldest unread message outside muted channels and topics. */
function nextUnreadTopic(): Narrow | undefined {
  const state = store.snapshot.state
  if (!state) return undefined
  let best: { id: number; narrow: Narrow } | undefined
  for (const [id, entry] of state.unread) {
    if (entry.kind !== 'stream' || (best && best.id < id)) continue
    if (state.subscriptions.get(entry.streamId)?.is_muted || isTopicMuted(state, entry.streamId, entry.topic)) continue
    best = { id, narrow: { kind: 'topic', streamId: entry.streamId, topic: entry.topic } }
  }
  return best?.narrow
}

export function installShortcuts(): () => void {
  const onKey = (e: KeyboardEvent) => {
    if (e.ctrlKey || e.metaKey || e.altKey || e.defaultPrevented) return
    const target = e.target instanceof HTMLElement ? e.target : null
    if (target?.closest('input, textarea, select, [contenteditable], [role="dialog"], .settings, .picker')) return
    // j/k from anywhere in a message (a button in it too); Enter, r and the arrows on the message itself.
    const within = target?.closest<HTMLElement>('.messages [data-id]') ?? null
    const row = target?.matches('.messages [data-id]') ? target : null
    switch (e.key) {
      case '/':
        e.preventDefault()
        document.querySelector<HTMLInputElement>('header input[type="search"]')?.focus()
        return
      case 'c':
        e.preventDefault()
        composer.focus()
        return
      case 'n': {
        const next = nextUnreadTopic()
        if (next) window.location.hash = narrowToHash(next)
        return
      }
      case 'j':
      case 'k':
        e.preventDefault()
        return move(e.key === 'j' ? 1 : -1, within)
      case 'ArrowDown':
      case 'ArrowUp':
        if (!row) return
        e.preventDefault()
        return move(e.key === 'ArrowDown' ? 1 : -1, row)
      case 'r':
      case 'Enter':
        if (!row) return
        e.preventDefault()
        return reply(row)
    }
  }
  window.addEventListener('keydown', onKey)
  return () => window.removeEventListener('keydown', onKey)
}
