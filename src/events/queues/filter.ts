// Per-queue filtering and client_capabilities transforms, applied when an
// item is appended (upstream's ClientDescriptor.accepts_event and friends).
// Pure: both queue stores call it with the queue's descriptor.
//
// Conventions for publishers (actions):
// * message events carry the sender's full avatar URL; queues with client_gravatar
//   get null for a Gravatar of a sender known by the real address.
// * message events carry `message.content` rendered (HTML) and the Markdown
//   source in `message.raw_content`; queues without apply_markdown get the
//   source with content_type text/x-markdown. `raw_content` never leaves here.
// * per-recipient fields (`flags`) come in BusItem.perUser; the sender's entry may
//   carry `local_message_id` with `sender_queue_id`, delivered to that queue only.
// * settings changes are published once as `user_settings`; the legacy
//   update_display_settings / update_global_notifications events are derived
//   here for queues without the user_settings_object capability.
// * subscription objects and updates keep null notification settings; the
//   event carries the recipient's global defaults in NOTIFICATION_DEFAULTS_FIELD
//   and queues without notification_settings_null get the inherited values.
//   A user_settings change of a global default carries, in INHERITING_STREAMS_FIELD,
//   the user's channels that inherit it: those queues also get a subscription
//   update per channel, so their resolved values stay true.
// * topics are stored and published as they are, the empty topic as "";
//   queues without the empty_topic_name capability get its display name in
//   every topic field upstream lists for level 334 (emptyTopicByName).
// * a realm_user add about a user the recipient cannot access carries the
//   "Unknown user" placeholder and INACCESSIBLE_USER_FIELD; queues with
//   user_list_incomplete do not receive it.
// * a user group's deactivation is published as user_group update
//   {deactivated: true} and user_group remove: queues with
//   include_deactivated_groups keep the update, the others the remove. A name
//   change of a deactivated group carries DEACTIVATED_GROUP_FIELD; queues
//   without the capability do not receive it (upstream level 294).
// * archiving a channel is published as stream update {is_archived: true} and
//   stream delete carrying FOR_ARCHIVING_FIELD: queues with archived_channels
//   keep the update, the others the delete (upstream levels 315 and 378).
//   Queues without the capability know no archived channel, so they also get
//   no channel object of one in stream create or subscription add.
import { isExternalAvatarUrl } from '../../domain/avatar.js'
import { listToFlags } from '../../domain/flags.js'
import { legacySettingsEvents } from './legacy-settings.js'
import { EMPTY_TOPIC_DISPLAY_NAME } from '../../domain/topics.js'
import { subscriptionUpdateEvent } from '../schemas/index.js'
import { matchesNarrow, type NarrowableMessage } from '../../domain/narrow.js'
import {
  isInheritedProperty,
  propertyInheritingFrom,
  withInheritedNotifications,
  type StreamNotificationDefaults,
} from '../../domain/stream-notifications.js'
import type { BusItem, WireEvent } from '../bus.js'
import type { QueueDescriptor } from './types.js'

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)

function narrowableMessage(message: Record<string, unknown>, flags: unknown): NarrowableMessage {
  const recipient = message.display_recipient
  const dmUsers = Array.isArray(recipient)
    ? recipient.filter(isRecord).map((u) => ({ id: Number(u.id), email: String(u.email ?? '') }))
    : undefined
  let mask = 0
  if (Array.isArray(flags)) {
    try {
      mask = listToFlags(flags.map(String))
    } catch {
      mask = 0
    }
  }
  return {
    id: Number(message.id),
    type: message.type === 'stream' ? 'stream' : 'private',
    streamId: typeof message.stream_id === 'number' ? message.stream_id : null,
    streamName: typeof recipient === 'string' ? recipient : null,
    topic: typeof message.subject === 'string' ? message.subject : typeof message.topic === 'string' ? message.topic : null,
    senderId: Number(message.sender_id),
    senderEmail: String(message.sender_email ?? ''),
    dmUsers,
    flags: mask,
    content: String(message.raw_content ?? message.content ?? ''),
  }
}

/**
 * Whether the sender is known by the stand-in user{id}@{domain}: a client
 * hashing that address would get someone else's picture, so the URL stays
 * (upstream's finalize_payload turns client_gravatar off for such a sender).
 */
function hasStandInEmail(message: Record<string, unknown>): boolean {
  return typeof message.sender_email === 'string' && message.sender_email.toLowerCase().startsWith(`user${String(message.sender_id)}@`)
}

