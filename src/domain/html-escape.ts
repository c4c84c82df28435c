// The one HTML escaper of the server: Markdown rendering, search-match
// highlighting, missed-message emails and the server-rendered pages all use it.
//
// It escapes `&`, `<`, `>` and `"`: what can end a text node or a
// double-quoted attribute value. `'` is kept as it is, as upstream's Markdown
// output keeps it (rendered messages must match upstream's byte for byte), so
// every attribute value written with it is double-quoted.

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' }

export function escapeHtml(s: string): string {
  return s.replace(/[&<>"]/g, (c) => ESCAPES[c]!)
}
