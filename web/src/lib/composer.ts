// The compose box's shared state: views that are not the compose box (quote
// and reply, keyboard shortcuts) put text into it or focus it. Unsent text is
// kept by lib/drafts.ts.
import type { Message } from '../model/state.js'

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
}

export const composer = new Composer()