function renderMessage(event: WireEvent, applyMarkdown: boolean, clientExtavatar: boolean): WireEvent {
  if (!isRecord(event.message)) return event
  const { raw_content: raw, ...message } = event.message
  if (clientExtavatar && isExternalAvatarUrl(message.avatar_url) && !hasStandInEmail(message)) message.avatar_url = null
  if (!applyMarkdown && typeof raw === 'string') {
    message.content = raw
    message.content_type = 'text/x-markdown'
  } else if (raw !== undefined) {
    message.content_type = 'text/html'
  }
  return { ...event, message }
}

/** `local_message_id` goes only to the queue that sent the message (`sender_queue_id`, never delivered). */
function ownLocalId(event: WireEvent, queueId: string): WireEvent {
  if (event.sender_queue_id === undefined && event.local_message_id === undefined) return event
  const { sender_queue_id: senderQueue, local_message_id: localId, ...rest } = event
  return senderQueue === queueId && localId !== undefined ? { ...rest, local_message_id: localId } : rest
}

/** Internal fields publishers set; never delivered (see the conventions above). */
import { DEACTIVATED_GROUP_FIELD, FOR_ARCHIVING_FIELD, INACCESSIBLE_USER_FIELD, INHERITING_STREAMS_FIELD, NOTIFICATION_DEFAULTS_FIELD } from '../schemas/internal.js'
export { DEACTIVATED_GROUP_FIELD, FOR_ARCHIVING_FIELD, INACCESSIBLE_USER_FIELD, INHERITING_STREAMS_FIELD, NOTIFICATION_DEFAULTS_FIELD }

function withoutFields(event: WireEvent, ...fields: string[]): WireEvent {
  if (!fields.some((f) => f in event)) return event
  const out: WireEvent = { ...event }
  for (const f of fields) delete out[f]
  return out
}

/** subscription add/update for a queue, with null notification settings resolved unless it accepts them. */
function subscriptionForQueue(event: WireEvent, acceptsNull: boolean): WireEvent {
  const defaults = event[NOTIFICATION_DEFAULTS_FIELD] as StreamNotificationDefaults | undefined
  const out = withoutFields(event, NOTIFICATION_DEFAULTS_FIELD)
  if (acceptsNull || defaults === undefined) return out
  if (out.op === 'add' && Array.isArray(out.subscriptions)) {
    return { ...out, subscriptions: out.subscriptions.map((sub: unknown) => (isRecord(sub) ? withInheritedNotifications(sub, defaults) : sub)) }
  }
  if (out.op === 'update' && out.value === null && isInheritedProperty(out.property)) return { ...out, value: defaults[out.property] }
  return out
}

/** A user_group event as a queue with or without include_deactivated_groups receives it (null: not at all). */
function userGroupForQueue(event: WireEvent, includeDeactivated: boolean): WireEvent | null {
  if (event.op === 'remove') return includeDeactivated ? null : event
  if (event.op !== 'update') return event
  const data = isRecord(event.data) ? event.data : {}
  if (data.deactivated === true) return includeDeactivated ? event : null
  if (event[DEACTIVATED_GROUP_FIELD] !== undefined) return includeDeactivated ? withoutFields(event, DEACTIVATED_GROUP_FIELD) : null
  return event
}

const isArchivedStream = (obj: unknown): boolean => isRecord(obj) && obj.is_archived === true

/** A stream event as a queue with or without archived_channels receives it (null: not at all). */
function streamForQueue(event: WireEvent, archivedChannels: boolean): WireEvent | null {
  if (event.op === 'delete' && event[FOR_ARCHIVING_FIELD] !== undefined) return archivedChannels ? null : withoutFields(event, FOR_ARCHIVING_FIELD)
  if (event.op === 'update' && event.property === 'is_archived') return archivedChannels ? event : null
  if (event.op === 'create' && !archivedChannels && Array.isArray(event.streams) && event.streams.some(isArchivedStream)) {
    const streams = event.streams.filter((s: unknown) => !isArchivedStream(s))
    return streams.length === 0 ? null : { ...event, streams }
  }
  return event
}

/** subscription add without the archived channels a queue without archived_channels does not know (null: nothing left). */
function subscriptionAddForQueue(event: WireEvent, archivedChannels: boolean): WireEvent | null {
  if (archivedChannels || event.op !== 'add' || !Array.isArray(event.subscriptions) || !event.subscriptions.some(isArchivedStream)) return event
  const subscriptions = event.subscriptions.filter((s: unknown) => !isArchivedStream(s))
  return subscriptions.length === 0 ? null : { ...event, subscriptions }
}

