// `roost`: the admin command line. Same environment as the server (config.ts),
// same database and event bus (node-services.ts): every change goes through the
// actions, so it is checked, written in one transaction and published to the
// running cluster exactly as the API would. Exit codes: 0 done, 1 refused or
// failed (the message says why), 2 bad usage.
//
// runRoost(argv, io) runs one command with the environment, standard input
// and output streams it is given (main.ts passes the process's own); nothing
// here reads process.env or writes to the process's streams.
import { randomBytes } from 'node:crypto'
import { Command, CommanderError, Option } from 'commander'
import { ApiError } from '../errors.js'
import { createOrganization } from '../actions/create-organization.js'
import { createUser } from '../actions/create-user.js'
import { deactivateUser, reactivateUser } from '../actions/deactivate-user.js'
import { updateUser } from '../actions/update-user.js'
import { regenerateApiKey, setUserPassword } from '../actions/user-credentials.js'
import { revokeWebSessions } from '../actions/web-sessions.js'
import { DataDirBusyError } from '../db/data-dir-lock.js'
import { realmUrl } from '../present/realm.js'
import { applyMigrations } from '../db/migrate.js'
import { ROLE } from '../domain/roles.js'
import { CliError, findUser } from './session.js'
import { maskSecrets } from './mask.js'
import { addBackupCommands } from './backup-command.js'
import { addExportCommand } from './export-command.js'
import { addImportCommand } from './import-command.js'
import { redisTargetOf } from '../redis-connection.js'
import { SERVICE_VERSION } from '../version.js'
import type { ActionContext } from '../services.js'
import type { User } from '../db/index.js'
import { jsonOption, makeKit, orgOption, type CliIo } from './kit.js'
import { parseRole, roleName, ROLE_CHOICES } from './roles.js'
import { registerUserCommands } from './user-commands.js'
import { registerOrgCommands } from './org-commands.js'
import { registerChannelCommands } from './channel-commands.js'
import { registerMigrateCommands } from './migrate-commands.js'
import { registerCheckCommand } from './check-command.js'

export type { CliIo } from './kit.js'

async function readAll(input: AsyncIterable<Buffer | string> | Iterable<Buffer | string>): Promise<string> {
  const chunks: Buffer[] = []
  for await (const chunk of input) chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk)
  return Buffer.concat(chunks).toString('utf8').replace(/\r?\n$/, '')
}

