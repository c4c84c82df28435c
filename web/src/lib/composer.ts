// The compose box's shared state: views that are not the compose box (quote
// and reply, keyboard shortcuts) put text into it or focus it. Unsent text is
// kept by lib/drafts.ts.
import type { Message } from '../model/state.js'

type Listener = (text: string) => void

class Composer {
  private listeners = new Set<Listener>()
  topic: string | undefined

  private focusListeners = new Set<() => void>()
  private focusPending = false

  /** Focuses the open view's compose box (the `c` and `r` keys). */
  focus(): void {
    this.focusPending = true
    for (const l of this.focusListeners) l()
  }
  /** Focuses the compose box of the view about to open (a reply that changes the view). */
  focusNext(): void {
    this.focusPending = true
  }
  /** The compose box asks whether it should take the focus (once). */
  takeFocus(): boolean {
    const pending = this.focusPending
    this.focusPending = false
    return pending
  }
  onFocus(l: () => void): () => void {
    this.focusListeners.add(l)
    return () => this.focusListeners.delete(l)
  }

  subscribe(l: Listener): () => void {
    this.listeners.add(l)
    return () => this.listeners.delete(l)
  }
  quote(message: Message, raw: string): void {
    const quoted = `@_**${message.sender_full_name}|${message.sender_id}** said:\n\`\`\`quote\n${raw}\n\`\`\`\n`
    if (message.type === 'stream') this.topic = message.subject
    for (const l of this.listeners) l(quoted)
  }
}

export const composer = new Composer()