/** For queues resolving inherited values: the subscription updates a change of a global default implies. */
function inheritedUpdates(event: WireEvent): WireEvent[] {
  const streamIds = event[INHERITING_STREAMS_FIELD]
  const inherited = typeof event.property === 'string' ? propertyInheritingFrom(event.property) : undefined
  if (!Array.isArray(streamIds) || inherited === undefined) return []
  // The user_settings event's value: a boolean global default (userSettingsEvent).
  return (streamIds as number[]).map((id) => subscriptionUpdateEvent(id, inherited.property, event.value as boolean))
}

const named = (topic: unknown): unknown => (topic === '' ? EMPTY_TOPIC_DISPLAY_NAME : topic)

/**
 * Level 334, for queues without empty_topic_name: the empty topic of a
 * channel message by its display name in message `subject`, delete_message
 * `topic`, update_message `orig_subject`/`subject`, user_topic `topic_name`,
 * typing `topic` and the unread details of update_message_flags remove.
 */
function emptyTopicByName(event: WireEvent): WireEvent {
  switch (event.type) {
    case 'message': {
      const message = event.message
      if (!isRecord(message) || message.type !== 'stream' || message.subject !== '') return event
      return { ...event, message: { ...message, subject: EMPTY_TOPIC_DISPLAY_NAME } }
    }
    case 'delete_message':
    case 'typing':
      return event.topic === '' ? { ...event, topic: EMPTY_TOPIC_DISPLAY_NAME } : event
    case 'update_message': {
      if (event.orig_subject !== '' && event.subject !== '') return event
      const out: WireEvent = { ...event }
      if ('orig_subject' in out) out.orig_subject = named(out.orig_subject)
      if ('subject' in out) out.subject = named(out.subject)
      return out
    }
    case 'user_topic':
      return event.topic_name === '' ? { ...event, topic_name: EMPTY_TOPIC_DISPLAY_NAME } : event
    case 'update_message_flags': {
      const details = event.message_details
      if (!isRecord(details) || !Object.values(details).some((d) => isRecord(d) && d.type === 'stream' && d.topic === '')) return event
      const renamed = Object.fromEntries(
        Object.entries(details).map(([id, d]) => [id, isRecord(d) && d.type === 'stream' ? { ...d, topic: named(d.topic) } : d]),
      )
      return { ...event, message_details: renamed }
    }
    default:
      return event
  }
}

/** The events (zero, one or several) that `desc`'s queue receives for `item`, without IDs. */
export function eventsForQueue(desc: QueueDescriptor, item: BusItem): WireEvent[] {
  if (item.realmId !== desc.realmId) return []
  const caps = desc.capabilities
  const recipient = item.userIds.includes(desc.userId)
  let event: WireEvent = item.event
  if (!recipient) {
    // Only all_public_streams queues see messages they were not addressed.
    if (!(event.type === 'message' && item.publicStreamId !== undefined && desc.allPublicStreams)) return []
    event = { ...event, flags: [] }
  } else {
    const own = item.perUser?.[desc.userId]
    if (own) event = { ...event, ...own }
  }

  let out: WireEvent[]
  switch (event.type) {
    case 'message':
      if (desc.narrow.length > 0 && isRecord(event.message) && !matchesNarrow(narrowableMessage(event.message, event.flags), desc.narrow)) {
        return []
      }
      out = [renderMessage(ownLocalId(event, desc.queueId), desc.applyMarkdown, desc.clientExtavatar)]
      break
    case 'user_settings': {
      const plain = withoutFields(event, INHERITING_STREAMS_FIELD)
      out = caps.user_settings_object ? [plain] : [plain, ...legacySettingsEvents(plain, { email: desc.userEmail })]
      if (!caps.notification_settings_null) out.push(...inheritedUpdates(event))
      break
    }
    case 'subscription': {
      const known = subscriptionAddForQueue(event, caps.archived_channels)
      out = known === null ? [] : [subscriptionForQueue(known, caps.notification_settings_null)]
      break
    }
    case 'stream':
      out = [streamForQueue(event, caps.archived_channels)].filter((e): e is WireEvent => e !== null)
      break
    case 'realm_user':
      if (event[INACCESSIBLE_USER_FIELD] !== undefined) {
        out = caps.user_list_incomplete ? [] : [withoutFields(event, INACCESSIBLE_USER_FIELD)]
      } else {
        out = [event]
      }
      break
    case 'user_group':
      out = [userGroupForQueue(event, caps.include_deactivated_groups)].filter((e): e is WireEvent => e !== null)
      break
    case 'update_display_settings':
    case 'update_global_notifications':
      out = caps.user_settings_object ? [] : [event]
      break
    case 'delete_message':
      if (!caps.bulk_message_deletion && Array.isArray(event.message_ids)) {
        const { message_ids: ids, ...rest } = event
        out = (ids as unknown[]).map((id) => ({ ...rest, message_id: id }))
      } else {
        out = [event]
      }
      break
    case 'typing':
      out = (event.stream_id !== undefined || event.message_type === 'stream') && !caps.stream_typing_notifications ? [] : [event]
      break
    case 'realm_linkifiers':
      out = caps.linkifier_url_template ? [event] : []
      break
    case 'presence':
      if (desc.slimPresence) {
        const { email: _email, ...rest } = event
        out = [rest as WireEvent]
      } else {
        out = [event]
      }
      break
    case 'muted_topics':
      out = desc.eventTypes?.includes('user_topic') && desc.eventTypes.includes('muted_topics') ? [] : [event]
      break
    default:
      out = [event]
  }
  if (!caps.empty_topic_name) out = out.map(emptyTopicByName)
  const types = desc.eventTypes
  const accepted = types === null ? out : out.filter((e) => types.includes(e.type))
  // Kept in the queue, never sent: lets a fetch drop what the register snapshot already contains.
  return item.xid === undefined ? accepted : accepted.map((e) => ({ ...e, [XID_FIELD]: item.xid }))
}

