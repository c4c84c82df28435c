// The admin CLI on an embedded DATA_DIR (PGlite): it creates the root
// organization and people there, and it refuses to open the database while
// a server (or another command) holds DATA_DIR/roost.pid. The commands run in
// this process (test/cli/run.ts), except a few that run the real binary
// (bin/roost.js) as a process: its standard input, output and exit code,
// and an export of the organization imported again beside it.
import { mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs'
import { spawnSync } from 'node:child_process'
import { once } from 'node:events'
import { tmpdir } from 'node:os'
import path from 'node:path'
import t from 'tap'
import { buildApp } from '../../src/app.js'
import { openDatabase } from '../../src/db/client.js'
import { MemoryEventBus } from '../../src/events/memory-bus.js'
import { servicesOver } from '../../src/node-services.js'
import { memoryBackends } from '../../src/backends/index.js'
import { testConfig } from '../support/config.js'
import { anon, as } from '../support/client.js'
import { expectSuccess } from '../support/expect.js'
import { startServer } from '../e2e/start-server.js'
import { printed, runCli, spawnCli } from './run.js'

t.setTimeout(900_000)

t.test('roost admin commands on an embedded DATA_DIR', async (t) => {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'roost-cli-'))
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }))
  const env = { DATA_DIR: dataDir, EXTERNAL_URL: 'http://localhost:9991' }
  const pidFile = path.join(dataDir, 'roost.pid')

  const created = await runCli(['org', 'create', '--root', '--name', 'Home', '--owner-email', 'me@home.example.com'], env)
  t.equal(created.code, 0, created.stderr)
  t.match(created.stdout, "created the organization 'Home' at http://localhost:9991")
  const password = printed(created.stdout, 'owner password')
  const user = await spawnCli(['user', 'create', '--email', 'kid@home.example.com', '--name', 'Kid', '--role', 'guest', '--password-stdin'], env, 'kid-password-1')
  t.equal(user.code, 0, user.stderr)
  t.match(user.stdout, /^created kid@home\.example\.com \(user ID \d+, guest\) in 'Home'\nAPI key: {2}[A-Za-z0-9]{32}\n$/)
  t.notOk(existsSync(pidFile), 'each command frees DATA_DIR when it ends')

  t.test('refuses while a live process holds DATA_DIR, takes over a stale lock', async (t) => {
    // The commands run in this process: the live holder is its parent (a file naming this process is its own).
    const holder = process.ppid
    writeFileSync(pidFile, `${holder}\nserver\n`)
    const refused = await runCli(['org', 'list'], env)
    t.equal(refused.code, 1)
    t.match(refused.stderr, `is in use by a Roost server (process ${holder}); stop it first`)
    t.equal(readFileSync(pidFile, 'utf8'), `${holder}\nserver\n`, 'the holder keeps its lock')
    const gone = spawnSync(process.execPath, ['-e', '0']).pid
    writeFileSync(pidFile, `${gone}\nserver\n`)
    const listed = await runCli(['org', 'list'], env)
    t.equal(listed.code, 0, listed.stderr)
    t.match(listed.stdout, '(root)\thttp://localhost:9991\t2\tHome')
    t.notOk(existsSync(pidFile))
  })

  t.test('what the commands made is there for the server', async (t) => {
    const database = await openDatabase({ dataDir })
    const bus = new MemoryEventBus()
    const app = await buildApp({ services: servicesOver(testConfig({ dataDir }), database, memoryBackends({ rateLimiting: false }, { bus })) })
    t.teardown(async () => {
      await app.close()
      await database.close()
    })
    const root = { host: 'localhost:9991' }
    t.equal(expectSuccess(t, await anon(app, root).get('/server_settings')).realm_name, 'Home')
    const key = expectSuccess(t, await anon(app, root).post('/fetch_api_key', { username: 'me@home.example.com', password })).api_key as string
    const kid = expectSuccess(t, await anon(app, root).post('/fetch_api_key', { username: 'kid@home.example.com', password: 'kid-password-1' }))
    const members = expectSuccess(t, await as(app, { deliveryEmail: 'me@home.example.com', apiKey: key }, root).get('/users')).members as { email: string; role: number }[]
    t.equal(members.find((m) => m.email === 'kid@home.example.com')?.role, 600)
    t.ok(kid.api_key)
  })

  t.test('export and import on PGlite, through the real binary', async (t) => {
    const archive = path.join(dataDir, 'home.tar.gz')
    const exported = await spawnCli(['export', '', '--output', archive], env)
    t.equal(exported.code, 0, exported.stderr)
    t.match(exported.stdout, `exported 'Home' to ${archive}: 2 users`)
    const imported = await spawnCli(['import', archive, '--subdomain', 'home-copy'], env)
    t.equal(imported.code, 0, imported.stderr)
    t.match(imported.stdout, 'imported the organization at http://home-copy.localhost:9991: 2 users')
    const listed = await runCli(['org', 'list'], env)
    t.match(listed.stdout, 'home-copy\thttp://home-copy.localhost:9991\t2\tHome')
    t.notOk(existsSync(pidFile), 'both commands freed DATA_DIR')
  })
})

t.test('a running embedded server holds DATA_DIR against the CLI', async (t) => {
  const server = await startServer({ startTimeoutMs: 600_000 })
  t.teardown(() => server.stop())
  t.equal(readFileSync(path.join(server.dataDir, 'roost.pid'), 'utf8'), `${server.child.pid}\nserver\n`)
  const refused = await runCli(['user', 'create', '--email', 'x@example.org', '--name', 'Xavier'], { DATA_DIR: server.dataDir })
  t.equal(refused.code, 1)
  t.match(refused.stderr, `is in use by a Roost server (process ${server.child.pid})`)
  const pidFile = path.join(server.dataDir, 'roost.pid')
  const exited = once(server.child, 'exit')
  server.child.kill('SIGTERM')
  const [code, signal] = (await exited) as [number | null, NodeJS.Signals | null]
  t.comment(`the server exited with code ${code} and signal ${signal}`)
  // It removes the file on exit; should a file be left behind (a process ended
  // without running its exit handlers), it names a process that no longer
  // runs, which the next command treats as free (below).
  const left = existsSync(pidFile) ? readFileSync(pidFile, 'utf8') : undefined
  t.ok(left === undefined || left === `${server.child.pid}\nserver\n`, 'no other process holds DATA_DIR once the server stopped')
  const after = await runCli(['user', 'create', '--email', 'x@example.org', '--name', 'Xavier'], { DATA_DIR: server.dataDir, EXTERNAL_URL: 'http://localhost:9991' })
  t.equal(after.code, 0, after.stderr)
})
