// `roost org rename | deactivate | reactivate ORG`: organization changes an
// operator makes as the organization's owner, through the actions (checks,
// one transaction, events to the running cluster after commit).
import type { Command } from 'commander'
import { deactivateRealm, reactivateRealm } from '../actions/deactivate-realm.js'
import { updateRealm } from '../actions/update-realm.js'
import { realmUrl } from '../present/realm.js'
import { orgArgument, type CliKit } from './kit.js'

export function registerOrgCommands(org: Command, kit: CliKit): void {
  org
    .command('rename')
    .description('change the name of an organization (its subdomain stays)')
    .addArgument(orgArgument())
    .requiredOption('--name <name>', 'the new name (1–40 characters)')
    .exitOverride()
    .action(async (subdomain: string, opts: { name: string }) => {
      await kit.inOrg(subdomain, async (ctx) => {
        const before = ctx.realm.name
        await updateRealm(ctx, { name: opts.name })
        const after = (await ctx.prisma.realm.findUniqueOrThrow({ where: { id: ctx.realm.id } })).name
        kit.out(before === after ? `the organization is already named '${after}'` : `renamed '${before}' to '${after}'`)
      })
    })
  org
    .command('deactivate')
    .description('deactivate an organization: its API keys, logins and browser sessions stop working (data is kept)')
    .addArgument(orgArgument())
    .exitOverride()
    .action(async (subdomain: string) => {
      await kit.inOrg(subdomain, async (ctx) => {
        await deactivateRealm(ctx)
        kit.out(`deactivated the organization '${ctx.realm.name}' at ${realmUrl(ctx.realm, ctx.config.externalUrl)}`)
      })
    })
  org
    .command('reactivate')
    .description('reactivate a deactivated organization')
    .addArgument(orgArgument())
    .exitOverride()
    .action(async (subdomain: string) => {
      await kit.inOrg(subdomain, async (ctx) => {
        await reactivateRealm(ctx)
        kit.out(`reactivated the organization '${ctx.realm.name}' at ${realmUrl(ctx.realm, ctx.config.externalUrl)}`)
      })
    })
}
