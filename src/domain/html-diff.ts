// content_html_diff of GET /messages/{id}/history: the new rendering with
// the words that changed marked, as upstream's highlight_html_differences
// does (a word-level diff of two HTML fragments; inserted text in
// <span class="highlight_text_inserted">, deleted text in
// <span class="highlight_text_deleted">, the whole wrapped in a <div>).
// Tags come from the new rendering only, so the result stays well nested.
import { diffArrays } from 'diff'

/** Past this much diffing work (message sizes make it rare), the whole old text counts as deleted and the new as inserted. */
const MAX_EDIT_LENGTH = 2000

const isTag = (token: string): boolean => token.startsWith('<')

/** Tags, runs of whitespace and words. */
export function htmlTokens(html: string): string[] {
  return html.match(/<[^>]*>?|\s+|[^<\s]+/g) ?? []
}

function mark(tokens: readonly string[], klass: string, keepTags: boolean): string {
  let out = ''
  let text = ''
  const flush = () => {
    if (text.trim() !== '') out += `<span class="${klass}">${text}</span>`
    else out += text
    text = ''
  }
  for (const token of tokens) {
    if (isTag(token)) {
      flush()
      if (keepTags) out += token
    } else {
      text += token
    }
  }
  flush()
  return out
}

export function highlightHtmlDifferences(before: string, after: string): string {
  const oldTokens = htmlTokens(before)
  const newTokens = htmlTokens(after)
  const parts = diffArrays(oldTokens, newTokens, { maxEditLength: MAX_EDIT_LENGTH }) ?? [
    { value: oldTokens, removed: true, added: false, count: oldTokens.length },
    { value: newTokens, removed: false, added: true, count: newTokens.length },
  ]
  let out = ''
  for (const part of parts) {
    if (part.added) out += mark(part.value, 'highlight_text_inserted', true)
    else if (part.removed) out += mark(part.value, 'highlight_text_deleted', false)
    else out += part.value.join('')
  }
  return `<div>${out}</div>`
}
