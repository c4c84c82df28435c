// `roost check` against real services: a throwaway PostgreSQL database,
// Redis, an SMTP server this test starts (smtp-server) and the test S3 server
// (s3rver); then against closed ports, a missing bucket, refused credentials,
// configuration problems (all listed, the parts they name skipped, the rest
// checked), push settings and an embedded DATA_DIR (with `migrate status`
// there). Every problem is reported in the one run; the exit code says
// whether there was any.
import { createServer, type AddressInfo } from 'node:net'
import { generateKeyPairSync } from 'node:crypto'
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import t from 'tap'
import { throwawayDatabase } from '../support/throwaway-db.js'
import { TEST_REDIS_URL } from '../support/config.js'
import { startSmtpPeer } from '../support/smtp-peer.js'
import { startS3Server, type S3Settings } from '../storage/s3-server.js'
import { runCli, spawnCli } from './run.js'

t.setTimeout(900_000)

/** A loopback port nothing listens on (bound by the system, then closed). */
async function closedPort(): Promise<number> {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  await new Promise<void>((resolve) => server.close(() => resolve()))
  return port
}

const s3Env = (s3: S3Settings) => ({ S3_ENDPOINT: s3.endpoint, S3_BUCKET: s3.bucket, S3_REGION: s3.region, S3_ACCESS_KEY_ID: s3.accessKeyId, S3_SECRET_ACCESS_KEY: s3.secretAccessKey })

interface Result {
  check: string
  status: string
  detail: string
}

