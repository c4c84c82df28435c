// `roost migrate status`: which migrations the database has and which are
// pending, read without applying anything (exit code 1 while any is pending
// or a failed one is recorded, so a deployment script can wait on it). An
// embedded DATA_DIR without a database yet is not created: every migration
// is pending.
import { existsSync } from 'node:fs'
import path from 'node:path'
import type { Command } from 'commander'
import { defaultMigrationsDir, migrationStatus, readMigrations, type MigrationStatus } from '../db/migrate.js'
import { CliError, jsonOption, type CliKit } from './kit.js'

export function registerMigrateCommands(migrate: Command, kit: CliKit): void {
  migrate
    .command('status')
    .description('list applied and pending migrations; exit code 1 while any is pending or failed')
    .addOption(jsonOption())
    .exitOverride()
    .action(async (opts: { json?: boolean }) => {
      const { databaseUrl, dataDir } = kit.config()
      const status: MigrationStatus =
        !databaseUrl && !existsSync(path.join(dataDir, 'db'))
          ? { applied: [], pending: (await readMigrations(defaultMigrationsDir())).map((m) => m.name), failed: [], unknown: [] }
          : await kit.withDatabase((database) => migrationStatus(database))
      if (opts.json) {
        kit.out(JSON.stringify({ ...status, applied: status.applied.map((m) => ({ name: m.name, finished_at: m.finishedAt.toISOString(), modified: m.modified })) }, null, 2))
      } else {
        const rows = [
          ...status.applied.map((m) => ['applied', m.name, m.finishedAt.toISOString() + (m.modified ? '  (file changed since)' : '') + (status.unknown.includes(m.name) ? '  (not in this release)' : '')]),
          ...status.failed.map((name) => ['FAILED', name, 'started and never finished: fix the database, then `prisma migrate resolve`']),
          ...status.pending.filter((name) => !status.failed.includes(name)).map((name) => ['pending', name, '']),
        ]
        for (const [state, name, note] of rows) kit.out(`${(state as string).padEnd(8)} ${name}${note ? `  ${note}` : ''}`)
        kit.out(`${status.applied.length} applied, ${status.pending.length} pending`)
      }
      if (status.failed.length > 0) throw new CliError(`${status.failed.length} migration(s) failed earlier: ${status.failed.join(', ')}`)
      if (status.pending.length > 0) throw new CliError(`${status.pending.length} migration(s) pending: run 'roost migrate'`)
    })
}
