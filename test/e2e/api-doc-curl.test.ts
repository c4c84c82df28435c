// The curl examples of docs/api.md, run exactly as written (each ```sh block
// of "Trying the API with curl", after the one that sets the variables) against
// a freshly started server, with ROOST, EMAIL, PASSWORD and API_KEY taken
// from what it printed. Every JSON reply must be a success envelope.
import { spawnSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import path from 'node:path'
import t from 'tap'
import { startServer } from './start-server.js'
import { ROOT } from '../support/root.js'

function curlBlocks(): string[] {
  const doc = readFileSync(path.join(ROOT, 'docs/api.md'), 'utf8')
  const section = doc.split(/^## /m).find((s) => s.startsWith('Trying the API with curl'))
  if (!section) throw new Error('docs/api.md has no "Trying the API with curl" section')
  const blocks = [...section.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1])
  return blocks.filter((b) => !/^API_KEY=/m.test(b))
}

t.test('docs/api.md curl examples against a running server', async (t) => {
  const server = await startServer()
  t.teardown(() => server.stop())
  const env = {
    ...process.env,
    ROOST: server.url.replace('127.0.0.1', 'localhost'),
    EMAIL: server.email,
    PASSWORD: server.password,
    API_KEY: server.apiKey,
  }
  // One reply per line: the wrapper ends each curl output with a newline.
  const prelude = 'set -euo pipefail\ncurl() { command curl "$@"; echo; }\n'
  for (const block of curlBlocks()) {
    const paths = [...block.matchAll(/\/api\/v1\/[a-z_/]+/g)].map((m) => m[0])
    const title = `${paths.join(' then ')} works as written`
    t.test(title, async (t) => {
      const run = spawnSync('bash', ['-c', prelude + block], { env, encoding: 'utf8', timeout: 30_000 })
      t.equal(run.status, 0, `exit status; stderr: ${run.stderr}`)
      const replies = run.stdout.split('\n').filter((line) => line.trim() !== '')
      t.ok(replies.length > 0, 'printed a reply')
      for (const line of replies) {
        let body: unknown
        try {
          body = JSON.parse(line)
        } catch {
          body = line
        }
        t.match(body, { result: 'success' }, line.slice(0, 300))
      }
    })
  }
})
