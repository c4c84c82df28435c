// Messages of muted senders the reader chose to see (upstream's "Click here
// to reveal"), by message ID, until hidden again or the page reloads. Kept
// here rather than in a row, so a row leaving the message list's window and
// coming back stays as the reader left it.
import { SvelteSet } from 'svelte/reactivity'

export const revealed = new SvelteSet<number>()
