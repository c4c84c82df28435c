// `roost export ORG [--output FILE]`: writes one organization in upstream's
// export format (src/export/export-realm.ts) as a .tar.gz; progress goes to
// standard error, the summary to standard output.
import path from 'node:path'
import type { Command } from 'commander'
import { exportRealm } from '../export/export-realm.js'
import { findOrganization } from './session.js'
import type { NodeServices } from '../node-services.js'

export interface CommandDeps {
  out: (line: string) => void
  err: (line: string) => void
  withServices: <T>(fn: (services: NodeServices) => Promise<T>) => Promise<T>
}

export function addExportCommand(program: Command, deps: CommandDeps): void {
  program
    .command('export')
    .description("write an organization to upstream's export format as a .tar.gz (no passwords or API keys)")
    .argument('<org>', "the organization's subdomain ('' for the root organization)")
    .option('--output <file>', 'the file to write (default: ./zulip-export-<subdomain>.tar.gz)')
    .exitOverride()
    .action(async (org: string, opts: { output?: string }) => {
      await deps.withServices(async (services) => {
        const realm = await findOrganization(services, org)
        const output = path.resolve(opts.output ?? `zulip-export-${realm.stringId || 'root'}.tar.gz`)
        const summary = await exportRealm({ prisma: services.prisma, storage: services.storage, realm, output, progress: deps.err })
        deps.out(`exported '${realm.name}' to ${output}: ${summary.users} users, ${summary.channels} channels, ${summary.messages} messages, ${summary.files} files`)
      })
    })
}
