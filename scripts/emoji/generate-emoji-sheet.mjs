// Builds web/src/lib/emoji-sheet.json, where each emoji the server names
// (src/domain/emoji-names.json) sits in emoji-datasource's 32-pixel sprite
// sheets (img/<set>/sheets/32.png: one cell of 34 pixels, a 1-pixel border
// around the 32-pixel image, per emoji; the same layout for every set). The
// web app draws the `google` and `twitter` emoji sets from those sheets. Run
// it after upgrading emoji-datasource or regenerating the names:
//
//   node scripts/emoji/generate-emoji-sheet.mjs
//
// Output: { "<code>": [column, row], … } in the names' order.
import { readFileSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const here = dirname(fileURLToPath(import.meta.url))
const require = createRequire(import.meta.url)
const dataset = require('emoji-datasource/emoji.json')
const names = JSON.parse(readFileSync(join(here, '../../src/domain/emoji-names.json'), 'utf8'))

const codeOf = (unified) =>
  unified
    .split('-')
    .map((h) => parseInt(h, 16))
    .filter((c) => c !== 0xfe0f)
    .map((c) => c.toString(16).padStart(4, '0'))
    .join('-')

const cells = new Map()
for (const e of dataset) if (e.has_img_google && e.has_img_twitter) cells.set(codeOf(e.unified), [e.sheet_x, e.sheet_y])
const out = {}
for (const code of Object.keys(names)) {
  const cell = cells.get(code)
  if (cell) out[code] = cell
}
writeFileSync(join(here, '../../web/src/lib/emoji-sheet.json'), `${JSON.stringify(out)}\n`)
console.log(`${Object.keys(out).length} of ${Object.keys(names).length} emoji placed`)
