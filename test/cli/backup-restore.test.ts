// `roost backup` and `roost restore` as an operator runs them (in this
// process, test/cli/run.ts): an organization with every kind of object is
// built through the API, backed up, and restored into an empty database and
// empty storage; the restored server answers the API exactly as the original
// did (users, messages, subscriptions, emoji, uploads' bytes). On PostgreSQL
// (pg_dump/pg_restore, uploads in a real S3-compatible server) and on an
// embedded DATA_DIR (PGlite, uploads on disk). Restoring over a database that
// holds data is refused unless --force; damaged archives are refused whole.
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { existsSync, readdirSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { randomUUID } from 'node:crypto'
import t, { type Test } from 'tap'
import { create as createTar, extract, list as listTar } from 'tar'
import type { FastifyInstance } from 'fastify'
import { buildApp } from '../../src/app.js'
import { openDatabase, type Database } from '../../src/db/client.js'
import { servicesOver } from '../../src/node-services.js'
import { memoryBackends, openBackends } from '../../src/backends/index.js'
import { MemoryEventBus } from '../../src/events/memory-bus.js'
import { defaultMigrationsDir, readMigrations } from '../../src/db/migrate.js'
import { SERVICE_VERSION } from '../../src/version.js'
import type { Config } from '../../src/config.js'
import { throwawayDatabase } from '../support/throwaway-db.js'
import { testConfig, TEST_REDIS_URL } from '../support/config.js'
import { as } from '../support/client.js'
import { expectSuccess } from '../support/expect.js'
import { multipart, sendMultipart } from '../support/multipart.js'
import { startS3Server, type S3Settings } from '../storage/s3-server.js'
import { printed, runCli } from './run.js'
import { buildFixtureOrganization, FIXTURE_UPLOAD, type Person } from './org-fixture.js'

t.setTimeout(900_000)

const EMBEDDED_UPLOAD = Buffer.from('bytes kept across a backup\n')

const s3Env = (s3: S3Settings): Record<string, string> => ({
  S3_ENDPOINT: s3.endpoint,
  S3_BUCKET: s3.bucket,
  S3_REGION: s3.region,
  S3_ACCESS_KEY_ID: s3.accessKeyId,
  S3_SECRET_ACCESS_KEY: s3.secretAccessKey,
})

/** A Roost app over `database` with `config`, closed at teardown (or earlier by the caller). */
async function appOver(t: Test, config: Config, database: Database, redis: boolean): Promise<{ app: FastifyInstance; close: () => Promise<void> }> {
  const backends = redis ? await openBackends(config) : memoryBackends({ rateLimiting: false }, { bus: new MemoryEventBus() })
  const app = await buildApp({ services: servicesOver(config, database, backends) })
  let closed = false
  const close = async () => {
    if (closed) return
    closed = true
    await app.close()
    await backends.close()
    await database.close()
  }
  t.teardown(close)
  return { app, close }
}

/** What the API shows each person: users, messages (with reactions, flags, edits), subscriptions, custom emoji, and every linked upload's bytes. */
async function snapshot(t: Test, app: FastifyInstance, people: Person[], host?: string): Promise<unknown> {
  const fx = host ? { host } : undefined
  const views: unknown[] = []
  for (const p of people) {
    const api = as(app, p, fx)
    const messages = expectSuccess(t, await api.get('/messages', { anchor: 'newest', num_before: 100, num_after: 0, narrow: '[]', apply_markdown: 'false' })).messages as { content: string }[]
    const uploads: Record<string, string> = {}
    for (const m of messages) {
      for (const [, url] of m.content.matchAll(/\((\/user_uploads\/[^)]+)\)/g)) {
        const res = await api.request('GET', url!, {}, { outsideApi: true })
        uploads[url!] = `${res.statusCode} ${res.rawPayload.toString('base64')}`
      }
    }
    views.push({
      me: expectSuccess(t, await api.get('/users/me')),
      users: expectSuccess(t, await api.get('/users')).members,
      messages,
      uploads,
      subscriptions: expectSuccess(t, await api.get('/users/me/subscriptions')).subscriptions,
      emoji: expectSuccess(t, await api.get('/realm/emoji')).emoji,
    })
  }
  return views
}

