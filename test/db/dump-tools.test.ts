// How `roost backup` and `roost restore` find pg_dump and pg_restore
// (src/db/dump.ts findPgTool): the newest that runs, from the PATH or
// /usr/lib/postgresql/*/bin, and when there is none a message naming the
// missing tool; and that backup and restore stop with it before they write
// or change anything.
import t from 'tap'
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { DumpToolError, findPgTool } from '../../src/db/dump.js'
import { createBackup } from '../../src/backup/backup.js'
import { restoreBackup } from '../../src/backup/restore.js'
import { testConfig } from '../support/config.js'

const scratch = mkdtempSync(path.join(tmpdir(), 'roost-dump-tools-'))
t.teardown(() => rmSync(scratch, { recursive: true, force: true }))

/** A directory holding a `name` script that prints `output` for --version. */
function fakeTool(dir: string, name: string, output: string): string {
  mkdirSync(dir, { recursive: true })
  writeFileSync(path.join(dir, name), `#!/bin/sh\necho '${output}'\n`)
  chmodSync(path.join(dir, name), 0o755)
  return dir
}

const emptyDir = path.join(scratch, 'empty')
mkdirSync(emptyDir)
const noSystemRoot = path.join(scratch, 'no-postgresql')

t.test('no pg_dump on the PATH nor in the system directory: an error naming the tool', async (t) => {
  const error = await findPgTool('pg_dump', { PATH: emptyDir }, noSystemRoot).catch((e: unknown) => e)
  t.ok(error instanceof DumpToolError)
  t.equal(
    (error as Error).message,
    `pg_dump not found on the PATH or in ${noSystemRoot}/*/bin: install the PostgreSQL client tools of the server's version or newer (Debian and Ubuntu: apt-get install postgresql-client; the container image has them)`,
  )
  const restore = await findPgTool('pg_restore', {}, noSystemRoot).catch((e: unknown) => e)
  t.match((restore as Error).message, /^pg_restore not found on the PATH/)
})

t.test('a file of that name that is not a PostgreSQL tool does not count', async (t) => {
  const broken = fakeTool(path.join(scratch, 'broken'), 'pg_dump', 'not a database tool')
  await t.rejects(findPgTool('pg_dump', { PATH: broken }, noSystemRoot), DumpToolError)
})

t.test('the newest of the PATH and the system directory is taken', async (t) => {
  const onPath = fakeTool(path.join(scratch, 'path-bin'), 'pg_dump', 'pg_dump (PostgreSQL) 15.8')
  const root = path.join(scratch, 'system')
  fakeTool(path.join(root, '17', 'bin'), 'pg_dump', 'pg_dump (PostgreSQL) 17.2')
  fakeTool(path.join(root, '16', 'bin'), 'pg_dump', 'pg_dump (PostgreSQL) 16.6')
  t.same(await findPgTool('pg_dump', { PATH: [emptyDir, onPath].join(path.delimiter) }, root), { file: path.join(root, '17', 'bin', 'pg_dump'), version: 17 })
  t.same(await findPgTool('pg_dump', { PATH: onPath }, noSystemRoot), { file: path.join(onPath, 'pg_dump'), version: 15 })
})

t.test('backup and restore on PostgreSQL stop before anything is written when the tool is missing', async (t) => {
  const config = testConfig({ databaseUrl: 'postgresql://postgres@127.0.0.1:1/none', dataDir: path.join(scratch, 'data') })
  const out = path.join(scratch, 'out')
  mkdirSync(out)
  await t.rejects(createBackup({ config, env: { PATH: emptyDir }, output: out, progress: () => {}, pgSystemRoot: noSystemRoot }), { name: 'DumpToolError', message: /^pg_dump not found/ })
  t.same(readdirSync(out), [], 'no archive, no staging directory')
  const archive = path.join(out, 'any.tar.gz')
  writeFileSync(archive, 'x')
  await t.rejects(restoreBackup({ config, env: { PATH: emptyDir }, file: archive, force: true, progress: () => {}, pgSystemRoot: noSystemRoot }), { name: 'DumpToolError', message: /^pg_restore not found/ })
})
