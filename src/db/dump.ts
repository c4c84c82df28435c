// The database side of `roost backup` / `roost restore`: PostgreSQL through
// pg_dump and pg_restore (custom format), run as processes; what a database
// holds (its applied migrations, whether it is empty); emptying it for a
// forced restore.
import { spawn } from 'node:child_process'
import { existsSync, readdirSync } from 'node:fs'
import path from 'node:path'
import { withRawSession, type Database } from './client.js'

export class DumpToolError extends Error {
  override name = 'DumpToolError'
}

/** Query parameters of Prisma's that libpq does not know (pg_dump would refuse them). */
const PRISMA_ONLY_PARAMETERS = ['schema', 'connection_limit', 'pool_timeout', 'socket_timeout', 'pgbouncer', 'statement_cache_size', 'sslaccept']

/**
 * A connection URL for the PostgreSQL tools without the password (kept out of
 * the process list) and the password for PGPASSWORD.
 */
export function libpqConnection(databaseUrl: string): { url: string; password: string | undefined } {
  const url = new URL(databaseUrl)
  const password = url.password === '' ? undefined : decodeURIComponent(url.password)
  url.password = ''
  for (const name of PRISMA_ONLY_PARAMETERS) url.searchParams.delete(name)
  return { url: url.toString(), password }
}

/** The major version of a PostgreSQL tool (`pg_dump (PostgreSQL) 15.4` → 15), or undefined when it does not run. */
async function toolVersion(file: string): Promise<number | undefined> {
  const { code, stdout } = await run(file, ['--version'], {})
  const match = code === 0 ? /\(PostgreSQL\)\s+(\d+)/.exec(stdout) : null
  return match ? Number(match[1]) : undefined
}

/** Where Debian's PostgreSQL packages put each major version's programs (<root>/<version>/bin). */
export const PG_SYSTEM_ROOT = '/usr/lib/postgresql'

export type PgTool = { file: string; version: number }

/**
 * The newest `name` (pg_dump, pg_restore) among the PATH and
 * /usr/lib/postgresql/<version>/bin: a newer pg_dump reads older servers, an
 * older one refuses newer ones. A file there that does not run or does not
 * print a PostgreSQL version does not count.
 */
export async function findPgTool(name: 'pg_dump' | 'pg_restore', env: Record<string, string | undefined>, systemRoot = PG_SYSTEM_ROOT): Promise<PgTool> {
  const candidates = new Set<string>()
  for (const dir of (env.PATH ?? '').split(path.delimiter)) if (dir !== '' && existsSync(path.join(dir, name))) candidates.add(path.join(dir, name))
  if (existsSync(systemRoot)) for (const version of readdirSync(systemRoot)) if (existsSync(path.join(systemRoot, version, 'bin', name))) candidates.add(path.join(systemRoot, version, 'bin', name))
  let best: PgTool | undefined
  for (const file of candidates) {
    const version = await toolVersion(file)
    if (version !== undefined && (best === undefined || version > best.version)) best = { file, version }
  }
  if (!best) {
    throw new DumpToolError(
      `${name} not found on the PATH or in ${systemRoot}/*/bin: install the PostgreSQL client tools of the server's version or newer (Debian and Ubuntu: apt-get install postgresql-client; the container image has them)`,
    )
  }
  return best
}

interface RunResult {
  code: number | null
  stdout: string
  stderr: string
}

function run(file: string, args: string[], env: Record<string, string | undefined>): Promise<RunResult> {
  return new Promise((resolve) => {
    const child = spawn(file, args, { env: env as NodeJS.ProcessEnv, stdio: ['ignore', 'pipe', 'pipe'] })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()))
    // Bounded: a failing tool's message is short; a chatty one is cut.
    child.stderr.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString()).slice(-8192)))
    child.on('error', (error) => resolve({ code: null, stdout, stderr: error.message }))
    child.on('close', (code) => resolve({ code, stdout, stderr }))
  })
}

function toolEnv(env: Record<string, string | undefined>, password: string | undefined): Record<string, string | undefined> {
  const out: Record<string, string | undefined> = { PATH: env.PATH, HOME: env.HOME, LANG: env.LANG, PGSSLROOTCERT: env.PGSSLROOTCERT, PGSSLMODE: env.PGSSLMODE }
  if (password !== undefined) out.PGPASSWORD = password
  return out
}