/**
 * What an event counts against its queue's byte cap (EVENT_QUEUE_MAX_BYTES):
 * the UTF-8 bytes of its JSON without the ID, as the Redis store keeps it.
 */
export function eventBytes(event: WireEvent): number {
  return Buffer.byteLength(JSON.stringify(event))
}

/** Internal field carrying the producing transaction's ID on queued events. */
export const XID_FIELD = '__xid'

/**
 * What, besides the item, decides a queue's events: queues of one item with
 * the same key receive the same events. Everything eventsForQueue reads of a
 * descriptor is here, except the user (the recipient test and the user's own
 * fields, added per item by eventsFanOut) and the queue ID (used only for the
 * sender's `local_message_id`).
 */
function descriptorShape(desc: QueueDescriptor): string {
  let shape = shapes.get(desc)
  if (shape === undefined) {
    const caps = desc.capabilities
    shape = JSON.stringify([
      desc.realmId,
      desc.allPublicStreams,
      desc.narrow,
      desc.applyMarkdown,
      desc.clientExtavatar,
      desc.slimPresence,
      desc.eventTypes,
      Object.keys(caps)
        .sort()
        .map((k) => (caps[k as keyof typeof caps] ? 1 : 0))
        .join(''),
    ])
    shapes.set(desc, shape)
  }
  return shape
}
const shapes = new WeakMap<QueueDescriptor, string>()

/**
 * eventsForQueue for the many queues one item goes to, computed (and passed
 * to `prepare`, e.g. serialized) once per distinct outcome: a message to
 * 1,000 recipients, who mostly share their flags and client options, is
 * filtered a handful of times instead of 1,000. Queues whose outcome may be
 * their own (the sender's entry with its local ID; a settings event that names
 * its user) get their own computation.
 */
export function eventsFanOut<T>(item: BusItem, prepare: (events: WireEvent[]) => T): (desc: QueueDescriptor) => T {
  const recipients = new Set(item.userIds)
  const entryIds = new Map<object, number>()
  const outcomes = new Map<string, T>()
  const type = item.event.type
  const namesItsUser = type === 'user_settings' || type === 'update_display_settings' || type === 'update_global_notifications'
  const ownLocalIds = 'sender_queue_id' in item.event || 'local_message_id' in item.event
  return (desc) => {
    let who: string
    if (!recipients.has(desc.userId)) {
      who = 'x'
    } else {
      const own = item.perUser?.[desc.userId]
      if (own === undefined) {
        who = ownLocalIds ? `q${desc.queueId}` : 'n'
      } else if (ownLocalIds || 'sender_queue_id' in own || 'local_message_id' in own) {
        who = `q${desc.queueId}`
      } else {
        let id = entryIds.get(own)
        if (id === undefined) entryIds.set(own, (id = entryIds.size))
        who = `e${id}`
      }
    }
    const key = `${who}|${namesItsUser ? `${desc.userId}|${desc.userEmail}` : ''}|${descriptorShape(desc)}`
    let outcome = outcomes.get(key)
    if (outcome === undefined) {
      outcome = prepare(eventsForQueue(desc, item))
      outcomes.set(key, outcome)
    }
    return outcome
  }
}
