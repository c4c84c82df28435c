// `roost channel list | create | archive | add-members ORG …`: an
// organization's channels, changed as its owner through the actions (the
// same checks, transaction and events as the API). add-members is the
// operator's own action (actions/add-channel-members.ts): it adds people to
// any channel, private ones included, and never creates one.
import type { Command } from 'commander'
import { createChannel } from '../actions/create-channel.js'
import { deactivateStream } from '../actions/deactivate-stream.js'
import { addChannelMembers } from '../actions/add-channel-members.js'
import { idsMatchingLower } from '../db/exact-match.js'
import type { Stream } from '../db/index.js'
import { MAX_PRINCIPALS } from '../access/principals.js'
import { listOperatorChannels, type OperatorChannel } from '../queries/operator-channels.js'
import type { ActionContext } from '../services.js'
import { CliError, jsonOption, orgArgument, type CliKit, type Column } from './kit.js'

const CHANNEL_COLUMNS: Column<OperatorChannel>[] = [
  { header: 'ID', value: (c) => String(c.stream_id) },
  { header: 'NAME', value: (c) => c.name },
  { header: 'PRIVACY', value: (c) => c.privacy },
  { header: 'SUBSCRIBERS', value: (c) => String(c.subscribers) },
  { header: 'DESCRIPTION', value: (c) => c.description },
]

/** A channel of the organization by name (exactly, case-insensitively), not archived. */
async function findChannel(ctx: ActionContext, name: string): Promise<Stream> {
  const [match] = await idsMatchingLower(ctx.prisma, 'stream_name', { realm_id: ctx.realm.id }, [name.trim()])
  const stream = match ? await ctx.prisma.stream.findUnique({ where: { id: match.id } }) : null
  if (!stream || stream.deactivated) throw new CliError(`no channel named '${name.trim()}' in the organization '${ctx.realm.name}' (see 'roost channel list')`)
  return stream
}

/** User IDs for email addresses (real or API, exactly, case-insensitively) in one pass; every unknown address is named. */
async function usersByEmail(ctx: ActionContext, emails: string[]): Promise<number[]> {
  const wanted = [...new Set(emails.map((e) => e.trim()))]
  const scope = { realm_id: ctx.realm.id }
  const [real, api] = await Promise.all([idsMatchingLower(ctx.prisma, 'user_delivery_email', scope, wanted), idsMatchingLower(ctx.prisma, 'user_email', scope, wanted)])
  const byKey = new Map<string, number>()
  for (const row of [...api, ...real]) byKey.set(row.key, row.id)
  const unknown = wanted.filter((e) => !byKey.has(e.toLowerCase()))
  if (unknown.length > 0) throw new CliError(`no user with the email ${unknown.map((e) => `'${e}'`).join(', ')} in the organization '${ctx.realm.name}'`)
  return [...new Set(wanted.map((e) => byKey.get(e.toLowerCase()) as number))]
}

export function registerChannelCommands(program: Command, kit: CliKit): void {
  const channel = program.command('channel').description("an organization's channels").exitOverride()
  channel
    .command('list')
    .description('list the channels (archived ones left out): ID, name, privacy, subscribers, description')
    .addArgument(orgArgument())
    .addOption(jsonOption())
    .exitOverride()
    .action(async (subdomain: string, opts: { json?: boolean }) => {
      await kit.inOrg(subdomain, async (ctx) => kit.print(opts.json, await listOperatorChannels(ctx.prisma, ctx.realm.id), CHANNEL_COLUMNS))
    })
  channel
    .command('create')
    .description('create a channel with no subscribers (add them with add-members)')
    .addArgument(orgArgument())
    .argument('<name>', 'the channel name (up to 60 characters)')
    .option('--private', 'a private channel (default: public)')
    .option('--description <text>', 'its description')
    .exitOverride()
    .action(async (subdomain: string, name: string, opts: { private?: boolean; description?: string }) => {
      await kit.inOrg(subdomain, async (ctx) => {
        const stream = await createChannel(ctx, { name, description: opts.description, inviteOnly: opts.private === true })
        kit.out(`created the ${stream.inviteOnly ? 'private' : 'public'} channel '${stream.name}' (channel ID ${stream.id}) in '${ctx.realm.name}'`)
      })
    })
  channel
    .command('archive')
    .description('archive a channel: it takes no more messages and leaves the default channels; its name, subscribers and history stay')
    .addArgument(orgArgument())
    .argument('<name>', 'the channel name')
    .exitOverride()
    .action(async (subdomain: string, name: string) => {
      await kit.inOrg(subdomain, async (ctx) => {
        const stream = await findChannel(ctx, name)
        await deactivateStream(ctx, stream.id)
        kit.out(`archived the channel '${stream.name}' (channel ID ${stream.id})`)
      })
    })
  channel
    .command('add-members')
    .description(`subscribe people to a channel, public or private (at most ${MAX_PRINCIPALS} addresses per call); the channel must exist`)
    .addArgument(orgArgument())
    .argument('<name>', 'the channel name')
    .argument('<email...>', 'email addresses of the people to add')
    .exitOverride()
    .action(async (subdomain: string, name: string, emails: string[]) => {
      if (emails.length > MAX_PRINCIPALS) throw new CliError(`too many email addresses: ${emails.length} (at most ${MAX_PRINCIPALS} per call)`)
      await kit.inOrg(subdomain, async (ctx) => {
        // Looked up by name once; from here on the channel is its ID (a concurrent rename cannot send the people elsewhere).
        const { id: streamId } = await findChannel(ctx, name)
        const userIds = await usersByEmail(ctx, emails)
        const result = await addChannelMembers(ctx, { streamId, userIds })
        const stream = result.stream
        const added = Object.keys(result.subscribed).length
        const already = Object.keys(result.already_subscribed).length
        kit.out(`added ${added} ${added === 1 ? 'person' : 'people'} to '${stream.name}'${already > 0 ? ` (${already} already subscribed)` : ''}`)
      })
    })
}

