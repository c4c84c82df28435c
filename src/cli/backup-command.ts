// `roost backup [--output DIR|FILE]` and `roost restore FILE [--force]`
// (src/backup/): progress goes to standard error, the summary to standard
// output. docs/backup-and-restore.md describes both and the alternatives.
import type { Command } from 'commander'
import type { Config } from '../config.js'
import { BackupError, createBackup } from '../backup/backup.js'
import { restoreBackup } from '../backup/restore.js'
import { DumpToolError } from '../db/dump.js'
import { CliError } from './session.js'

export interface BackupCommandDeps {
  out: (line: string) => void
  err: (line: string) => void
  config: () => Config
  env: Record<string, string | undefined>
}

const mib = (bytes: number): string => `${(bytes / (1024 * 1024)).toFixed(1)} MiB`

/** Operator-fixable failures become CliErrors (`roost: <message>`, exit code 1). */
async function asCliError<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn()
  } catch (error) {
    if (error instanceof BackupError || error instanceof DumpToolError) throw new CliError(error.message)
    throw error
  }
}

export function addBackupCommands(program: Command, deps: BackupCommandDeps): void {
  program
    .command('backup')
    .description('write the database and every upload to one .tar.gz (embedded mode: with the server stopped)')
    .option('--output <dir|file>', 'the archive to write, or a directory for roost-backup-<time>.tar.gz (default: the current directory)', '.')
    .exitOverride()
    .action(async (opts: { output: string }) => {
      const { file, manifest } = await asCliError(() => createBackup({ config: deps.config(), env: deps.env, output: opts.output, progress: (line) => deps.err(`roost: ${line}`) }))
      const database = manifest.database.kind === 'postgresql' ? 'PostgreSQL dump' : 'embedded database'
      deps.out(`backed up to ${file}: ${database} at migration ${manifest.migrations.at(-1)}, ${manifest.uploads.count} uploads (${mib(manifest.uploads.bytes)})`)
    })
  program
    .command('restore')
    .description('restore a `roost backup` archive into an empty database (or, with --force, over an existing one) and its uploads')
    .argument('<file>', 'the archive written by roost backup')
    .option('--force', 'replace a database that already holds data (stop every Roost node first)')
    .exitOverride()
    .action(async (file: string, opts: { force?: boolean }) => {
      const { manifest, migrated } = await asCliError(() =>
        restoreBackup({ config: deps.config(), env: deps.env, file, force: opts.force === true, progress: (line) => deps.err(`roost: ${line}`) }),
      )
      deps.out(
        `restored the backup of ${manifest.createdAt} (Roost ${manifest.roostVersion}): ${manifest.uploads.count} uploads` +
          (migrated.length > 0 ? `, then applied ${migrated.length} newer migration(s)` : ''),
      )
    })
}
