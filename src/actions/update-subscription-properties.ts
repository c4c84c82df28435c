// POST /users/me/subscriptions/properties: per-subscription settings, all or
// nothing. in_home_view is the legacy inverse of is_muted; changing either
// emits two events (in_home_view first, then is_muted), as from level 139.
import type { ActionContext } from './context.js'
import { inTransaction } from './context.js'
import type { Prisma } from '../db/index.js'
import { invalidHexColor, notABoolean, notSubscribedToStreamId, unknownSubscriptionProperty } from '../errors.js'
import { accessStreamsByIds, type StreamAccess } from '../access/stream.js'
import { HEX_COLOR } from './subscribe.js'
import { subscriptionUpdateEvent } from '../events/schemas/index.js'

export const SUBSCRIPTION_PROPERTIES = [
  'color',
  'is_muted',
  'in_home_view',
  'pin_to_top',
  'desktop_notifications',
  'audible_notifications',
  'push_notifications',
  'email_notifications',
  'wildcard_mentions_notify',
] as const
export type SubscriptionProperty = (typeof SUBSCRIPTION_PROPERTIES)[number]

const isProperty = (p: string): p is SubscriptionProperty => (SUBSCRIPTION_PROPERTIES as readonly string[]).includes(p)

export interface SubscriptionChange {
  stream_id: number
  property: string
  value: boolean | string
}

const BOOLEAN_COLUMNS = {
  pin_to_top: 'pinToTop',
  desktop_notifications: 'desktopNotifications',
  audible_notifications: 'audibleNotifications',
  push_notifications: 'pushNotifications',
  email_notifications: 'emailNotifications',
  wildcard_mentions_notify: 'wildcardMentionsNotify',
} as const

export { subscriptionUpdateEvent }

export async function updateSubscriptionProperties(ctx: ActionContext, changes: SubscriptionChange[]): Promise<void> {
  const user = ctx.user
  for (const { property } of changes) if (!isProperty(property)) throw unknownSubscriptionProperty(property)
  await inTransaction(ctx, async (tx, emit) => {
    // Every channel looked up at once; the changes are at most MAX_SUBSCRIPTION_CHANGES.
    const access = await accessStreamsByIds(tx, user, changes.map((c) => c.stream_id))
    for (const change of changes) {
      const { property, value } = change
      if (!isProperty(property)) throw unknownSubscriptionProperty(property)
      const { stream, subscription } = access.get(change.stream_id) as StreamAccess
      if (!subscription) throw notSubscribedToStreamId(change.stream_id)
      if (property === 'color') {
        if (typeof value !== 'string' || !HEX_COLOR.test(value)) throw invalidHexColor(property)
        await tx.subscription.update({ where: { id: subscription.id }, data: { color: value } })
        emit(subscriptionUpdateEvent(stream.id, property, value), [user.id])
        continue
      }
      if (typeof value !== 'boolean') throw notABoolean(property)
      if (property === 'is_muted' || property === 'in_home_view') {
        const isMuted = property === 'is_muted' ? value : !value
        await tx.subscription.update({ where: { id: subscription.id }, data: { isMuted } })
        emit(subscriptionUpdateEvent(stream.id, 'in_home_view', !isMuted), [user.id])
        emit(subscriptionUpdateEvent(stream.id, 'is_muted', isMuted), [user.id])
        continue
      }
      const data: Prisma.SubscriptionUpdateInput = { [BOOLEAN_COLUMNS[property]]: value }
      await tx.subscription.update({ where: { id: subscription.id }, data })
      emit(subscriptionUpdateEvent(stream.id, property, value), [user.id])
    }
  })
}
