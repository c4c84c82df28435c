// `roost import FILE [--subdomain S]`: a new organization from an export in
// upstream's format (a .tar.gz, Roost's own or upstream's); with --slack, from
// a Slack export (.zip). The archive is read with limits (read-archive.ts),
// checked, and written all or nothing (actions/import-organization.ts);
// progress goes to standard error.
import { InvalidArgumentError, type Command } from 'commander'
import { importOrganization } from '../actions/import-organization.js'
import { ArchiveError, DEFAULT_ARCHIVE_LIMITS, readTarGz, readZip } from '../import/read-archive.js'
import { DEFAULT_MAX_JSON_BYTES, readZulipBundle } from '../import/zulip-bundle.js'
import { ImportDataError } from '../import/rows.js'
import { slackToBundle } from '../import/slack.js'
import { CliError } from './session.js'
import type { CommandDeps } from './export-command.js'

const MIB = 1024 * 1024

function positiveInt(raw: string): number {
  const n = Number(raw)
  if (!Number.isSafeInteger(n) || n < 1) throw new InvalidArgumentError(`'${raw}' is not a positive whole number.`)
  return n
}

export function addImportCommand(program: Command, deps: CommandDeps): void {
  program
    .command('import')
    .description("create an organization from an export in upstream's format (.tar.gz) or, with --slack, a Slack export (.zip)")
    .argument('<file>', 'the archive to import')
    .option('--subdomain <subdomain>', "the new organization's subdomain (default: the export's; required with --slack)")
    .option('--slack', 'the file is a Slack export (.zip)')
    .option('--max-size <MiB>', 'refuse an archive holding more than this many MiB uncompressed', positiveInt, DEFAULT_ARCHIVE_LIMITS.maxBytes / MIB)
    .option('--max-entries <count>', 'refuse an archive with more entries than this', positiveInt, DEFAULT_ARCHIVE_LIMITS.maxEntries)
    .option('--max-json-size <MiB>', 'refuse a JSON file of the archive larger than this many MiB', positiveInt, DEFAULT_MAX_JSON_BYTES / MIB)
    .exitOverride()
    .action(async (file: string, opts: { subdomain?: string; slack?: boolean; maxSize: number; maxEntries: number; maxJsonSize: number }) => {
      if (opts.slack && opts.subdomain === undefined) throw new CliError('--slack needs --subdomain <subdomain> (a Slack export does not name one)')
      const limits = { maxBytes: opts.maxSize * MIB, maxEntries: opts.maxEntries }
      try {
        deps.err(`reading ${file}…`)
        const archive = opts.slack ? await readZip(file, limits) : await readTarGz(file, limits)
        const zulipBundle = opts.slack ? undefined : readZulipBundle(archive, opts.maxJsonSize * MIB)
        await deps.withServices(async (services) => {
          const bundle =
            zulipBundle ??
            slackToBundle(archive, { maxJsonBytes: opts.maxJsonSize * MIB, domain: new URL(services.config.externalUrl).hostname, name: opts.subdomain as string, progress: deps.err })
          const summary = await importOrganization(services, bundle, { subdomain: opts.subdomain, progress: deps.err })
          deps.out(`imported the organization at ${summary.url}: ${summary.users} users, ${summary.channels} channels, ${summary.messages} messages, ${summary.files} files`)
          deps.out(`imported people have no password or usable API key yet: give them one with 'roost user reset-password --org ${summary.subdomain || "''"} <email>' (or 'regenerate-api-key')`)
        })
      } catch (error) {
        if (error instanceof ArchiveError || error instanceof ImportDataError) throw new CliError(`import refused, nothing was imported: ${error.message}`)
        throw error
      }
    })
}
