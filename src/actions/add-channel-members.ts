// `roost channel add-members`: an operator subscribes people to one channel,
// named by its ID, whatever its privacy. No permission check: this is the
// server operator's command, not an API request (an owner who is not
// subscribed to a private channel cannot do this through the API, and the
// operator acts as the organization's Notification Bot, which is subscribed
// to nothing). Everything else is a subscription request's: one transaction,
// the same events (stream create for subscribers who could not see a private
// channel, subscription add, peer_add, guest access changes), and the
// Notification Bot's "subscribed you" messages. The channel is never
// created: it is read by ID with a share lock, so a rename or an archive in
// progress finishes first (and an archived channel is refused), rather than a
// lookup by name that could miss a channel renamed meanwhile.
import type { Stream } from '../db/index.js'
import type { ActionContext } from './context.js'
import { inTransaction } from './context.js'
import { addSubscriptions, checkSubscriptionChangeCount, type SubscribeResult } from './subscribe.js'
import { sendSubscriptionNotifications } from './subscription-notifications.js'
import { resolvePrincipals } from '../access/principals.js'
import { streamArchived, streamIdNotFound } from '../errors.js'

export interface AddChannelMembersInput {
  streamId: number
  userIds: number[]
}

export interface AddChannelMembersResult extends SubscribeResult {
  /** The channel as it was when the people were added (its name after any concurrent rename). */
  stream: Stream
}

export async function addChannelMembers(ctx: ActionContext, input: AddChannelMembersInput): Promise<AddChannelMembersResult> {
  checkSubscriptionChangeCount(input.userIds.length, 1)
  const outcome = await inTransaction(ctx, async (tx, emit) => {
    await tx.$executeRaw`SELECT id FROM stream WHERE id = ${input.streamId} AND realm_id = ${ctx.realm.id} FOR SHARE`
    const stream = await tx.stream.findFirst({ where: { id: input.streamId, realmId: ctx.realm.id } })
    if (!stream) throw streamIdNotFound(input.streamId)
    if (stream.deactivated) throw streamArchived(stream.name)
    const subscribers = await resolvePrincipals(tx, ctx.realm.id, input.userIds)
    const result = await addSubscriptions(tx, emit, { ctx, streams: [stream], created: [], subscribers, colors: new Map() })
    const added = subscribers.map((user) => ({ user, streamNames: result.subscribed[String(user.id)] ?? [] }))
    return { result: { ...result, stream }, added }
  })
  await sendSubscriptionNotifications(ctx, { created: [], added: outcome.added, announce: false })
  return outcome.result
}
