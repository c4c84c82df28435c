// The one HTML escaper (src/domain/html-escape.ts): exactly & < > " are
// escaped, everything else (the apostrophe, as upstream's Markdown keeps it) passes through.
import t from 'tap'
import { escapeHtml } from '../../src/domain/html-escape.js'
import { page } from '../../src/http/pages/html.js'

t.test('escapes & < > " and nothing else', async (t) => {
  t.equal(escapeHtml('&'), '&amp;')
  t.equal(escapeHtml('<'), '&lt;')
  t.equal(escapeHtml('>'), '&gt;')
  t.equal(escapeHtml('"'), '&quot;')
  t.equal(escapeHtml("'"), "'", 'the apostrophe is kept: attribute values are always double-quoted')
  t.equal(escapeHtml(`<a href="x?a=1&b='2'">Tom & "Jerry"</a>`), `&lt;a href=&quot;x?a=1&amp;b='2'&quot;&gt;Tom &amp; &quot;Jerry&quot;&lt;/a&gt;`)
  t.equal(escapeHtml('&amp;'), '&amp;amp;', 'escaping is not idempotent: text is escaped once')
  t.equal(escapeHtml('plain text, ünïcödé 💬 = `code`'), 'plain text, ünïcödé 💬 = `code`')
  t.equal(escapeHtml(''), '')
})

t.test('the server pages use it for their title', async (t) => {
  const html = page(`<Tom & Jerry's "page">`, '<p>body</p>')
  t.match(html, `<title>&lt;Tom &amp; Jerry's &quot;page&quot;&gt;</title>`)
  t.match(html, `<h1>&lt;Tom &amp; Jerry's &quot;page&quot;&gt;</h1>`)
})
