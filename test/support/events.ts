// captureEvents(app, user, fn): registers a queue the way a modern client
// does, runs fn, and returns the events the queue received (heartbeats left
// out), each checked against its schema in src/events/schemas (a mismatch
// throws). Waits on a blocking GET /events, never on a sleep loop.
import type { FastifyInstance } from 'fastify'
import type { User } from '../../src/db/index.js'
import type { BusItem, EventBus } from '../../src/events/bus.js'
import { as, type Params } from './client.js'
import { bodyOf } from './expect.js'
import { eventSchemaErrors } from '../../src/events/schemas/index.js'

export const MODERN_CAPABILITIES = {
  notification_settings_null: true,
  bulk_message_deletion: true,
  user_avatar_url_field_optional: false,
  stream_typing_notifications: true,
  user_settings_object: true,
  linkifier_url_template: true,
  user_list_incomplete: true,
  empty_topic_name: true,
  include_deactivated_groups: true,
  archived_channels: true,
}

export type CapturedEvent = Record<string, any> // nested event payloads are read loosely

export interface CaptureOptions {
  /** Extra POST /register parameters (event_types, apply_markdown, client_extavatar…). */
  register?: Params
  /** fn is expected to produce no event: only a non-blocking fetch is made. */
  expectNone?: boolean
  timeoutMs?: number
}

export async function captureEvents(app: FastifyInstance, user: Pick<User, 'deliveryEmail' | 'apiKey'>, fn: () => Promise<unknown>, options: CaptureOptions = {}): Promise<CapturedEvent[]> {
  const client = as(app, user)
  const reg = bodyOf(await client.post('/register', { client_capabilities: MODERN_CAPABILITIES, fetch_event_types: [], ...options.register }))
  if (reg.result !== 'success') throw new Error(`register failed: ${JSON.stringify(reg)}`)
  await fn()
  const fetch = async (dontBlock: boolean, lastEventId: number): Promise<CapturedEvent[]> => {
    const res = bodyOf(await client.get('/events', { queue_id: reg.queue_id, last_event_id: lastEventId, dont_block: dontBlock }))
    if (res.result !== 'success') throw new Error(`GET /events failed: ${JSON.stringify(res)}`)
    return res.events as CapturedEvent[]
  }
  let events: CapturedEvent[]
  if (options.expectNone) {
    events = await fetch(true, reg.last_event_id)
  } else {
    let timer: NodeJS.Timeout | undefined
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error('no event arrived')), options.timeoutMs ?? 10_000)
    })
    events = await Promise.race([fetch(false, reg.last_event_id), timeout]).finally(() => clearTimeout(timer))
    const last = events.reduce((max, e) => Math.max(max, Number(e.id)), reg.last_event_id)
    events = [...events, ...(await fetch(true, last))]
  }
  await client.delete('/events', { queue_id: reg.queue_id })
  checkEventSchemas(events)
  return events.filter((e) => e.type !== 'heartbeat')
}

/** Throws, naming the event and the mismatch, when a delivered event does not match its schema. */
export function checkEventSchemas(events: CapturedEvent[]): void {
  for (const event of events) {
    const errors = eventSchemaErrors(event)
    if (errors.length > 0) throw new Error(`event does not match its schema: ${errors.join('; ')}\n${JSON.stringify(event)}`)
  }
}

/** A bus item whose event is read loosely, as tests read delivered events. */
export type CapturedBusItem = Omit<BusItem, 'event'> & { event: CapturedEvent }

/**
 * The items published on the bus while fn runs (optionally only of the
 * given event types). The in-process bus delivers on a microtask, so one turn of the event
 * loop after fn settles is enough; no timer is involved.
 */
export async function busItemsDuring<T>(services: { bus: EventBus }, fn: () => Promise<T>, types?: string | string[]): Promise<{ result: T; items: CapturedBusItem[] }> {
  const wanted = types === undefined ? undefined : new Set([types].flat())
  const items: CapturedBusItem[] = []
  const stop = services.bus.subscribe((item) => {
    if (wanted === undefined || wanted.has(item.event.type)) items.push(item)
  })
  try {
    const result = await fn()
    await new Promise((resolve) => setImmediate(resolve))
    return { result, items }
  } finally {
    stop()
  }
}
