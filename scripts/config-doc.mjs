#!/usr/bin/env node
// `npm run docs:config`: writes the table of environment variables into
// docs/configuration.md (between its generated-table markers) from
// CONFIG_VARIABLES in src/config-variables.ts. Run it after adding or changing
// a variable; test/docs/configuration.test.ts fails while the file is stale.
//   node scripts/config-doc.mjs           rewrite the table (after npm run build)
//   node scripts/config-doc.mjs --check   exit 1 when the table is out of date
import { readFileSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const { withConfigurationTable } = await import('../dist/src/config-variables.js')
const file = path.join(root, 'docs/configuration.md')
const current = readFileSync(file, 'utf8')
const updated = withConfigurationTable(current)
if (process.argv.includes('--check')) {
  if (updated !== current) {
    console.error('docs/configuration.md is out of date: run npm run docs:config')
    process.exit(1)
  }
} else if (updated !== current) {
  writeFileSync(file, updated)
  console.log('docs/configuration.md: table updated')
} else {
  console.log('docs/configuration.md: up to date')
}
