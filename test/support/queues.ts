// Real event queues for tests that compare exact payloads: register a queue
// with chosen capabilities, cause events, then fetch until a condition holds.
// A "sentinel" (a settings change that always reaches the user's own queues)
// marks the end: once it is in, every event published before it is too, so
// an absence can be asserted without sleeping.
import type { FastifyInstance } from 'fastify'
import type { Test } from 'tap'
import type { User } from '../../src/db/index.js'
import { as } from './client.js'
import type { MODERN_CAPABILITIES } from './events.js'
import { expectSuccess, type Body } from './expect.js'

export type Capabilities = Partial<typeof MODERN_CAPABILITIES>

export interface Queue {
  user: User
  queueId: string
  state: Body
  lastEventId: number
}

export async function register(t: Test, app: FastifyInstance, user: User, capabilities: Capabilities, params: Record<string, unknown> = {}): Promise<Queue> {
  const state = expectSuccess(t, await as(app, user).post('/register', { client_capabilities: capabilities, fetch_event_types: [], ...params }))
  return { user, queueId: state.queue_id as string, state, lastEventId: state.last_event_id as number }
}

/** Blocking fetches until `done` holds for the events received so far (heartbeats and ids dropped). */
export async function eventsUntil(t: Test, app: FastifyInstance, q: Queue, done: (events: Body[]) => boolean): Promise<Body[]> {
  const out: Body[] = []
  let timer: NodeJS.Timeout | undefined
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error('the expected events did not arrive')), 10_000)
  })
  try {
    while (!done(out)) {
      const res = await Promise.race([as(app, q.user).get('/events', { queue_id: q.queueId, last_event_id: q.lastEventId }), timeout])
      for (const { id, ...event } of expectSuccess(t, res).events as Body[]) {
        q.lastEventId = Math.max(q.lastEventId, id as number)
        if (event.type !== 'heartbeat') out.push(event)
      }
    }
  } finally {
    clearTimeout(timer)
  }
  return out
}

export const ofType = (events: Body[], type: string): Body[] => events.filter((e) => e.type === type)
export const hasType = (type: string, property?: string) => (events: Body[]) =>
  events.some((e) => e.type === type && (property === undefined || e.property === property))

/** A change that always reaches the user's own queues: once it is in, everything before it is. */
export async function sentinel(t: Test, app: FastifyInstance, user: User, value: boolean): Promise<void> {
  expectSuccess(t, await as(app, user).patch('/settings', { left_side_userlist: value }))
}
export const sentinelArrived = hasType('user_settings', 'left_side_userlist')