/** The archive's member names and its manifest. */
async function readArchive(file: string): Promise<{ members: string[]; manifest: Record<string, any> }> {
  const members: string[] = []
  await listTar({ file, onReadEntry: (entry) => void members.push(entry.path) })
  const dir = await mkdtemp(path.join(os.tmpdir(), 'roost-backup-read-'))
  try {
    await extract({ file, cwd: dir }, ['manifest.json'])
    return { members, manifest: JSON.parse(await readFile(path.join(dir, 'manifest.json'), 'utf8')) as Record<string, any> }
  } finally {
    await rm(dir, { recursive: true, force: true })
  }
}

const backedUp = (stdout: string): string => {
  const match = /^backed up to (\S+): /m.exec(stdout)
  if (!match) throw new Error(`no 'backed up to' line in:\n${stdout}`)
  return match[1]!
}

t.test('PostgreSQL with uploads on S3: back up, restore into an empty database and bucket, refuse a full one, --force replaces it', async (t) => {
  const scratch = await mkdtemp(path.join(os.tmpdir(), 'roost-backup-test-'))
  t.teardown(() => rm(scratch, { recursive: true, force: true }))
  const s3 = await startS3Server(t)
  const prefix = `test:${randomUUID()}`
  const server = async (name: string) => {
    const url = await throwawayDatabase(t)
    const bucket = await s3.newBucket()
    const env = { DATABASE_URL: url, REDIS_URL: TEST_REDIS_URL, REDIS_PREFIX: prefix, EXTERNAL_URL: 'http://localhost:9991', DATA_DIR: path.join(scratch, name), ...s3Env(bucket) }
    const config = testConfig({ databaseUrl: url, redisUrl: TEST_REDIS_URL, redisPrefix: prefix, rateLimiting: false, dataDir: env.DATA_DIR, s3: bucket })
    return { env, config, url, cli: (args: string[]) => runCli(args, env) }
  }

  const source = await server('source')
  t.equal((await source.cli(['migrate'])).code, 0)
  const running = await appOver(t, source.config, await openDatabase({ databaseUrl: source.url }), true)
  const { people } = await buildFixtureOrganization(t, running.app, source.cli, 'acme')
  const before = await snapshot(t, running.app, people)
  t.match(JSON.stringify(before), FIXTURE_UPLOAD.toString('base64'), 'the snapshot holds the upload’s bytes')

  const made = await source.cli(['backup', '--output', scratch])
  t.equal(made.code, 0, made.stderr)
  const archive = backedUp(made.stdout)
  t.equal(path.dirname(archive), scratch, 'a dated file in the directory given')
  t.match(path.basename(archive), /^roost-backup-\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d-\d{3}Z\.tar\.gz$/)
  t.match(made.stdout, /^backed up to \S+: PostgreSQL dump at migration \S+, [1-9]\d* uploads \(\d+\.\d MiB\)\n$/)
  t.match(made.stderr, 'roost: database: pg_dump (custom format)…')
  t.same(readdirSync(scratch).filter((name) => name.startsWith('.roost-backup-') || name.endsWith('.partial')), [], 'no staging left behind')

  const { members, manifest } = await readArchive(archive)
  const migrations = (await readMigrations(defaultMigrationsDir())).map((m) => m.name)
  t.equal(manifest.format, 'roost-backup')
  t.equal(manifest.formatVersion, 1)
  t.equal(manifest.roostVersion, SERVICE_VERSION)
  t.same(manifest.migrations, migrations, 'every migration of this release, by name')
  t.match(manifest.database, { kind: 'postgresql', file: 'database.dump', pgDumpVersion: Number })
  t.equal(manifest.uploads.storage, 's3')
  t.ok(manifest.uploads.count >= 3, 'the upload, the avatar and the custom emoji')
  t.same(manifest.uploads.files.map((f: { file: string }) => f.file), manifest.uploads.files.map((_: unknown, i: number) => `uploads/${i + 1}`))
  t.same([...members].sort(), ['database.dump', 'manifest.json', 'uploads/', ...manifest.uploads.files.map((f: { file: string }) => f.file)].sort())
  t.ok(manifest.uploads.files.some((f: { key: string; contentType: string; size: number }) => f.key.endsWith('/numbers.txt') && f.contentType === 'text/plain' && f.size === FIXTURE_UPLOAD.length))

  // After the backup: a message that the restore must not bring back.
  const [owner] = people as [Person]
  expectSuccess(t, await as(running.app, owner).post('/messages', { type: 'stream', to: 'design', topic: 'later', content: 'written after the backup' }))
  await running.close()

  const target = await server('target')
  await t.test('restore into an empty database and an empty bucket gives the same answers', async (t) => {
    const restored = await target.cli(['restore', archive])
    t.equal(restored.code, 0, restored.stderr)
    t.match(restored.stdout, `restored the backup of ${manifest.createdAt} (Roost ${SERVICE_VERSION}): ${manifest.uploads.count} uploads\n`)
    t.match(restored.stderr, 'roost: database: pg_restore…')
    const { app, close } = await appOver(t, target.config, await openDatabase({ databaseUrl: target.url }), true)
    t.same(await snapshot(t, app, people), before, 'users, messages, subscriptions, emoji and uploads as before')
    // New writes work on the restored database (its sequences came back too), uploads included.
    expectSuccess(t, await as(app, owner).post('/messages', { type: 'stream', to: 'design', topic: 'restored', content: 'after the restore' }))
    expectSuccess(t, await sendMultipart(app, owner, 'POST', '/user_uploads', [{ name: 'file', fileName: 'new.txt', contentType: 'text/plain', data: 'new' }]))
    await close()
  })

  await t.test('a database that holds data is refused without --force, replaced with it', async (t) => {
    const refused = await target.cli(['restore', archive])
    t.equal(refused.code, 1)
    t.match(refused.stderr, /^roost: the database postgresql:\/\/postgres@127\.0\.0\.1:5432\/roost_test_\w+ is not empty \(\d+ tables and sequences\): restore refuses to replace it; stop every Roost node and run again with --force to replace its contents, or restore into an empty database\n$/m)
    const forced = await target.cli(['restore', archive, '--force'])
    t.equal(forced.code, 0, forced.stderr)
    t.match(forced.stderr, /roost: database: --force: dropping the \d+ tables and sequences of /)
    const { app, close } = await appOver(t, target.config, await openDatabase({ databaseUrl: target.url }), true)
    const after = await snapshot(t, app, people)
    t.same(after, before, 'the message sent after the restore is gone again')
    t.notMatch(JSON.stringify(after), 'after the restore')
    await close()
  })

  await t.test('restore refuses an embedded backup on PostgreSQL, and a damaged archive, before touching anything', async (t) => {
    const fresh = await server('fresh')
    const repack = async (name: string, change: (dir: string) => Promise<void>) => {
      const dir = await mkdtempIn(path.join(scratch, `repack-${name}`))
      await extract({ file: archive, cwd: dir })
      await change(dir)
      const file = path.join(scratch, `${name}.tar.gz`)
      await createTar({ gzip: true, file, cwd: dir }, readdirSync(dir))
      return file
    }
    const damaged = await repack('damaged', async (dir) => writeFile(path.join(dir, 'uploads', '1'), 'not what was uploaded'))
    const res = await fresh.cli(['restore', damaged])
    t.equal(res.code, 1)
    t.match(res.stderr, /is damaged: uploads\/1 \(\S+\) does not match its size and SHA-256 in manifest\.json/)
    const newer = await repack('newer', async (dir) => {
      const m = JSON.parse(await readFile(path.join(dir, 'manifest.json'), 'utf8')) as { migrations: string[]; roostVersion: string }
      m.migrations.push('29990101000000_from_the_future')
      m.roostVersion = '99.0'
      await writeFile(path.join(dir, 'manifest.json'), JSON.stringify(m))
    })
    const tooNew = await fresh.cli(['restore', newer])
    t.equal(tooNew.code, 1)
    t.match(tooNew.stderr, 'was written by Roost 99.0, whose database has migrations this release does not know (29990101000000_from_the_future): restore it with that release or a newer one')
    const embedded = await repack('embedded', async (dir) => {
      const m = JSON.parse(await readFile(path.join(dir, 'manifest.json'), 'utf8')) as Record<string, unknown>
      m.database = { kind: 'embedded', directory: 'pglite' }
      await writeFile(path.join(dir, 'manifest.json'), JSON.stringify(m))
      await mkdir(path.join(dir, 'pglite'))
      await writeFile(path.join(dir, 'pglite', 'PG_VERSION'), '17\n')
    })
    const wrongKind = await fresh.cli(['restore', embedded])
    t.equal(wrongKind.code, 1)
    t.match(wrongKind.stderr, 'holds an embedded (PGlite) database: restore it with DATABASE_URL unset, into DATA_DIR')
    const hostile = path.join(scratch, 'hostile.tar.gz')
    await writeFile(path.join(scratch, 'evil.txt'), 'x')
    await createTar({ gzip: true, file: hostile, cwd: scratch, preservePaths: true }, ['evil.txt'])
    const evil = await fresh.cli(['restore', hostile])
    t.equal(evil.code, 1)
    t.match(evil.stderr, "is not a Roost backup: unexpected member 'evil.txt'")
    const garbage = path.join(scratch, 'garbage.tar.gz')
    await writeFile(garbage, 'this is not an archive')
    const notTar = await fresh.cli(['restore', garbage])
    t.equal(notTar.code, 1)
    t.match(notTar.stderr, 'is not a readable .tar.gz archive')
    const missing = await fresh.cli(['restore', path.join(scratch, 'nope.tar.gz')])
    t.equal(missing.code, 1)
    t.match(missing.stderr, 'nope.tar.gz is not a file')
    // Nothing was written: the fresh database is still empty, and restores.
    const ok = await fresh.cli(['restore', archive])
    t.equal(ok.code, 0, ok.stderr)
  })

  await t.test('backup names its mistakes', async (t) => {
    const empty = await throwawayDatabase(t)
    const noSchema = await runCli(['backup', '--output', scratch], { DATABASE_URL: empty, EXTERNAL_URL: 'http://localhost:9991', DATA_DIR: path.join(scratch, 'x') })
    t.equal(noSchema.code, 1)
    t.match(noSchema.stderr, 'roost: the database holds no Roost schema (no applied migrations): nothing to back up')
    const noDir = await source.cli(['backup', '--output', path.join(scratch, 'no-such-dir', 'b.tar.gz')])
    t.equal(noDir.code, 1)
    t.match(noDir.stderr, `the directory of ${path.join(scratch, 'no-such-dir', 'b.tar.gz')} does not exist`)
    const noTools = await runCli(['backup', '--output', scratch], { ...source.env, PATH: '/nonexistent' })
    if (existsSync('/usr/lib/postgresql')) {
      t.equal(noTools.code, 0, 'found in /usr/lib/postgresql/*/bin without the PATH')
    } else {
      t.equal(noTools.code, 1)
      t.match(noTools.stderr, 'pg_dump not found on the PATH or in /usr/lib/postgresql/*/bin')
    }
  })
})

