// docs/configuration.md cannot drift from the code: its table is exactly what
// `npm run docs:config` generates from CONFIG_VARIABLES, and CONFIG_VARIABLES
// names every environment variable loadConfig reads, and nothing else.
import { readFileSync } from 'node:fs'
import path from 'node:path'
import t from 'tap'
import { loadConfig } from '../../src/config.js'
import { CONFIG_VARIABLES, configurationTable, withConfigurationTable } from '../../src/config-variables.js'
import { ROOT } from '../support/root.js'

/** The names loadConfig reads from an environment with nothing set. */
function namesRead(): string[] {
  const seen = new Set<string>()
  const env = new Proxy<Record<string, string | undefined>>(
    {},
    {
      get(_target, key) {
        if (typeof key === 'string') seen.add(key)
        return undefined
      },
    },
  )
  loadConfig(env)
  return [...seen].sort()
}

/** Names passed to the env readers or read as env.NAME in src/config.ts, also those read only when another is set. */
function namesInSource(): string[] {
  const source = readFileSync(path.join(ROOT, 'src/config.ts'), 'utf8')
  const found = new Set<string>()
  for (const m of source.matchAll(/\(env, '([A-Z][A-Z0-9_]+)'/g)) found.add(m[1] as string)
  for (const m of source.matchAll(/\benv\.([A-Z][A-Z0-9_]+)/g)) found.add(m[1] as string)
  for (const m of source.matchAll(/\benv\[['"]([A-Z][A-Z0-9_]+)['"]\]/g)) found.add(m[1] as string)
  return [...found].sort()
}

t.test('every variable loadConfig reads is documented, and only those', async (t) => {
  const documented = CONFIG_VARIABLES.map((v) => v.name)
  t.equal(new Set(documented).size, documented.length, 'each variable is listed once')
  const read = new Set([...namesRead(), ...namesInSource()])
  t.same([...read].filter((n) => !documented.includes(n)), [], 'read but not in CONFIG_VARIABLES (src/config-variables.ts)')
  t.same(documented.filter((n) => !read.has(n)), [], 'in CONFIG_VARIABLES but never read by loadConfig')
})

t.test('docs/configuration.md holds the generated table', async (t) => {
  const doc = readFileSync(path.join(ROOT, 'docs/configuration.md'), 'utf8')
  t.ok(doc.includes(configurationTable()), 'the table matches CONFIG_VARIABLES')
  t.equal(withConfigurationTable(doc), doc, 'up to date: run `npm run docs:config`')
})

t.test('a stale table is detected', async (t) => {
  const doc = readFileSync(path.join(ROOT, 'docs/configuration.md'), 'utf8')
  const stale = doc.replace('`LISTEN_BACKLOG`', '`LISTEN_BACKLOG_OLD`')
  t.not(withConfigurationTable(stale), stale)
})