/** Writes the database to `file` in pg_dump's custom format (one consistent snapshot of a running database). */
export async function pgDump(databaseUrl: string, file: string, env: Record<string, string | undefined>, tool?: PgTool): Promise<{ tool: string; version: number }> {
  tool ??= await findPgTool('pg_dump', env)
  const { url, password } = libpqConnection(databaseUrl)
  const result = await run(tool.file, ['--format=custom', '--no-owner', '--no-privileges', `--file=${file}`, `--dbname=${url}`], toolEnv(env, password))
  if (result.code !== 0) throw new DumpToolError(`pg_dump (${tool.file}) failed: ${result.stderr.trim() || `exit code ${result.code}`}`)
  return { tool: tool.file, version: tool.version }
}

/** Restores a custom-format dump into an empty database, all or nothing (one transaction). */
export async function pgRestore(databaseUrl: string, file: string, env: Record<string, string | undefined>, tool?: PgTool): Promise<void> {
  tool ??= await findPgTool('pg_restore', env)
  const { url, password } = libpqConnection(databaseUrl)
  const result = await run(tool.file, ['--no-owner', '--no-privileges', '--single-transaction', '--exit-on-error', `--dbname=${url}`, file], toolEnv(env, password))
  if (result.code !== 0) throw new DumpToolError(`pg_restore (${tool.file}) failed: ${result.stderr.trim() || `exit code ${result.code}`}`)
}

/** What the database holds: its tables, views and sequences in the public schema, and the migrations applied to it. */
export async function databaseContents(db: Database): Promise<{ relations: number; migrations: string[] }> {
  return withRawSession(db, async (session) => {
    const [count] = await session.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = 'public' AND c.relkind IN ('r', 'v', 'm', 'S', 'p')`,
    )
    const [table] = await session.query<{ exists: boolean }>(`SELECT to_regclass('public._prisma_migrations') IS NOT NULL AS exists`)
    const migrations = table?.exists
      ? (await session.query<{ migration_name: string }>('SELECT migration_name FROM _prisma_migrations WHERE finished_at IS NOT NULL AND rolled_back_at IS NULL ORDER BY migration_name')).map((r) => r.migration_name)
      : []
    return { relations: count?.n ?? 0, migrations }
  })
}

/** Drops everything in the public schema (a forced restore); the schema itself stays, with its owner and grants. */
export async function emptyPublicSchema(db: Database): Promise<void> {
  await withRawSession(db, (session) =>
    session.transaction(async (tx) => {
      // Types, functions and tables in one sweep: DROP … CASCADE of every object the schema holds.
      const objects = await tx.query<{ statement: string }>(`
        SELECT format('DROP TABLE IF EXISTS %I.%I CASCADE', schemaname, tablename) AS statement FROM pg_tables WHERE schemaname = 'public'
        UNION ALL SELECT format('DROP VIEW IF EXISTS %I.%I CASCADE', schemaname, viewname) FROM pg_views WHERE schemaname = 'public'
        UNION ALL SELECT format('DROP MATERIALIZED VIEW IF EXISTS %I.%I CASCADE', schemaname, matviewname) FROM pg_matviews WHERE schemaname = 'public'
        UNION ALL SELECT format('DROP SEQUENCE IF EXISTS %I.%I CASCADE', sequence_schema, sequence_name) FROM information_schema.sequences WHERE sequence_schema = 'public'
        UNION ALL SELECT format('DROP FUNCTION IF EXISTS %s CASCADE', p.oid::regprocedure) FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace WHERE n.nspname = 'public' AND p.prokind = 'f' AND NOT EXISTS (SELECT 1 FROM pg_depend d WHERE d.objid = p.oid AND d.deptype = 'e')
        UNION ALL SELECT format('DROP TYPE IF EXISTS %I.%I CASCADE', n.nspname, t.typname) FROM pg_type t JOIN pg_namespace n ON n.oid = t.typnamespace WHERE n.nspname = 'public' AND t.typtype IN ('e', 'd', 'c') AND (t.typtype <> 'c' OR EXISTS (SELECT 1 FROM pg_class c WHERE c.oid = t.typrelid AND c.relkind = 'c'))
      `)
      for (const { statement } of objects) await tx.exec(statement)
    }),
  )
}
