// POST /users/me/subscriptions/properties: per-subscription settings, all or
// nothing. in_home_view is the legacy inverse of is_muted; changing either
// emits two events (in_home_view first, then is_muted), as from level 139.
import type { ActionContext } from './context.js'
import { inTransaction } from './context.js'
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

export { subscriptionUpdateEvent }

/** A subscription's columns a request sets; absent: unchanged. */
interface SubscriptionColumns {
  color?: string
  is_muted?: boolean
  pin_to_top?: boolean
  desktop_notifications?: boolean
  audible_notifications?: boolean
  push_notifications?: boolean
  email_notifications?: boolean
  wildcard_mentions_notify?: boolean
}

export async function updateSubscriptionProperties(ctx: ActionContext, changes: SubscriptionChange[]): Promise<void> {
  const user = ctx.user
  for (const { property } of changes) if (!isProperty(property)) throw unknownSubscriptionProperty(property)
  await inTransaction(ctx, async (tx, emit) => {
    // Every channel looked up at once; the changes are at most MAX_CHANNELS_PER_REQUEST.
    const access = await accessStreamsByIds(tx, user, changes.map((c) => c.stream_id))
    // Checked and told in order; each subscription's columns end as its last change set them.
    const columns = new Map<number, SubscriptionColumns>()
    const set = (subscriptionId: number, values: SubscriptionColumns) => columns.set(subscriptionId, { ...columns.get(subscriptionId), ...values })
    for (const change of changes) {
      const { property, value } = change
      if (!isProperty(property)) throw unknownSubscriptionProperty(property)
      const { stream, subscription } = access.get(change.stream_id) as StreamAccess
      if (!subscription) throw notSubscribedToStreamId(change.stream_id)
      if (property === 'color') {
        if (typeof value !== 'string' || !HEX_COLOR.test(value)) throw invalidHexColor(property)
        set(subscription.id, { color: value })
        emit(subscriptionUpdateEvent(stream.id, property, value), [user.id])
        continue
      }
      if (typeof value !== 'boolean') throw notABoolean(property)
      if (property === 'is_muted' || property === 'in_home_view') {
        const isMuted = property === 'is_muted' ? value : !value
        set(subscription.id, { is_muted: isMuted })
        emit(subscriptionUpdateEvent(stream.id, 'in_home_view', !isMuted), [user.id])
        emit(subscriptionUpdateEvent(stream.id, 'is_muted', isMuted), [user.id])
        continue
      }
      set(subscription.id, { [property]: value })
      emit(subscriptionUpdateEvent(stream.id, property, value), [user.id])
    }
    if (columns.size === 0) return
    // One UPDATE for every subscription: a null in a column's list leaves that column as it was.
    const rows = [...columns]
    const list = <K extends keyof SubscriptionColumns>(key: K) => rows.map(([, c]) => c[key] ?? null)
    await tx.$executeRaw`
      UPDATE subscription AS s SET
        color = COALESCE(v.color, s.color),
        is_muted = COALESCE(v.is_muted, s.is_muted),
        pin_to_top = COALESCE(v.pin_to_top, s.pin_to_top),
        desktop_notifications = COALESCE(v.desktop_notifications, s.desktop_notifications),
        audible_notifications = COALESCE(v.audible_notifications, s.audible_notifications),
        push_notifications = COALESCE(v.push_notifications, s.push_notifications),
        email_notifications = COALESCE(v.email_notifications, s.email_notifications),
        wildcard_mentions_notify = COALESCE(v.wildcard_mentions_notify, s.wildcard_mentions_notify)
      FROM unnest(
        ${rows.map(([id]) => id)}::int[], ${list('color')}::text[], ${list('is_muted')}::boolean[], ${list('pin_to_top')}::boolean[],
        ${list('desktop_notifications')}::boolean[], ${list('audible_notifications')}::boolean[], ${list('push_notifications')}::boolean[],
        ${list('email_notifications')}::boolean[], ${list('wildcard_mentions_notify')}::boolean[]
      ) AS v(id, color, is_muted, pin_to_top, desktop_notifications, audible_notifications, push_notifications, email_notifications, wildcard_mentions_notify)
      WHERE s.id = v.id AND s.user_id = ${user.id}`
  })
}
