// Builds src/domain/emoji-names.json, the Unicode emoji names Roost accepts
// (reactions, user status, `:name:` in Markdown) and serves as the document
// behind `server_emoji_data_url`. Run it after upgrading emoji-datasource:
//
//   npm install --no-save cldr-annotations-full@48 cldr-annotations-derived-full@48
//   node scripts/emoji/generate-emoji-names.mjs
//
// The names follow the upstream server's rules, so clients that ship their
// own copy of its emoji names (zulip-terminal) or show its popular emoji
// (`+1`, `tada`, `working_on_it`, …) name the same emoji as Roost:
//
// * An emoji's code is its code points in lower-case hex, at least four
//   digits, joined by `-`, without U+FE0F (`2764`, `0023-20e3`).
// * Clock faces other than 1f557 and the skin-tone modifiers get no names.
// * Emoji listed in custom-names.txt (`code canonical alias…`, the upstream
//   server's hand-picked names) take those names; every other emoji takes its
//   English CLDR text-to-speech name as canonical name and its CLDR keywords
//   as aliases, lower-cased with spaces and dashes turned into `_`.
// * An alias equal to some emoji's canonical name is dropped; an alias that
//   several emoji share is dropped from those whose names came from CLDR.
// * Every non-ASCII name also gets an ASCII-folded alias.
//
// Output: { "<code>": ["<canonical>", "<alias>", …], … } in dataset order.
import { readFileSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const here = dirname(fileURLToPath(import.meta.url))
const require = createRequire(import.meta.url)
const dataset = require('emoji-datasource/emoji.json')
const cldr = {
  ...require('cldr-annotations-full/annotations/en/annotations.json').annotations.annotations,
  ...require('cldr-annotations-derived-full/annotationsDerived/en/annotations.json').annotationsDerived.annotations,
}

const SKIPPED = new Set([
  ...['1f550', '1f551', '1f552', '1f553', '1f554', '1f555', '1f556', '1f558', '1f559', '1f55a', '1f55b', '1f55c'],
  ...['1f55d', '1f55e', '1f55f', '1f560', '1f561', '1f562', '1f563', '1f564', '1f565', '1f566', '1f567'],
  ...['1f3fb', '1f3fc', '1f3fd', '1f3fe', '1f3ff'],
])
// Names with no ASCII folding; each of these emoji has an ASCII alias already.
const UNFOLDED = new Set(['ココ', 'サ', '指', '空'])
const FOLD = { è: 'e', ǐ: 'i', ó: 'o', ā: 'a', ō: 'o', ñ: 'n', ô: 'o', ç: 'c', é: 'e', ã: 'a', í: 'i', å: 'a', ü: 'u' }

const unqualified = (unified) => unified.split('-').map((h) => parseInt(h, 16)).filter((c) => c !== 0xfe0f)
const codeOf = (unified) => unqualified(unified).map((c) => c.toString(16).padStart(4, '0')).join('-')

function cleanName(name) {
  const replaced = name
    .trim()
    .replace(/[ \-–]/g, '_')
    .replace(/[“”:.,()‘’']/g, '')
    .replace(/&/g, 'and')
  return replaced.replace(/_{2,}/g, '_').toLowerCase()
}

const custom = new Map()
for (const line of readFileSync(join(here, 'custom-names.txt'), 'utf8').split('\n')) {
  const [code, canonical, ...aliases] = line.trim().split(/\s+/)
  if (code && canonical) custom.set(code, { canonical, aliases })
}

const all = new Map()
const canonicals = new Set()
const warnings = []
for (const entry of dataset) {
  const code = codeOf(entry.unified)
  if (SKIPPED.has(code) || all.has(code)) continue
  let names
  if (custom.has(code)) {
    const c = custom.get(code)
    names = { canonical: c.canonical, aliases: [...c.aliases], custom: true }
  } else {
    const annotation = cldr[String.fromCodePoint(...unqualified(entry.unified))]
    if (!annotation?.tts) continue
    names = { canonical: cleanName(annotation.tts[0]), aliases: (annotation.default ?? []).map(cleanName), custom: false }
  }
  if (canonicals.has(cleanName(names.canonical))) {
    warnings.push(`${code}: canonical name ${names.canonical} is taken; skipped`)
    continue
  }
  canonicals.add(cleanName(names.canonical))
  names.aliases = [...new Set(names.aliases)].filter((a) => a !== names.canonical)
  all.set(code, names)
}

// Aliases may not be canonical names; aliases shared by several emoji stay only where hand-picked.
const holders = new Map()
for (const [code, names] of all) {
  names.aliases = names.aliases.filter((a) => !canonicals.has(a))
  for (const a of names.aliases) holders.set(a, [...(holders.get(a) ?? []), code])
}
for (const [alias, codes] of holders) {
  if (codes.length < 2) continue
  for (const code of codes) {
    const names = all.get(code)
    if (!names.custom) names.aliases = names.aliases.filter((a) => a !== alias)
  }
}

// ASCII aliases for non-ASCII names, taken away from any other emoji.
for (const [code, names] of all) {
  for (const name of [names.canonical, ...names.aliases]) {
    if (UNFOLDED.has(name) || /^[\x00-\x7f]*$/.test(name)) continue
    const folded = [...name].map((ch) => FOLD[ch] ?? ch).join('')
    if (!/^[\x00-\x7f]*$/.test(folded)) {
      warnings.push(`${code}: no ASCII folding for ${name}`)
      continue
    }
    for (const other of holders.get(folded) ?? []) {
      const o = all.get(other)
      o.aliases = o.aliases.filter((a) => a !== folded)
    }
    if (!names.aliases.includes(folded) && folded !== names.canonical) names.aliases.push(folded)
  }
}

const out = {}
for (const [code, names] of all) out[code] = [names.canonical, ...names.aliases]
const target = join(here, '../../src/domain/emoji-names.json')
writeFileSync(target, JSON.stringify(out, null, 0).replace(/\],"/g, '],\n"') + '\n')
for (const w of warnings) console.warn(w)
console.log(`${Object.keys(out).length} emoji, ${Object.values(out).flat().length} names → ${target}`)
