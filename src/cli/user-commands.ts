// `roost user list | show | change-email | allow-email-changes`: reading accounts (a table, or
// JSON with --json) and an administrator's change of a user's email address
// (upstream's change_user_email command) through the action.
import { InvalidArgumentError, Option, type Command } from 'commander'
import { changeUserDeliveryEmail } from '../actions/change-user-email.js'
import { setCanChangeUserEmails } from '../actions/email-change-permission.js'
import { listOperatorUsers, operatorUserById, type OperatorUser } from '../queries/operator-users.js'
import { CliError, findOrganization, findUser } from './session.js'
import { jsonOption, orgOption, type CliKit, type Column } from './kit.js'
import { parseRole, roleName, ROLE_CHOICES } from './roles.js'

/** The most accounts one `user list` prints. */
export const MAX_USER_LIST_LIMIT = 100_000
const DEFAULT_USER_LIST_LIMIT = 1_000

function parseLimit(raw: string): number {
  const n = Number(raw)
  if (!/^\d+$/.test(raw.trim()) || n < 1 || n > MAX_USER_LIST_LIMIT) throw new InvalidArgumentError(`'${raw}' is not a whole number from 1 to ${MAX_USER_LIST_LIMIT}.`)
  return n
}

const orgLabel = (subdomain: string): string => (subdomain === '' ? '(root)' : subdomain)

const USER_COLUMNS: Column<OperatorUser>[] = [
  { header: 'ID', value: (u) => String(u.user_id) },
  { header: 'ORGANIZATION', value: (u) => orgLabel(u.organization) },
  { header: 'EMAIL', value: (u) => u.delivery_email },
  { header: 'ROLE', value: (u) => roleName(u.role) },
  { header: 'STATUS', value: (u) => (u.is_active ? 'active' : 'deactivated') },
  { header: 'TYPE', value: (u) => (u.is_bot ? 'bot' : 'person') },
  { header: 'NAME', value: (u) => u.full_name },
]

/** JSON adds the role's name beside the API's number. */
const withRoleName = (u: OperatorUser) => ({ ...u, role_name: roleName(u.role) })

export function registerUserCommands(user: Command, kit: CliKit): void {
  user
    .command('list')
    .description('list accounts (people and bots) of every organization, or of one with --org')
    .addOption(new Option('--org <subdomain>', "only this organization ('' for the root organization)"))
    .addOption(new Option('--role <role>', `only this role: ${ROLE_CHOICES}`).argParser(parseRole))
    .addOption(new Option('--active', 'only active accounts').conflicts('deactivated'))
    .addOption(new Option('--deactivated', 'only deactivated accounts'))
    .option('--bots', 'only bots')
    .option('--no-bots', 'only people')
    .addOption(new Option('--limit <n>', `print at most n accounts (up to ${MAX_USER_LIST_LIMIT})`).argParser(parseLimit).default(DEFAULT_USER_LIST_LIMIT))
    .addOption(jsonOption())
    .exitOverride()
    .action(async (opts: { org?: string; role?: number; active?: boolean; deactivated?: boolean; bots?: boolean; limit: number; json?: boolean }) => {
      await kit.withServices(async (services) => {
        const realm = opts.org === undefined ? undefined : await findOrganization(services, opts.org)
        const active = opts.active ? true : opts.deactivated ? false : undefined
        const { users, more } = await listOperatorUsers(services.prisma, { realmId: realm?.id, role: opts.role, active, bots: opts.bots }, opts.limit)
        kit.print(opts.json, opts.json ? users.map(withRoleName) : users, USER_COLUMNS)
        if (more) kit.io.stderr.write(`roost: note: only the first ${opts.limit} accounts are listed (--limit)\n`)
      })
    })
  user
    .command('show')
    .description('show one account: by email address in an organization, or by user ID')
    .addOption(orgOption())
    .argument('<email-or-id>', "the user's email address, or the user ID")
    .addOption(jsonOption())
    .exitOverride()
    .action(async (who: string, opts: { org?: string; json?: boolean }) => {
      await kit.withServices(async (services) => {
        let found: OperatorUser | null
        if (/^\d+$/.test(who.trim())) {
          found = await operatorUserById(services.prisma, Number(who.trim()))
          const realm = opts.org === undefined ? undefined : await findOrganization(services, opts.org)
          if (!found || (realm && found.organization !== realm.stringId)) throw new CliError(`no user with the ID ${who.trim()}${realm ? ` in the organization '${realm.name}'` : ''}`)
        } else {
          const realm = await findOrganization(services, opts.org)
          found = await operatorUserById(services.prisma, (await findUser({ prisma: services.prisma, realm }, who)).id)
        }
        if (!found) throw new CliError(`no user '${who}'`)
        if (opts.json) return kit.out(JSON.stringify(withRoleName(found), null, 2))
        const lines: [string, string][] = [
          ['user ID', String(found.user_id)],
          ['organization', orgLabel(found.organization)],
          ['email', found.delivery_email],
          ['API email', found.email],
          ['full name', found.full_name],
          ['role', roleName(found.role)],
          ['status', found.is_active ? 'active' : 'deactivated'],
          ['type', found.is_bot ? `bot${found.bot_owner_id === null ? '' : ` (owner: user ID ${found.bot_owner_id})`}` : 'person'],
          ['joined', found.date_joined],
          ['last login', found.last_login ?? 'never'],
        ]
        for (const [label, value] of lines) kit.out(`${`${label}:`.padEnd(14)}${value}`)
      })
    })
  user
    .command('change-email')
    .description("change a user's email address (no confirmation mail; the user logs in with the new one)")
    .addOption(orgOption())
    .argument('<email>', "the user's current email address")
    .argument('<new-email>', 'the new email address')
    .exitOverride()
    .action(async (email: string, newEmail: string, opts: { org?: string }) => {
      await kit.inOrg(opts.org, async (ctx) => {
        const target = await findUser(ctx, email)
        const updated = await changeUserDeliveryEmail(ctx, target.id, newEmail)
        kit.out(updated.deliveryEmail === target.deliveryEmail ? `${target.deliveryEmail} already has that email address` : `${target.deliveryEmail} → ${updated.deliveryEmail} (user ID ${target.id})`)
      })
    })
  user
    .command('allow-email-changes')
    .description("let an administrator change other users' email addresses through the API (can_change_user_emails), or stop it with --revoke")
    .addOption(orgOption())
    .argument('<email>', "the user's email address")
    .option('--revoke', 'take the permission away')
    .exitOverride()
    .action(async (email: string, opts: { org?: string; revoke?: boolean }) => {
      await kit.inOrg(opts.org, async (ctx) => {
        const target = await findUser(ctx, email)
        const updated = await setCanChangeUserEmails(ctx, target.id, !opts.revoke)
        kit.out(`${updated.deliveryEmail}: can_change_user_emails ${updated.canChangeUserEmails ? 'granted' : 'revoked'}`)
      })
    })
}
