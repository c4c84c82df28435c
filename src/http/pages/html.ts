// The frame of the server-rendered pages: one small stylesheet (escaping: domain/html-escape.ts).
import { escapeHtml } from '../../domain/html-escape.js'

const STYLE = `
body { font-family: system-ui, sans-serif; max-width: 28rem; margin: 3rem auto; padding: 0 1rem; color: #222; }
h1 { font-size: 1.4rem; }
label { display: block; margin-top: 1rem; font-weight: 600; }
input { display: block; width: 100%; box-sizing: border-box; padding: .5rem; margin-top: .25rem; font-size: 1rem; }
button { margin-top: 1.5rem; padding: .6rem 1.2rem; font-size: 1rem; }
.error, .problem { color: #a40000; background: #fdecea; padding: .6rem; border-radius: 4px; }`

/** A complete HTML document; `body` is trusted markup (escape what goes into it). */
export function page(title: string, body: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title>
<style>${STYLE}</style>
</head>
<body>
<h1>${escapeHtml(title)}</h1>
${body}
</body>
</html>
`
}