t.test('roost check', async (t) => {
  const url = await throwawayDatabase(t)
  const smtp = await startSmtpPeer()
  t.teardown(() => smtp.close())
  const s3 = await startS3Server(t)
  const bucket = await s3.newBucket()
  const dataDir = mkdtempSync(path.join(tmpdir(), 'roost-check-'))
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }))
  const good = { DATABASE_URL: url, REDIS_URL: TEST_REDIS_URL, SMTP_URL: smtp.url, ...s3Env(bucket), DATA_DIR: dataDir }
  const check = async (env: Record<string, string>, ...args: string[]): Promise<{ code: number | null; results: Result[]; stderr: string }> => {
    const res = await runCli(['check', '--json', ...args], env)
    return { code: res.code, results: JSON.parse(res.stdout) as Result[], stderr: res.stderr }
  }

  t.test('a database that is not migrated yet is a problem; the rest is checked all the same', async (t) => {
    const res = await check(good)
    t.equal(res.code, 1)
    t.match(res.results, [
      { check: 'database', status: 'problem', detail: /^PostgreSQL \d+.* at postgresql:\/\/postgres@127\.0\.0\.1:5432\/roost_test_\w+: \d+ migration\(s\) pending: run 'roost migrate'/ },
      { check: 'redis', status: 'ok' },
      { check: 'mail', status: 'ok' },
      { check: 'uploads', status: 'ok' },
    ])
    t.equal(res.stderr, 'roost: 1 problem found\n')
  })

  t.test('everything configured and reachable: exit code 0', async (t) => {
    t.equal((await runCli(['migrate'], good)).code, 0)
    const res = await check(good)
    t.equal(res.code, 0, res.stderr)
    t.match(res.results, [
      { check: 'database', status: 'ok', detail: /: schema up to date \(\d+ migrations\)$/ },
      { check: 'redis', status: 'ok', detail: `${TEST_REDIS_URL}: PING answered` },
      { check: 'mail', status: 'ok', detail: `SMTP server at ${smtp.url}: connection accepted` },
      { check: 'uploads', status: 'ok', detail: `S3 bucket '${bucket.bucket}' at ${bucket.endpoint}: a test file written and deleted` },
    ])
    t.same(res.results[4], { check: 'push', status: 'skipped', detail: 'not configured (VAPID_*, FCM_*, APNS_*, PUSH_BOUNCER_*): no push notifications' })
    t.equal(res.results.length, 5)
    t.equal(smtp.received.length, 0, 'no mail is sent')
    // The real binary, as an operator runs it: one line per check.
    const spawned = await spawnCli(['check'], good)
    t.equal(spawned.code, 0, spawned.stderr)
    t.match(spawned.stdout, /^ok {6}database {2}PostgreSQL .*\nok {6}redis {5}.*\nok {6}mail {6}.*\nok {6}uploads {3}S3 bucket .*\n- {7}push {6}not configured .*\n$/)
  })

  t.test('every configuration problem is reported at once, and what the rest names is still checked', async (t) => {
    const { S3_ENDPOINT: _e, S3_REGION: _r, S3_ACCESS_KEY_ID: _a, S3_SECRET_ACCESS_KEY: _s, ...noS3 } = good
    const env = { ...noS3, S3_BUCKET: 'only-a-bucket', PORT: 'eighty', APNS_KEY_ID: 'ABC123DEFG' }
    const res = await check(env)
    t.equal(res.code, 1)
    t.same(
      res.results.filter((r) => r.check === 'config'),
      [
        "APNS_TEAM_ID must be the 10-character team ID, got ''",
        'APNS_KEY_FILE must be set with APNS_KEY_ID and APNS_TEAM_ID',
        "PORT must be an integer between 0 and 65535, got 'eighty'",
        'S3_ENDPOINT, S3_REGION, S3_ACCESS_KEY_ID, S3_SECRET_ACCESS_KEY must be set when S3_BUCKET is set',
      ].map((detail) => ({ check: 'config', status: 'problem', detail })),
    )
    t.match(res.results.slice(4), [
      { check: 'database', status: 'ok' },
      { check: 'redis', status: 'ok' },
      { check: 'mail', status: 'ok' },
      { check: 'uploads', status: 'skipped', detail: 'not checked: S3_ENDPOINT, S3_REGION, S3_ACCESS_KEY_ID, S3_SECRET_ACCESS_KEY, S3_BUCKET have a problem (above)' },
      { check: 'push', status: 'skipped', detail: 'not checked: APNS_TEAM_ID, APNS_KEY_FILE, APNS_KEY_ID have a problem (above)' },
    ])
    t.equal(res.results.length, 9)
    t.equal(res.stderr, 'roost: 4 problems found\n')
    const table = await runCli(['check'], env)
    t.equal(table.code, 1)
    t.match(table.stdout, /^PROBLEM config {4}APNS_TEAM_ID must be .*\nPROBLEM config {4}APNS_KEY_FILE must be .*\nPROBLEM config {4}PORT must be .*\nPROBLEM config {4}S3_ENDPOINT, .*\nok {6}database {2}/)
  })

  t.test('push settings, when set, are read and their key files parsed', async (t) => {
    const dir = mkdtempSync(path.join(tmpdir(), 'roost-check-push-'))
    t.teardown(() => rmSync(dir, { recursive: true, force: true }))
    const vapid = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ format: 'jwk' })
    const publicKey = Buffer.concat([Buffer.from([4]), Buffer.from(vapid.x as string, 'base64url'), Buffer.from(vapid.y as string, 'base64url')]).toString('base64url')
    const account = path.join(dir, 'service-account.json')
    const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ type: 'pkcs8', format: 'pem' }) as string
    writeFileSync(account, JSON.stringify({ type: 'service_account', project_id: 'roost-push', client_email: 'sender@roost-push.iam.gserviceaccount.com', private_key: rsa }))
    const push = { VAPID_PUBLIC_KEY: publicKey, VAPID_PRIVATE_KEY: vapid.d as string, VAPID_SUBJECT: 'mailto:ops@example.com', FCM_SERVICE_ACCOUNT_FILE: account }
    const res = await check({ ...good, ...push })
    t.equal(res.code, 0, res.stderr)
    t.same(res.results.at(-1), {
      check: 'push',
      status: 'ok',
      detail: 'web push: VAPID keys valid (subject mailto:ops@example.com); FCM: service account sender@roost-push.iam.gserviceaccount.com of project roost-push, key parsed; no connection made',
    })
    // A key file that is not one: a configuration problem, and push is not checked.
    writeFileSync(account, 'not json')
    const broken = await check({ ...good, ...push })
    t.equal(broken.code, 1)
    t.match(broken.results[0], { check: 'config', status: 'problem', detail: new RegExp(`^FCM_SERVICE_ACCOUNT_FILE: cannot read a JSON service-account key from '${account}'`) })
    t.same(broken.results.at(-1), { check: 'push', status: 'skipped', detail: 'not checked: FCM_SERVICE_ACCOUNT_FILE has a problem (above)' })
    t.equal(broken.stderr, 'roost: 1 problem found\n')
  })

  t.test('every problem is reported at once', async (t) => {
    const [pgPort, redisPort, smtpPort] = await Promise.all([closedPort(), closedPort(), closedPort()])
    const res = await check({
      DATABASE_URL: `postgresql://roost:db-secret@127.0.0.1:${pgPort}/roost`,
      REDIS_URL: `redis://127.0.0.1:${redisPort}`,
      SMTP_URL: `smtp://mailer:smtp-secret@127.0.0.1:${smtpPort}`,
      ...s3Env(s3.missingBucket()),
    })
    t.equal(res.code, 1)
    t.match(res.results, [
      { check: 'database', status: 'problem', detail: `DATABASE_URL: cannot connect to PostgreSQL at postgresql://roost:***@127.0.0.1:${pgPort}/roost: connect ECONNREFUSED` },
      { check: 'redis', status: 'problem', detail: `REDIS_URL: cannot connect to redis://127.0.0.1:${redisPort}: connect ECONNREFUSED` },
      { check: 'mail', status: 'problem', detail: `SMTP_URL: the SMTP server at smtp://mailer:***@127.0.0.1:${smtpPort} cannot be used: connect ECONNREFUSED` },
      { check: 'uploads', status: 'problem', detail: /^S3 bucket 'missing-[\w-]+' at http:\/\/127\.0\.0\.1:\d+ \(S3_BUCKET, S3_ENDPOINT\) cannot be used: no such bucket$/ },
    ])
    t.equal(res.stderr, 'roost: 4 problems found\n')
    t.notMatch(JSON.stringify(res.results), /-secret/, 'no secret is printed')
    const refused = await check({ ...good, S3_ACCESS_KEY_ID: 'WRONG', S3_SECRET_ACCESS_KEY: 'wrong-secret' })
    t.equal(refused.code, 1)
    t.match(refused.results.find((r) => r.check === 'uploads'), { status: 'problem', detail: /cannot be used: access denied \(check S3_ACCESS_KEY_ID and S3_SECRET_ACCESS_KEY\)$/ })
  })

  t.test('embedded DATA_DIR: no database yet, then one, then one held by a server', async (t) => {
    const dir = mkdtempSync(path.join(tmpdir(), 'roost-check-embedded-'))
    t.teardown(() => rmSync(dir, { recursive: true, force: true }))
    const env = { DATA_DIR: dir }
    const fresh = await check(env)
    t.equal(fresh.code, 0, fresh.stderr)
    t.match(fresh.results, [
      { check: 'database', status: 'skipped', detail: `no embedded database in ${path.join(dir, 'db')} yet` },
      { check: 'redis', status: 'skipped', detail: /^not configured/ },
      { check: 'mail', status: 'skipped', detail: `not configured (SMTP_URL): mails are written to ${path.join(dir, 'outbox')}` },
      { check: 'uploads', status: 'ok', detail: `${path.join(dir, 'uploads')} (S3_* not set): a test file written and deleted` },
    ])
    const status = await runCli(['migrate', 'status'], env)
    t.equal(status.code, 1)
    t.match(status.stdout, /\n0 applied, \d+ pending\n$/)
    t.notOk(existsSync(path.join(dir, 'db')), 'migrate status creates no database')
    t.equal((await runCli(['migrate'], env)).code, 0)
    t.equal((await runCli(['migrate', 'status'], env)).code, 0)
    const migrated = await check(env)
    t.equal(migrated.code, 0, migrated.stderr)
    t.match(migrated.results[0], { status: 'ok', detail: `embedded database in ${path.join(dir, 'db')}: schema up to date` })
    // A live process (this one's parent) holds DATA_DIR: the check does not open the database.
    writeFileSync(path.join(dir, 'roost.pid'), `${process.ppid}\nserver\n`)
    const held = await check(env)
    t.equal(held.code, 0)
    t.match(held.results[0], { status: 'skipped', detail: /not opened: .*in use by a Roost server \(process \d+\)/ })
  })

  t.test('a bad --timeout names the option', async (t) => {
    const res = await runCli(['check', '--timeout', 'soon'], good)
    t.equal(res.code, 2)
    t.match(res.stderr, "error: option '--timeout <seconds>' argument 'soon' is invalid.")
  })
})