export function buildProgram(io: CliIo): Command {
  const kit = makeKit(io)
  const { out, config, withServices } = kit
  /** Runs a command against one organization as its operator. */
  const inOrg = <O extends { org?: string }>(opts: O, fn: (ctx: ActionContext) => Promise<void>): Promise<void> => kit.inOrg(opts.org, fn)
  /** --password-stdin reads it; otherwise a random one is made (and printed). */
  const passwordFrom = async (opts: { passwordStdin?: boolean }): Promise<{ password: string; generated: boolean }> => {
    if (opts.passwordStdin) {
      const password = await readAll(io.stdin)
      if (password === '') throw new CliError('no password on standard input')
      return { password, generated: false }
    }
    return { password: randomBytes(12).toString('base64url'), generated: true }
  }

  const program = new Command('roost')
    .description('Administer a Roost server (uses the same environment as the server: DATABASE_URL, REDIS_URL, DATA_DIR, EXTERNAL_URL…)')
    .version(SERVICE_VERSION)
    .showHelpAfterError('(run with --help for usage)')
    .configureOutput({ writeOut: (text) => void io.stdout.write(text), writeErr: (text) => void io.stderr.write(text) })
    .exitOverride()

  const org = program.command('org').description('organizations').exitOverride()
  org
    .command('create')
    .description("create an organization and its owner; prints the owner's password, or an invitation link with --invite")
    .requiredOption('--name <name>', 'organization name (1–40 characters)')
    .option('--subdomain <subdomain>', 'subdomain: 3–40 lowercase letters, digits and hyphens')
    .option('--root', 'the organization at EXTERNAL_URL itself (no subdomain)')
    .requiredOption('--owner-email <email>', "the owner's email address")
    .option('--owner-name <name>', "the owner's full name (default: the email's local part)")
    .addOption(new Option('--invite', 'create no account: print an invitation link for the owner').conflicts('passwordStdin'))
    .option('--password-stdin', "read the owner's password from standard input instead of making one")
    .exitOverride()
    .action(async (opts: { name: string; subdomain?: string; root?: boolean; ownerEmail: string; ownerName?: string; invite?: boolean; passwordStdin?: boolean }) => {
      if (opts.root === (opts.subdomain !== undefined)) throw new CliError('give exactly one of --subdomain <subdomain> and --root')
      const password = opts.invite ? undefined : await passwordFrom(opts)
      await withServices(async (services) => {
        const created = await createOrganization(services, {
          name: opts.name,
          subdomain: opts.root ? '' : (opts.subdomain as string),
          ownerEmail: opts.ownerEmail,
          ownerFullName: opts.ownerName,
          ownerPassword: password?.password,
          inviteOwner: opts.invite,
        })
        out(`created the organization '${created.realm.name}' at ${created.url}`)
        if (created.kind === 'invitation') {
          out(`owner invitation for ${opts.ownerEmail.trim()} (valid until ${created.expiresAt.toISOString()}):`)
          out(created.invitationUrl)
        } else {
          out(`owner email:    ${created.owner.deliveryEmail}`)
          if (password?.generated) out(`owner password: ${created.password}`)
          out(`owner API key:  ${created.owner.apiKey}`)
        }
      })
    })
  org
    .command('list')
    .description('list the organizations: subdomain, URL, active users, name')
    .addOption(jsonOption())
    .exitOverride()
    .action(async (opts: { json?: boolean }) => {
      await withServices(async (services) => {
        const realms = await services.prisma.realm.findMany({ orderBy: { stringId: 'asc' } })
        const counts = await services.prisma.user.groupBy({ by: ['realmId'], where: { isActive: true, isBot: false }, _count: { _all: true } })
        const users = new Map(counts.map((c) => [c.realmId, c._count._all]))
        if (opts.json) {
          const rows = realms.map((r) => ({ subdomain: r.stringId, url: realmUrl(r, services.config.externalUrl), users: users.get(r.id) ?? 0, name: r.name, deactivated: r.deactivated }))
          return out(JSON.stringify(rows, null, 2))
        }
        out(['subdomain', 'url', 'users', 'name'].join('\t'))
        for (const realm of realms) {
          const subdomain = realm.stringId === '' ? '(root)' : realm.stringId
          out([subdomain, realmUrl(realm, services.config.externalUrl), String(users.get(realm.id) ?? 0), realm.name + (realm.deactivated ? ' (deactivated)' : '')].join('\t'))
        }
      })
    })

  const user = program.command('user').description('people and bots of an organization').exitOverride()
  user
    .command('create')
    .description("create a user (prints the password unless --password-stdin, and the API key)")
    .addOption(orgOption())
    .requiredOption('--email <email>', 'email address')
    .requiredOption('--name <full-name>', 'full name')
    .addOption(new Option('--role <role>', ROLE_CHOICES).argParser(parseRole).default(ROLE.MEMBER, 'member'))
    .option('--password-stdin', 'read the password from standard input instead of making one')
    .exitOverride()
    .action(async (opts: { org?: string; email: string; name: string; role: number; passwordStdin?: boolean }) => {
      const { password, generated } = await passwordFrom(opts)
      await inOrg(opts, async (ctx) => {
        const created = await createUser(ctx, { email: opts.email, fullName: opts.name, password, role: opts.role })
        out(`created ${created.deliveryEmail} (user ID ${created.id}, ${roleName(created.role)}) in '${ctx.realm.name}'`)
        if (generated) out(`password: ${password}`)
        out(`API key:  ${created.apiKey}`)
      })
    })
  user
    .command('set-role')
    .description("change a user's role")
    .addOption(orgOption())
    .argument('<email>', "the user's email address")
    .argument('<role>', ROLE_CHOICES, parseRole)
    .exitOverride()
    .action(async (email: string, role: number, opts: { org?: string }) => {
      await inOrg(opts, async (ctx) => {
        const target = await findUser(ctx, email)
        await updateUser(ctx, target.id, { role })
        out(target.role === role ? `${target.deliveryEmail} is already ${roleName(role)}` : `${target.deliveryEmail}: ${roleName(target.role)} → ${roleName(role)}`)
      })
    })
  user
    .command('reset-password')
    .description("set a new password (printed unless --password-stdin)")
    .addOption(orgOption())
    .argument('<email>', "the user's email address")
    .option('--password-stdin', 'read the password from standard input instead of making one')
    .exitOverride()
    .action(async (email: string, opts: { org?: string; passwordStdin?: boolean }) => {
      const { password, generated } = await passwordFrom(opts)
      await inOrg(opts, async (ctx) => {
        const target = await findUser(ctx, email)
        await setUserPassword(ctx, target.id, password)
        out(`new password set for ${target.deliveryEmail}`)
        if (generated) out(`password: ${password}`)
      })
    })
  /** `roost user <name> [--org] <email>`: runs `act` on that user of the organization. */
  const onUser = (name: string, description: string, act: (ctx: ActionContext, target: User) => Promise<void>) =>
    user
      .command(name)
      .description(description)
      .addOption(orgOption())
      .argument('<email>', "the user's email address")
      .exitOverride()
      .action(async (email: string, opts: { org?: string }) => {
        await inOrg(opts, async (ctx) => act(ctx, await findUser(ctx, email)))
      })
  onUser('regenerate-api-key', 'replace the API key (the old one stops working at once) and print the new one', async (ctx, target) => {
    out(`API key: ${await regenerateApiKey(ctx, target.id)}`)
  })
  onUser('revoke-sessions', "end every browser session of a user (logs them out of the web app everywhere)", async (ctx, target) => {
    const ended = await revokeWebSessions(ctx.prisma, [target.id])
    out(`ended ${ended} browser session${ended === 1 ? '' : 's'} of ${target.deliveryEmail}`)
  })
  onUser('deactivate', 'deactivate a user (and the bots it owns)', async (ctx, target) => {
    await deactivateUser(ctx, target.id)
    out(`deactivated ${target.deliveryEmail}`)
  })
  onUser('reactivate', 'reactivate a deactivated user', async (ctx, target) => {
    await reactivateUser(ctx, target.id)
    out(`reactivated ${target.deliveryEmail}`)
  })

  registerUserCommands(user, kit)
  registerOrgCommands(org, kit)
  registerChannelCommands(program, kit)

  const queue = program.command('queue').description("a user's event queues").exitOverride()
  queue
    .command('list')
    .description("list a user's live event queues: ID, created, lifespan, event types")
    .addOption(orgOption())
    .argument('<email>', "the user's email address")
    .addOption(jsonOption())
    .exitOverride()
    .action(async (email: string, opts: { org?: string; json?: boolean }) => {
      await inOrg(opts, async (ctx) => {
        const target = await findUser(ctx, email)
        if (!redisTargetOf(ctx.config)) io.stderr.write('roost: note: without Redis (REDIS_URL, REDIS_CLUSTER_NODES or REDIS_SENTINELS), event queues live in the server process; none exist while it is stopped\n')
        const queues = await ctx.events.store.queuesOf(target.id)
        if (opts.json) {
          const rows = queues.map((q) => ({ queue_id: q.queueId, created: new Date(q.createdAt).toISOString(), lifespan_seconds: q.lifespanSecs, event_types: q.eventTypes ?? null }))
          return out(JSON.stringify(rows, null, 2))
        }
        out(['queue_id', 'created', 'lifespan_seconds', 'event_types'].join('\t'))
        for (const q of queues) out([q.queueId, new Date(q.createdAt).toISOString(), String(q.lifespanSecs), q.eventTypes ? q.eventTypes.join(',') : '*'].join('\t'))
      })
    })
  queue
    .command('drop')
    .description("delete one of a user's event queues (its client gets BAD_EVENT_QUEUE_ID and registers again)")
    .addOption(orgOption())
    .argument('<email>', "the user's email address")
    .argument('<queue-id>', 'the queue ID (see queue list)')
    .exitOverride()
    .action(async (email: string, queueId: string, opts: { org?: string }) => {
      await inOrg(opts, async (ctx) => {
        const target = await findUser(ctx, email)
        const desc = await ctx.events.store.describe(queueId)
        if (!desc || desc.userId !== target.id || !(await ctx.events.store.remove(desc))) {
          throw new CliError(`${target.deliveryEmail} has no event queue '${queueId}'`)
        }
        out(`dropped the event queue ${queueId} of ${target.deliveryEmail}`)
      })
    })

  const migrate = program
    .command('migrate')
    .description('apply pending database migrations (safe to run from several places at once); see also migrate status')
    .exitOverride()
    .action(async () => {
      await kit.withDatabase(async (database) => {
        const applied = await applyMigrations(database, out)
        out(applied.length === 0 ? 'the database schema is up to date' : `applied ${applied.length} migration(s)`)
      })
    })
  registerMigrateCommands(migrate, kit)
  registerCheckCommand(program, kit)

  const commandDeps = { out, err: (line: string) => void io.stderr.write(`${line}\n`), withServices }
  addExportCommand(program, commandDeps)
  addImportCommand(program, commandDeps)
  addBackupCommands(program, { out, err: (line) => void io.stderr.write(`${line}\n`), config, env: io.env })

  program
    .command('config')
    .description('print the effective configuration as JSON, secrets masked')
    .exitOverride()
    .action(() => {
      out(JSON.stringify(maskSecrets(config()), null, 2))
    })

  return program
}

/** Runs one `roost` command; resolves with its exit code. */
export async function runRoost(argv: string[], io: CliIo): Promise<number> {
  const program = buildProgram(io)
  try {
    await program.parseAsync(argv, { from: 'user' })
    return 0
  } catch (error) {
    if (error instanceof CommanderError) {
      // Help and version are exit code 0; the message of a usage error is already printed.
      return error.exitCode === 0 ? 0 : 2
    }
    if (error instanceof ApiError || error instanceof CliError || error instanceof DataDirBusyError) {
      io.stderr.write(`roost: ${error instanceof ApiError ? error.msg : error.message}\n`)
      return 1
    }
    io.stderr.write(`roost: failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`)
    return 1
  }
}
