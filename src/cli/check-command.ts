// `roost check`: reads the whole configuration and reports every problem in
// it, then connects to everything the configuration names — the database
// (PostgreSQL, or the embedded one in DATA_DIR) and its migrations, Redis,
// the SMTP server, the upload storage (S3 or DATA_DIR/uploads) — all at once,
// each within a time limit, and reports every problem in one run. A part
// whose variables have a problem is not connected to (it is named as
// skipped); push notification settings, whose key files the configuration
// reading already opened and parsed, are summed up without a connection.
// Exit code 1 when any check failed. Nothing is changed, except one small
// object written to the upload storage and deleted again (to prove writes
// are allowed).
import { randomUUID } from 'node:crypto'
import { existsSync } from 'node:fs'
import path from 'node:path'
import nodemailer from 'nodemailer'
import pg from 'pg'
import { InvalidArgumentError, Option, type Command } from 'commander'
import { readConfigAll, type Config } from '../config.js'
import { DataDirBusyError, lockDataDir } from '../db/data-dir-lock.js'
import { openDatabase, redact } from '../db/client.js'
import { migrationStatus, migrationStatusOver, type MigrationStatus } from '../db/migrate.js'
import { RedisConnection, describeTarget, redisTargetOf } from '../redis-connection.js'
import { createStorage } from '../storage/create-storage.js'
import { maskSecrets } from './mask.js'
import { CliError, jsonOption, type CliKit } from './kit.js'

export interface CheckResult {
  check: 'config' | 'database' | 'redis' | 'mail' | 'uploads' | 'push'
  /** ok: works; problem: fix it; skipped: not configured (or not openable now), with the consequence. */
  status: 'ok' | 'problem' | 'skipped'
  detail: string
}

const DEFAULT_TIMEOUT_SECONDS = 10

function parseSeconds(raw: string): number {
  const n = Number(raw)
  if (!/^\d+$/.test(raw.trim()) || n < 1 || n > 300) throw new InvalidArgumentError(`'${raw}' is not a whole number of seconds from 1 to 300.`)
  return n
}