async function mkdtempIn(dir: string): Promise<string> {
  await rm(dir, { recursive: true, force: true })
  await mkdir(dir, { recursive: true })
  return dir
}

t.test('embedded DATA_DIR: back up with the server stopped, restore into an empty DATA_DIR', async (t) => {
  const scratch = await mkdtemp(path.join(os.tmpdir(), 'roost-backup-embedded-'))
  t.teardown(() => rm(scratch, { recursive: true, force: true }))
  const dataDir = path.join(scratch, 'data')
  const env = { DATA_DIR: dataDir, EXTERNAL_URL: 'http://localhost:9991' }
  const created = await runCli(['org', 'create', '--root', '--name', 'Home', '--owner-email', 'me@home.example.com'], env)
  t.equal(created.code, 0, created.stderr)
  const kid = await runCli(['user', 'create', '--email', 'kid@home.example.com', '--name', 'Kid'], env)
  t.equal(kid.code, 0, kid.stderr)
  const people: Person[] = [
    { id: 0, deliveryEmail: 'me@home.example.com', apiKey: printed(created.stdout, 'owner API key') },
    { id: 0, deliveryEmail: 'kid@home.example.com', apiKey: printed(kid.stdout, 'API key') },
  ]
  const host = 'localhost:9991'
  const embeddedApp = async (dir: string) => appOver(t, testConfig({ dataDir: dir }), await openDatabase({ dataDir: dir }), false)

  const running = await embeddedApp(dataDir)
  const [me, child] = people as [Person, Person]
  const { body, contentType } = multipart([{ name: 'file', fileName: 'kept.txt', contentType: 'text/plain', data: EMBEDDED_UPLOAD }])
  const upload = await running.app.inject({
    method: 'POST',
    url: '/api/v1/user_uploads',
    headers: { authorization: `Basic ${Buffer.from(`${me.deliveryEmail}:${me.apiKey}`).toString('base64')}`, host, 'content-type': contentType },
    payload: body,
  })
  const url = expectSuccess(t, upload).url as string
  const meApi = as(running.app, me, { host })
  expectSuccess(t, await meApi.post('/users/me/subscriptions', { subscriptions: [{ name: 'home' }], principals: [] }))
  expectSuccess(t, await meApi.post('/messages', { type: 'stream', to: 'home', topic: 'files', content: `the [file](${url})` }))
  expectSuccess(t, await as(running.app, child, { host }).post('/messages', { type: 'direct', to: [me.deliveryEmail], content: 'hello from the kid' }))
  const before = await snapshot(t, running.app, people, host)
  t.match(JSON.stringify(before), EMBEDDED_UPLOAD.toString('base64'))
  await running.close()

  await t.test('refused while a server holds DATA_DIR', async (t) => {
    const pidFile = path.join(dataDir, 'roost.pid')
    await writeFile(pidFile, `${process.ppid}\nserver\n`)
    t.teardown(() => rm(pidFile, { force: true }))
    const refused = await runCli(['backup', '--output', scratch], env)
    t.equal(refused.code, 1)
    t.match(refused.stderr, `is in use by a Roost server (process ${process.ppid}); stop it first`)
  })

  const archive = path.join(scratch, 'home.tar.gz')
  const made = await runCli(['backup', '--output', archive], env)
  t.equal(made.code, 0, made.stderr)
  t.equal(backedUp(made.stdout), archive, 'the file given')
  t.match(made.stdout, /: embedded database at migration \S+, 1 uploads \(0\.0 MiB\)\n$/)
  const { members, manifest } = await readArchive(archive)
  t.match(manifest.database, { kind: 'embedded', directory: 'pglite' })
  t.equal(manifest.uploads.storage, 'local')
  t.ok(members.includes('pglite/PG_VERSION'), 'the PGlite data directory')
  t.notOk(existsSync(path.join(dataDir, 'roost.pid')), 'DATA_DIR is free again')

  const target = path.join(scratch, 'restored')
  const targetEnv = { DATA_DIR: target, EXTERNAL_URL: 'http://localhost:9991' }
  const restored = await runCli(['restore', archive], targetEnv)
  t.equal(restored.code, 0, restored.stderr)
  t.match(restored.stdout, `restored the backup of ${manifest.createdAt} (Roost ${SERVICE_VERSION}): 1 uploads\n`)
  t.same(readdirSync(target).filter((name) => name.startsWith('.restore-')), [], 'no staging left behind')
  {
    const { app, close } = await embeddedApp(target)
    t.same(await snapshot(t, app, people, host), before, 'users, messages and the upload’s bytes as before')
    expectSuccess(t, await as(app, me, { host }).post('/messages', { type: 'stream', to: 'home', topic: 'files', content: 'after the restore' }))
    await close()
  }

  const refused = await runCli(['restore', archive], targetEnv)
  t.equal(refused.code, 1)
  t.match(refused.stderr, `roost: ${path.join(target, 'db')} (DATA_DIR) already holds a database: restore refuses to replace it; run again with --force to replace it, or restore into an empty DATA_DIR\n`)
  const forced = await runCli(['restore', archive, '--force'], targetEnv)
  t.equal(forced.code, 0, forced.stderr)
  {
    const { app, close } = await embeddedApp(target)
    t.same(await snapshot(t, app, people, host), before, 'the message sent after the restore is gone')
    await close()
  }
})

