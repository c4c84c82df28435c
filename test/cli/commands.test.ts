// The admin CLI's commands (run in this process, as bin/roost.js runs them:
// test/cli/run.ts) on a throwaway PostgreSQL database and a Redis key prefix
// of their own, next to a Roost app over the same database and Redis: what
// each command prints, its exit code, and what it changed as the API (and a
// live event queue) sees it. The real binary as a process:
// test/cli/embedded.test.ts.
import { randomUUID } from 'node:crypto'
import t from 'tap'
import { buildApp } from '../../src/app.js'
import { openDatabase } from '../../src/db/client.js'
import { servicesOver } from '../../src/node-services.js'
import { openBackends } from '../../src/backends/index.js'
import { throwawayDatabase } from '../support/throwaway-db.js'
import { testConfig, TEST_REDIS_URL } from '../support/config.js'
import { anon, as } from '../support/client.js'
import { expectError, expectSuccess } from '../support/expect.js'
import { printed, runCli } from './run.js'
import { eventually } from '../support/eventually.js'
import { json, logIn } from '../support/browser.js'

t.setTimeout(900_000)

t.test('roost admin commands on PostgreSQL and Redis', async (t) => {
  const url = await throwawayDatabase(t)
  const prefix = `test:${randomUUID()}`
  const env = { DATABASE_URL: url, REDIS_URL: TEST_REDIS_URL, REDIS_PREFIX: prefix, EXTERNAL_URL: 'http://localhost:9991' }
  const cli = (args: string[], input?: string) => runCli(args, env, input)
  const acme = { host: 'acme.localhost' }

  t.test('migrate applies the migrations once; migrate status tells applied from pending', async (t) => {
    const before = await cli(['migrate', 'status'])
    t.equal(before.code, 1, 'pending migrations: exit code 1')
    t.match(before.stderr, /^roost: \d+ migration\(s\) pending: run 'roost migrate'\n$/)
    const pending = before.stdout.trimEnd().split('\n')
    t.match(pending.at(-1), /^0 applied, \d+ pending$/)
    t.ok(pending.slice(0, -1).every((line) => /^pending {2}\d{14}_\w+$/.test(line)), 'one line per pending migration')
    const first = await cli(['migrate'])
    t.equal(first.code, 0, first.stderr)
    t.match(first.stdout, /applied \d+ migration\(s\)/)
    const again = await cli(['migrate'])
    t.equal(again.code, 0)
    t.match(again.stdout, 'the database schema is up to date')
    const after = await cli(['migrate', 'status', '--json'])
    t.equal(after.code, 0, after.stderr)
    const status = JSON.parse(after.stdout)
    t.same(status.applied.map((m: { name: string }) => m.name), pending.slice(0, -1).map((line) => line.split(/\s+/)[1]))
    t.match(status, { pending: [], failed: [], unknown: [] })
    const table = await cli(['migrate', 'status'])
    t.equal(table.code, 0)
    t.match(table.stdout, new RegExp(`^applied {2}\\d{14}_\\w+ {2}\\d{4}-\\d\\d-\\d\\dT`))
    t.match(table.stdout, new RegExp(`\\n${status.applied.length} applied, 0 pending\\n$`))
  })

  const config = testConfig({ databaseUrl: url, redisUrl: TEST_REDIS_URL, redisPrefix: prefix, rateLimiting: false })
  const database = await openDatabase({ databaseUrl: url })
  const backends = await openBackends(config)
  const app = await buildApp({ services: servicesOver(config, database, backends) })
  t.teardown(async () => {
    await app.close()
    await backends.close()
    await database.close()
  })

  let owner = { deliveryEmail: 'boss@acme.example.com', apiKey: '' }
  let password = ''
  let moPassword = ''

  t.test('org create makes the organization and prints its owner credentials', async (t) => {
    const res = await cli(['org', 'create', '--name', 'Acme', '--subdomain', 'acme', '--owner-email', 'boss@acme.example.com', '--owner-name', 'Bea Boss'])
    t.equal(res.code, 0, res.stderr)
    t.match(res.stdout, "created the organization 'Acme' at http://acme.localhost:9991")
    password = printed(res.stdout, 'owner password')
    owner = { ...owner, apiKey: printed(res.stdout, 'owner API key') }
    const settings = expectSuccess(t, await anon(app, acme).get('/server_settings'))
    t.equal(settings.realm_name, 'Acme')
    t.equal(settings.realm_url, 'http://acme.localhost:9991')
    const login = expectSuccess(t, await anon(app, acme).post('/fetch_api_key', { username: owner.deliveryEmail, password }))
    t.equal(login.api_key, owner.apiKey)
    const me = expectSuccess(t, await as(app, owner, acme).get('/users/me'))
    t.match(me, { full_name: 'Bea Boss', role: 100 })
  })

  t.test('org create refuses bad or taken subdomains and creates nothing', async (t) => {
    const cases: [string[], RegExp][] = [
      [['--subdomain', 'acme'], /Subdomain already in use/],
      [['--subdomain', 'ab'], /length 3 or greater/],
      [['--subdomain', 'Big_Co'], /lowercase letters, numbers, and '-'s/],
      [['--subdomain', '-acme'], /cannot start or end with a '-'/],
      [['--subdomain', 'a'.repeat(41)], /at most 40 characters/],
      [['--subdomain', 'admins'], /Subdomain reserved/],
      [['--subdomain', 'fine', '--root'], /exactly one of --subdomain/],
      [['--subdomain', 'fine2', '--owner-email', 'not-an-email'], /Bad name or username/],
    ]
    // Refusals change nothing, so they run side by side.
    const [missing, ...answers] = await Promise.all([
      cli(['org', 'create', '--name', 'Other', '--subdomain', 'other']),
      ...cases.map(([extra]) => cli(['org', 'create', '--name', 'Other', '--owner-email', 'o@other.example.com', ...extra])),
    ])
    cases.forEach(([extra, message], i) => {
      const res = answers[i]!
      t.equal(res.code, 1, `${extra.join(' ')}: exit code 1`)
      t.match(res.stderr, message)
      t.equal(res.stdout, '')
    })
    t.equal(missing.code, 2)
    t.match(missing.stderr, "required option '--owner-email <email>' not specified")
    const list = await cli(['org', 'list'])
    t.equal(list.code, 0)
    t.same(list.stdout.trim().split('\n').slice(1).map((l) => l.split('\t')[0]), ['acme'])
  })

  t.test('org create --invite prints a working owner invitation link instead of a password', async (t) => {
    const res = await cli(['org', 'create', '--name', 'Beta Org', '--subdomain', 'beta-org', '--owner-email', 'lead@beta.example.com', '--invite'])
    t.equal(res.code, 0, res.stderr)
    const link = res.stdout.split('\n').find((l) => l.includes('/join/')) ?? ''
    t.match(link, /^http:\/\/beta-org\.localhost:9991\/join\/[a-z0-9]{24}$/)
    t.notMatch(res.stdout, /password/)
    const page = await app.inject({ method: 'GET', url: new URL(link).pathname, headers: { host: 'beta-org.localhost' } })
    t.equal(page.statusCode, 200)
    t.match(page.body, 'lead@beta.example.com')
    const joined = await app.inject({
      method: 'POST',
      url: new URL(link).pathname,
      headers: { host: 'beta-org.localhost', 'content-type': 'application/x-www-form-urlencoded' },
      payload: 'full_name=Lee+Lead&password=lead-password-1',
    })
    t.ok(joined.statusCode < 400, joined.body.slice(0, 200))
    const login = expectSuccess(t, await anon(app, { host: 'beta-org.localhost' }).post('/fetch_api_key', { username: 'lead@beta.example.com', password: 'lead-password-1' }))
    const me = expectSuccess(t, await as(app, { deliveryEmail: 'lead@beta.example.com', apiKey: login.api_key as string }, { host: 'beta-org.localhost' }).get('/users/me'))
    t.equal(me.role, 100, 'the invitation makes an owner')
  })

  t.test('org list shows every organization with its URL and people', async (t) => {
    const res = await cli(['org', 'list'])
    t.equal(res.code, 0)
    t.same(res.stdout.trim().split('\n'), [
      'subdomain\turl\tusers\tname',
      'acme\thttp://acme.localhost:9991\t1\tAcme',
      'beta-org\thttp://beta-org.localhost:9991\t1\tBeta Org',
    ])
    const asJson = await cli(['org', 'list', '--json'])
    t.same(JSON.parse(asJson.stdout), [
      { subdomain: 'acme', url: 'http://acme.localhost:9991', users: 1, name: 'Acme', deactivated: false },
      { subdomain: 'beta-org', url: 'http://beta-org.localhost:9991', users: 1, name: 'Beta Org', deactivated: false },
    ])
  })

  /** The owner's queue of realm_user events, registered through the API. */
  async function ownerQueue(): Promise<{ queueId: string; events: () => Promise<Record<string, unknown>[]> }> {
    const reg = expectSuccess(t, await as(app, owner, acme).post('/register', { event_types: ['realm_user'] }))
    const queueId = reg.queue_id as string
    return {
      queueId,
      events: async () => expectSuccess(t, await as(app, owner, acme).get('/events', { queue_id: queueId, last_event_id: -1, dont_block: true })).events,
    }
  }

  let newUserId = 0
  t.test('user create adds a person with a role, and the running server tells the others', async (t) => {
    const queue = await ownerQueue()
    const res = await cli(['user', 'create', '--org', 'acme', '--email', 'mo@acme.example.com', '--name', 'Mo Moderator', '--role', 'moderator'])
    t.equal(res.code, 0, res.stderr)
    t.match(res.stdout, /created mo@acme\.example\.com \(user ID \d+, moderator\) in 'Acme'/)
    moPassword = printed(res.stdout, 'password')
    expectSuccess(t, await anon(app, acme).post('/fetch_api_key', { username: 'mo@acme.example.com', password: moPassword }))
    const users = expectSuccess(t, await as(app, owner, acme).get('/users')).members as { email: string; role: number; user_id: number }[]
    const mo = users.find((u) => u.email === 'mo@acme.example.com')
    t.equal(mo?.role, 300)
    newUserId = mo?.user_id ?? 0
    t.match(await queue.events(), [{ type: 'realm_user', op: 'add', person: { user_id: newUserId, role: 300, full_name: 'Mo Moderator' } }])
  })

  t.test('user create refuses bad input', async (t) => {
    const [taken, noOrg, root, badRole, badName] = await Promise.all([
      cli(['user', 'create', '--org', 'acme', '--email', 'mo@acme.example.com', '--name', 'Again']),
      cli(['user', 'create', '--org', 'nowhere', '--email', 'x@acme.example.com', '--name', 'Xavier']),
      cli(['user', 'create', '--email', 'x@acme.example.com', '--name', 'Xavier']),
      cli(['user', 'create', '--org', 'acme', '--email', 'x@acme.example.com', '--name', 'Xavier', '--role', 'king']),
      cli(['user', 'create', '--org', 'acme', '--email', 'x@acme.example.com', '--name', 'X']),
    ])
    t.equal(taken.code, 1)
    t.match(taken.stderr, "Email 'mo@acme.example.com' already in use")
    t.equal(noOrg.code, 1)
    t.match(noOrg.stderr, "no organization with the subdomain 'nowhere'")
    t.equal(root.code, 1)
    t.match(root.stderr, 'no organization at the root (http://localhost:9991); pass --org <subdomain>')
    t.equal(badRole.code, 2)
    t.match(badRole.stderr, "'king' is not a role: owner, administrator, moderator, member or guest")
    t.equal(badName.code, 1)
    t.match(badName.stderr, 'Name too short!')
    const users = expectSuccess(t, await as(app, owner, acme).get('/users')).members as { email: string }[]
    t.notOk(users.some((u) => u.email === 'x@acme.example.com'), 'nothing was created')
  })

  t.test('user set-role changes the role through the action (events, last-owner rule)', async (t) => {
    const queue = await ownerQueue()
    const res = await cli(['user', 'set-role', '--org', 'acme', 'MO@acme.example.com', 'admin'])
    t.equal(res.code, 0, res.stderr)
    t.match(res.stdout, 'mo@acme.example.com: moderator → administrator')
    t.equal(expectSuccess(t, await as(app, owner, acme).get(`/users/${newUserId}`)).user.role, 200)
    t.match(await queue.events(), [{ type: 'realm_user', op: 'update', person: { user_id: newUserId, role: 200 } }])
    const lastOwner = await cli(['user', 'set-role', '--org', 'acme', 'boss@acme.example.com', 'member'])
    t.equal(lastOwner.code, 1)
    t.match(lastOwner.stderr, /owner/i)
    const unknown = await cli(['user', 'set-role', '--org', 'acme', 'ghost@acme.example.com', 'admin'])
    t.equal(unknown.code, 1)
    t.match(unknown.stderr, "no user with the email 'ghost@acme.example.com' in the organization 'Acme'")
    // The address is matched exactly: `_` and `%` are not wildcards.
    const pattern = await cli(['user', 'set-role', '--org', 'acme', 'b___@acme.example.com', 'admin'])
    t.equal(pattern.code, 1)
    t.match(pattern.stderr, "no user with the email 'b___@acme.example.com' in the organization 'Acme'")
  })

  t.test('user reset-password sets the password read from standard input', async (t) => {
    const res = await cli(['user', 'reset-password', '--org', 'acme', 'mo@acme.example.com', '--password-stdin'], 'brand-new-secret\n')
    t.equal(res.code, 0, res.stderr)
    t.notMatch(res.stdout, 'brand-new-secret')
    expectSuccess(t, await anon(app, acme).post('/fetch_api_key', { username: 'mo@acme.example.com', password: 'brand-new-secret' }))
    const generated = await cli(['user', 'reset-password', '--org', 'acme', 'mo@acme.example.com'])
    moPassword = printed(generated.stdout, 'password')
    expectError(t, await anon(app, acme).post('/fetch_api_key', { username: 'mo@acme.example.com', password: 'brand-new-secret' }), { code: 'AUTHENTICATION_FAILED', status: 401 })
    expectSuccess(t, await anon(app, acme).post('/fetch_api_key', { username: 'mo@acme.example.com', password: moPassword }))
    const weak = await cli(['user', 'reset-password', '--org', 'acme', 'mo@acme.example.com', '--password-stdin'], 'abc')
    t.equal(weak.code, 1)
    t.match(weak.stderr, 'The password is too weak.')
  })

  t.test('user regenerate-api-key replaces the key at once', async (t) => {
    const before = expectSuccess(t, await anon(app, acme).post('/fetch_api_key', { username: owner.deliveryEmail, password })).api_key as string
    const res = await cli(['user', 'regenerate-api-key', '--org', 'acme', owner.deliveryEmail])
    t.equal(res.code, 0, res.stderr)
    const key = printed(res.stdout, 'API key')
    t.match(key, /^[A-Za-z0-9]{32}$/)
    t.not(key, before)
    // The command writes as another process would; the app's authentication cache hears of it through PostgreSQL's NOTIFY.
    const withOldKey = () => as(app, { deliveryEmail: owner.deliveryEmail, apiKey: before }, acme).get('/users/me')
    expectError(t, await eventually('the old key refused', withOldKey, { until: (r) => r.statusCode === 401 }).catch(withOldKey), { code: 'UNAUTHORIZED', status: 401 })
    owner = { ...owner, apiKey: key }
    expectSuccess(t, await as(app, owner, acme).get('/users/me'))
  })

  t.test('user revoke-sessions logs the user out of every browser', async (t) => {
    const first = await logIn(app, acme, owner.deliveryEmail, password)
    const second = await logIn(app, acme, owner.deliveryEmail, password)
    expectSuccess(t, await json(app, acme, first, 'GET', '/users/me'))
    const res = await cli(['user', 'revoke-sessions', '--org', 'acme', owner.deliveryEmail])
    t.equal(res.code, 0, res.stderr)
    t.equal(res.stdout.trim(), `ended 2 browser sessions of ${owner.deliveryEmail}`)
    for (const session of [first, second]) expectError(t, await json(app, acme, session, 'GET', '/users/me'), { code: 'UNAUTHORIZED', status: 401 })
    expectSuccess(t, await as(app, owner, acme).get('/users/me'))
  })

  t.test('user deactivate and reactivate', async (t) => {
    const queue = await ownerQueue()
    const off = await cli(['user', 'deactivate', '--org', 'acme', 'mo@acme.example.com'])
    t.equal(off.code, 0, off.stderr)
    t.match(off.stdout, 'deactivated mo@acme.example.com')
    t.equal(expectSuccess(t, await as(app, owner, acme).get(`/users/${newUserId}`)).user.is_active, false)
    expectError(t, await anon(app, acme).post('/fetch_api_key', { username: 'mo@acme.example.com', password: moPassword }), { code: 'USER_DEACTIVATED', status: 401 })
    const again = await cli(['user', 'deactivate', '--org', 'acme', 'mo@acme.example.com'])
    t.equal(again.code, 1)
    t.match(again.stderr, 'User is deactivated')
    const lastOwner = await cli(['user', 'deactivate', '--org', 'acme', owner.deliveryEmail])
    t.equal(lastOwner.code, 1)
    const on = await cli(['user', 'reactivate', '--org', 'acme', 'mo@acme.example.com'])
    t.equal(on.code, 0, on.stderr)
    t.equal(expectSuccess(t, await as(app, owner, acme).get(`/users/${newUserId}`)).user.is_active, true)
    const active = await cli(['user', 'reactivate', '--org', 'acme', 'mo@acme.example.com'])
    t.equal(active.code, 1)
    t.match(active.stderr, 'User is already active')
    // mo is an administrator, so a billing admin while active (can_manage_billing_group's default).
    t.match(await queue.events(), [
      { type: 'realm_user', op: 'update', person: { user_id: newUserId, is_active: false } },
      { type: 'realm_user', op: 'update', person: { user_id: newUserId, is_billing_admin: false } },
      { type: 'realm_user', op: 'update', person: { user_id: newUserId, is_active: true } },
      { type: 'realm_user', op: 'update', person: { user_id: newUserId, is_billing_admin: true } },
    ])
  })

  t.test("queue list and queue drop act on the user's live queues in Redis", async (t) => {
    const queue = await ownerQueue()
    const list = await cli(['queue', 'list', '--org', 'acme', owner.deliveryEmail])
    t.equal(list.code, 0, list.stderr)
    const row = list.stdout.split('\n').find((l) => l.startsWith(queue.queueId))
    t.match(row, /\t600\trealm_user$/)
    const asJson = await cli(['queue', 'list', '--org', 'acme', owner.deliveryEmail, '--json'])
    const listed = JSON.parse(asJson.stdout) as { queue_id: string }[]
    t.match(listed.find((q) => q.queue_id === queue.queueId), { queue_id: queue.queueId, created: String, lifespan_seconds: 600, event_types: ['realm_user'] })
    const drop = await cli(['queue', 'drop', '--org', 'acme', owner.deliveryEmail, queue.queueId])
    t.equal(drop.code, 0, drop.stderr)
    expectError(t, await as(app, owner, acme).get('/events', { queue_id: queue.queueId, last_event_id: -1, dont_block: true }), { code: 'BAD_EVENT_QUEUE_ID', status: 400 })
    const after = await cli(['queue', 'list', '--org', 'acme', owner.deliveryEmail])
    t.notMatch(after.stdout, queue.queueId)
    const gone = await cli(['queue', 'drop', '--org', 'acme', owner.deliveryEmail, queue.queueId])
    t.equal(gone.code, 1)
    t.match(gone.stderr, `has no event queue '${queue.queueId}'`)
    const other = await ownerQueue()
    const notHis = await cli(['queue', 'drop', '--org', 'acme', 'mo@acme.example.com', other.queueId])
    t.equal(notHis.code, 1, "another user's queue is not dropped")
    t.same(await other.events(), [])
  })

  t.test('config prints the effective configuration with secrets masked', async (t) => {
    const res = await runCli(['config'], {
      DATABASE_URL: 'postgresql://roost:db-secret@db.internal:5432/roost',
      REDIS_URL: 'redis://:redis-secret@redis.internal:6379',
      SMTP_URL: 'smtps://mailer:smtp-secret@mail.example.com',
      S3_ENDPOINT: 'http://s3.internal', S3_BUCKET: 'b', S3_REGION: 'r', S3_ACCESS_KEY_ID: 'AKID', S3_SECRET_ACCESS_KEY: 's3-secret',
      BOOTSTRAP_OWNER_EMAIL: 'o@example.com', BOOTSTRAP_OWNER_PASSWORD: 'boot-secret',
    })
    t.equal(res.code, 0, res.stderr)
    t.notMatch(res.stdout, /-secret/)
    const shown = JSON.parse(res.stdout)
    t.equal(shown.databaseUrl, 'postgresql://roost:***@db.internal:5432/roost')
    t.equal(shown.redisUrl, 'redis://:***@redis.internal:6379')
    t.equal(shown.smtpUrl, 'smtps://mailer:***@mail.example.com')
    t.match(shown.s3, { accessKeyId: 'AKID', secretAccessKey: '***', bucket: 'b' })
    t.equal(shown.bootstrap.ownerPassword, '***')
    const bad = await runCli(['config'], { PORT: 'ninety' })
    t.equal(bad.code, 1)
    t.match(bad.stderr, 'configuration error: PORT must be an integer')
  })

  t.test('unknown commands and options are usage errors', async (t) => {
    const usages = [['frobnicate'], ['user', 'create', '--org', 'acme', '--colour', 'red'], ['user', 'set-role', '--org', 'acme', 'boss@acme.example.com']]
    const [help, ...answers] = await Promise.all([cli(['--help']), ...usages.map((args) => cli(args))])
    usages.forEach((args, i) => {
      t.equal(answers[i]!.code, 2, args.join(' '))
      t.match(answers[i]!.stderr, /error: /)
    })
    t.equal(help.code, 0)
    for (const command of ['org', 'user', 'channel', 'queue', 'migrate', 'check', 'config']) t.match(help.stdout, command)
  })
})
