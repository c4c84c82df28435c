// `roost check`: connects to everything the configuration names — the
// database (PostgreSQL, or the embedded one in DATA_DIR) and its migrations,
// Redis, the SMTP server, the upload storage (S3 or DATA_DIR/uploads) — all
// at once, each within a time limit, and reports every problem in one run.
// Exit code 1 when any check failed. Nothing is changed, except one small
// object written to the upload storage and deleted again (to prove writes
// are allowed).
import { randomUUID } from 'node:crypto'
import { existsSync } from 'node:fs'
import path from 'node:path'
import nodemailer from 'nodemailer'
import pg from 'pg'
import { InvalidArgumentError, Option, type Command } from 'commander'
import type { Config } from '../config.js'
import { DataDirBusyError, lockDataDir } from '../db/data-dir-lock.js'
import { openDatabase, redact } from '../db/client.js'
import { migrationStatus, migrationStatusOver, type MigrationStatus } from '../db/migrate.js'
import { RedisConnection, describeTarget, redisTargetOf } from '../redis-connection.js'
import { createStorage } from '../storage/create-storage.js'
import { maskSecrets } from './mask.js'
import { CliError, jsonOption, type CliKit } from './kit.js'

export interface CheckResult {
  check: 'database' | 'redis' | 'mail' | 'uploads'
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

/** Every check, run side by side; each one's failure is its own result. */
export async function runChecks(config: Config, timeoutMs: number): Promise<CheckResult[]> {
  return Promise.all([
    probe('database', timeoutMs, () => (config.databaseUrl ? checkPostgres(config.databaseUrl, timeoutMs) : checkEmbedded(config.dataDir))),
    probe('redis', timeoutMs, () => checkRedis(config)),
    probe('mail', timeoutMs, () => checkSmtp(config, timeoutMs)),
    probe('uploads', timeoutMs, () => checkUploads(config)),
  ])
}

const MARK: Record<CheckResult['status'], string> = { ok: 'ok', problem: 'PROBLEM', skipped: '-' }

export function registerCheckCommand(program: Command, kit: CliKit): void {
  program
    .command('check')
    .description('connect to the database, Redis, the SMTP server and the upload storage as configured; report every problem (exit code 1 if any)')
    .addOption(new Option('--timeout <seconds>', 'how long each check may take').argParser(parseSeconds).default(DEFAULT_TIMEOUT_SECONDS))
    .addOption(jsonOption())
    .exitOverride()
    .action(async (opts: { timeout: number; json?: boolean }) => {
      const results = await runChecks(kit.config(), opts.timeout * 1000)
      if (opts.json) kit.out(JSON.stringify(results, null, 2))
      else for (const r of results) kit.out(`${MARK[r.status].padEnd(8)}${r.check.padEnd(10)}${r.detail}`)
      const problems = results.filter((r) => r.status === 'problem').length
      if (problems > 0) throw new CliError(`${problems} problem${problems === 1 ? '' : 's'} found`)
    })
}