/** Runs a probe; a failure or no answer within the limit is a problem naming the cause. */
async function probe(check: CheckResult['check'], timeoutMs: number, fn: () => Promise<Omit<CheckResult, 'check'>>): Promise<CheckResult> {
  let timer: NodeJS.Timeout | undefined
  try {
    const answer = await Promise.race([
      fn(),
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs / 1000} s`)), timeoutMs)
      }),
    ])
    return { check, ...answer }
  } catch (error) {
    return { check, status: 'problem', detail: error instanceof Error ? error.message : String(error) }
  } finally {
    clearTimeout(timer)
  }
}

function schemaNote(status: MigrationStatus): Omit<CheckResult, 'check'> {
  if (status.failed.length > 0) return { status: 'problem', detail: `migration(s) ${status.failed.join(', ')} failed earlier and are recorded as unfinished` }
  if (status.pending.length > 0) return { status: 'problem', detail: `${status.pending.length} migration(s) pending: run 'roost migrate' (or start a node)` }
  return { status: 'ok', detail: `schema up to date (${status.applied.length} migrations)` }
}

async function checkPostgres(url: string, timeoutMs: number): Promise<Omit<CheckResult, 'check'>> {
  const where = `PostgreSQL at ${redact(url)}`
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: timeoutMs, query_timeout: timeoutMs })
  client.on('error', () => {})
  try {
    await client.connect()
  } catch (error) {
    throw new Error(`DATABASE_URL: cannot connect to ${where}: ${(error as Error).message || (error as Error).name}`)
  }
  try {
    const [{ server_version: version }] = (await client.query<{ server_version: string }>('SHOW server_version')).rows as [{ server_version: string }]
    const schema = schemaNote(await migrationStatusOver(async (sql) => (await client.query(sql)).rows))
    return { status: schema.status, detail: `PostgreSQL ${version} at ${redact(url)}: ${schema.detail}` }
  } finally {
    await client.end().catch(() => {})
  }
}

async function checkEmbedded(dataDir: string): Promise<Omit<CheckResult, 'check'>> {
  const where = path.join(dataDir, 'db')
  if (!existsSync(where)) return { status: 'skipped', detail: `no embedded database in ${where} yet: the server creates it when it first starts (set DATABASE_URL for PostgreSQL)` }
  let lock
  try {
    lock = lockDataDir(dataDir, 'admin command')
  } catch (error) {
    if (error instanceof DataDirBusyError) return { status: 'skipped', detail: `embedded database in ${where} not opened: ${error.message}` }
    throw error
  }
  try {
    const database = await openDatabase({ dataDir })
    try {
      const schema = schemaNote(await migrationStatus(database))
      return { status: schema.status, detail: `embedded database in ${where}: ${schema.detail}` }
    } finally {
      await database.close()
    }
  } finally {
    lock.release()
  }
}

async function checkRedis(config: Config): Promise<Omit<CheckResult, 'check'>> {
  const target = redisTargetOf(config)
  if (!target) return { status: 'skipped', detail: 'not configured (REDIS_URL, REDIS_CLUSTER_NODES or REDIS_SENTINELS): a single node keeps events in memory' }
  const connection = await RedisConnection.open(target)
  try {
    await connection.check()
    return { status: 'ok', detail: `${describeTarget(target)}: PING answered` }
  } finally {
    await connection.close()
  }
}

async function checkSmtp(config: Config, timeoutMs: number): Promise<Omit<CheckResult, 'check'>> {
  if (!config.smtpUrl) return { status: 'skipped', detail: `not configured (SMTP_URL): mails are written to ${path.join(config.dataDir, 'outbox')}` }
  const shown = String(maskSecrets(config.smtpUrl))
  const transport = nodemailer.createTransport({ url: config.smtpUrl, connectionTimeout: timeoutMs, greetingTimeout: timeoutMs, socketTimeout: timeoutMs })
  try {
    await transport.verify()
    return { status: 'ok', detail: `SMTP server at ${shown}: connection${new URL(config.smtpUrl).username ? ' and login' : ''} accepted` }
  } catch (error) {
    throw new Error(`SMTP_URL: the SMTP server at ${shown} cannot be used: ${(error as Error).message}`)
  } finally {
    transport.close()
  }
}

async function checkUploads(config: Config): Promise<Omit<CheckResult, 'check'>> {
  const storage = createStorage(config)
  const where = config.s3 ? `S3 bucket '${config.s3.bucket}' at ${config.s3.endpoint}` : `${path.join(config.dataDir, 'uploads')} (S3_* not set)`
  await storage.check()
  const key = `roost-check/${randomUUID()}`
  try {
    await storage.put(key, Buffer.from('roost check\n'), 'text/plain')
  } catch (error) {
    throw new Error(`${where}: cannot write: ${(error as Error).message || (error as Error).name}`)
  }
  await storage.delete(key)
  return { status: 'ok', detail: `${where}: a test file written and deleted` }
}

/** The variables of each connection check: a configuration problem naming one of them skips the check. */
const CHECK_VARIABLES: Record<Exclude<CheckResult['check'], 'config'>, RegExp> = {
  database: /\bDATABASE_URL\b/,
  redis: /\bREDIS_[A-Z_]+/,
  mail: /\bSMTP_URL\b/,
  uploads: /\bS3_[A-Z_]+/,
  push: /\b(VAPID|FCM|APNS|PUSH_BOUNCER)_[A-Z_]+/,
}

/** What push notifications are configured to use; the key files were read and parsed with the configuration. */
function checkPush(config: Config): Omit<CheckResult, 'check'> {
  const parts: string[] = []
  if (config.webPush) parts.push(`web push: VAPID keys valid (subject ${config.webPush.subject})`)
  if (config.fcm) parts.push(`FCM: service account ${config.fcm.clientEmail} of project ${config.fcm.projectId}, key parsed`)
  if (config.apns) parts.push(`APNs: key ${config.apns.keyId} of team ${config.apns.teamId}, key parsed (${config.apns.endpoint})`)
  if (config.pushBouncer) parts.push(`push bouncer at ${config.pushBouncer.url} (server ${config.pushBouncer.orgId})`)
  if (parts.length === 0) return { status: 'skipped', detail: 'not configured (VAPID_*, FCM_*, APNS_*, PUSH_BOUNCER_*): no push notifications' }
  return { status: 'ok', detail: `${parts.join('; ')}; no connection made` }
}

/** Every check, run side by side; each one's failure is its own result. Checks named by a configuration problem are skipped. */
export async function runChecks(config: Config, timeoutMs: number, problems: string[] = []): Promise<CheckResult[]> {
  const blocked = (check: keyof typeof CHECK_VARIABLES): CheckResult | undefined => {
    const names = [...new Set(problems.flatMap((p) => p.match(new RegExp(CHECK_VARIABLES[check].source, 'g')) ?? []))]
    return names.length === 0 ? undefined : { check, status: 'skipped', detail: `not checked: ${names.join(', ')} ${names.length === 1 ? 'has' : 'have'} a problem (above)` }
  }
  const guarded = (check: keyof typeof CHECK_VARIABLES, run: () => Promise<CheckResult>): Promise<CheckResult> => {
    const skip = blocked(check)
    return skip ? Promise.resolve(skip) : run()
  }
  return [
    ...problems.map((detail): CheckResult => ({ check: 'config', status: 'problem', detail })),
    ...(await Promise.all([
      guarded('database', () => probe('database', timeoutMs, () => (config.databaseUrl ? checkPostgres(config.databaseUrl, timeoutMs) : checkEmbedded(config.dataDir)))),
      guarded('redis', () => probe('redis', timeoutMs, () => checkRedis(config))),
      guarded('mail', () => probe('mail', timeoutMs, () => checkSmtp(config, timeoutMs))),
      guarded('uploads', () => probe('uploads', timeoutMs, () => checkUploads(config))),
      guarded('push', async () => ({ check: 'push', ...checkPush(config) })),
    ])),
  ]
}

const MARK: Record<CheckResult['status'], string> = { ok: 'ok', problem: 'PROBLEM', skipped: '-' }

export function registerCheckCommand(program: Command, kit: CliKit): void {
  program
    .command('check')
    .description('read the whole configuration, connect to the database, Redis, the SMTP server and the upload storage as configured, check the push settings; report every problem (exit code 1 if any)')
    .addOption(new Option('--timeout <seconds>', 'how long each check may take').argParser(parseSeconds).default(DEFAULT_TIMEOUT_SECONDS))
    .addOption(jsonOption())
    .exitOverride()
    .action(async (opts: { timeout: number; json?: boolean }) => {
      const { config, problems: configProblems } = readConfigAll(kit.io.env)
      const results = await runChecks(config, opts.timeout * 1000, configProblems)
      if (opts.json) kit.out(JSON.stringify(results, null, 2))
      else for (const r of results) kit.out(`${MARK[r.status].padEnd(8)}${r.check.padEnd(10)}${r.detail}`)
      const problems = results.filter((r) => r.status === 'problem').length
      if (problems > 0) throw new CliError(`${problems} problem${problems === 1 ? '' : 's'} found`)
    })
}
