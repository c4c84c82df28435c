// The server's Node.js options (src/node-options.ts) are where a server
// process starts: `npm start` and the image's CMD. A launcher that drops them
// runs the server with V8's smaller young generation, and nothing else
// would notice.
import t from 'tap'
import { spawnSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import path from 'node:path'
import { SERVER_NODE_OPTIONS } from '../src/node-options.js'
import { ROOT } from './support/root.js'

/** The words of a command before the server's entry point, which must hold every option. */
function optionsBeforeEntry(words: readonly string[]): string[] {
  const entry = words.indexOf('dist/src/server.js')
  return entry < 0 ? [] : words.slice(0, entry)
}

t.test('npm start passes the server options to node', async (t) => {
  const pkg = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }
  const start = pkg.scripts.start ?? ''
  const serverCommand = start.split('&&').map((part) => part.trim()).find((part) => part.includes('dist/src/server.js')) ?? ''
  const words = serverCommand.split(/\s+/)
  t.equal(words[0], 'node', `the server command is node: ${serverCommand}`)
  for (const option of SERVER_NODE_OPTIONS) t.ok(optionsBeforeEntry(words).includes(option), `npm start has ${option}`)
})

t.test("the image's CMD passes the server options to node", async (t) => {
  const dockerfile = readFileSync(path.join(ROOT, 'Dockerfile'), 'utf8')
  const cmd = dockerfile.split('\n').filter((line) => line.startsWith('CMD ')).at(-1) ?? ''
  const words = JSON.parse(cmd.slice('CMD '.length)) as string[]
  t.equal(words[0], 'node')
  for (const option of SERVER_NODE_OPTIONS) t.ok(optionsBeforeEntry(words).includes(option), `CMD has ${option}`)
})

t.test('the options are ones this node accepts', async (t) => {
  const run = spawnSync(process.execPath, [...SERVER_NODE_OPTIONS, '-e', 'process.exit(0)'], { encoding: 'utf8' })
  t.equal(run.status, 0, run.stderr)
})
