// Fast restarts (issue 13 item 6): `npm start` builds first, and a build with
// nothing changed since the last one does no work: no Prisma generation, no
// tsc run, no file of dist/ written. (npm test has just built this tree.)
import t from 'tap'
import { spawnSync } from 'node:child_process'
import { statSync } from 'node:fs'
import path from 'node:path'
import { ROOT as root } from '../support/root.js'

const mtime = (file: string) => statSync(path.join(root, file)).mtimeMs

t.test('a build with nothing changed writes nothing', async (t) => {
  const watched = ['dist/src/server.js', 'dist/.tsbuildinfo', 'dist/.build-inputs', 'src/db/generated/client.ts']
  const before = watched.map(mtime)
  const result = spawnSync(process.execPath, [path.join(root, 'scripts/build.mjs')], { cwd: root, encoding: 'utf8' })
  t.equal(result.status, 0, result.stderr)
  t.equal(result.stdout, '', 'nothing printed: neither prisma generate nor tsc ran')
  t.same(watched.map(mtime), before, 'no output file rewritten')
})
