// The compose box's shared state: views that are not the compose box (quote
// and reply) put text into it; it keeps the unsent text in localStorage so a
// reload or an ended session loses nothing.
import type { Message } from '../model/state.js'

const KEY = 'roost.compose-draft'
type Listener = (text: string) => void

class Composer {
  private listeners = new Set<Listener>()
  topic: string | undefined

  subscribe(l: Listener): () => void {
    this.listeners.add(l)
    return () => this.listeners.delete(l)
  }
  quote(message: Message, raw: string): void {
    const quoted = `@_**${message.sender_full_name}|${message.sender_id}** said:\n\`\`\`quote\n${raw}\n\`\`\`\n`
    if (message.type === 'stream') this.topic = message.subject
    for (const l of this.listeners) l(quoted)
  }
  saved(): string {
    try {
      return localStorage.getItem(KEY) ?? ''
    } catch {
      return ''
    }
  }
  save(text: string): void {
    try {
      if (text) localStorage.setItem(KEY, text)
      else localStorage.removeItem(KEY)
    } catch {
      /* storage unavailable: the drafts API still has it */
    }
  }
}

export const composer = new Composer()
