#!/usr/bin/env node
// `roost` admin command (package.json bin): runs the compiled CLI.
import { existsSync } from 'node:fs'

const main = new URL('../dist/src/cli/main.js', import.meta.url)
if (!existsSync(main)) {
  process.stderr.write('roost: dist/src/cli/main.js is missing; run `npm run build` first\n')
  process.exit(1)
}
await import(main.href)
