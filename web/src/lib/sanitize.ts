// Server-rendered message HTML, sanitized again in the browser: DOMPurify
// with its HTML profile; links open outside the app. The configuration is
// set once (DOMPurify otherwise parses it on every call), and the results
// of the last CACHED contents are kept: rows scrolled out of the message
// list's window and back, or re-created, do not sanitize again.
import DOMPurify from 'dompurify'

DOMPurify.addHook('afterSanitizeAttributes', (node) => {
  if (node.tagName === 'A' && node.getAttribute('href') && !node.getAttribute('href')!.startsWith('#')) {
    node.setAttribute('target', '_blank')
    node.setAttribute('rel', 'noopener noreferrer')
  }
})
DOMPurify.setConfig({ USE_PROFILES: { html: true }, FORBID_TAGS: ['style', 'form', 'input', 'button'], FORBID_ATTR: ['style'] })

const CACHED = 500
const cache = new Map<string, string>()

export function sanitize(html: string): string {
  let clean = cache.get(html)
  if (clean !== undefined) {
    // Most recently used last: a Map iterates in insertion order.
    cache.delete(html)
  } else {
    clean = DOMPurify.sanitize(html)
    if (cache.size >= CACHED) cache.delete(cache.keys().next().value!)
  }
  cache.set(html, clean)
  return clean
}
