// Helpers shared by the editing, moving, deleting, reaction, flag and topic
// tests: sending messages, reading a user's copy, and capturing the events
// that reach real queues (POST /register + GET /events, so per-queue
// filtering and client capabilities apply).
import { setImmediate as nextTurn } from 'node:timers/promises'
import type { FastifyInstance } from 'fastify'
import type { Test } from 'tap'
import type { User } from '../../src/db/index.js'
import { as } from '../support/client.js'
import { expectSuccess, type Body } from '../support/expect.js'

export async function send(t: Test, app: FastifyInstance, user: User, params: Record<string, unknown>): Promise<number> {
  return expectSuccess(t, await as(app, user).post('/messages', params)).id as number
}

export const sendTo = (t: Test, app: FastifyInstance, user: User, to: string, topic: string, content: string): Promise<number> =>
  send(t, app, user, { type: 'stream', to, topic, content })

export async function messageAs(t: Test, app: FastifyInstance, user: User, id: number): Promise<Body> {
  return expectSuccess(t, await as(app, user).get(`/messages/${id}`)).message as Body
}

export interface Queue {
  user: User
  queueId: string
}

export async function openQueue(t: Test, app: FastifyInstance, user: User, params: Record<string, unknown> = {}): Promise<Queue> {
  const body = expectSuccess(t, await as(app, user).post('/register', { client_capabilities: { bulk_message_deletion: true }, ...params }))
  return { user, queueId: body.queue_id as string }
}

/** Events queued so far (heartbeats dropped); the memory bus delivers on a microtask, so let those run first. */
export async function eventsOf(t: Test, app: FastifyInstance, q: Queue): Promise<Body[]> {
  await nextTurn()
  const body = expectSuccess(t, await as(app, q.user).get('/events', { queue_id: q.queueId, last_event_id: -1, dont_block: true }))
  return (body.events as Body[]).filter((e) => e.type !== 'heartbeat')
}

/** Opens one queue per user, runs fn, and returns each user's events by user id. */
export async function capture(
  t: Test,
  app: FastifyInstance,
  users: User[],
  fn: () => Promise<unknown>,
  params: Record<string, unknown> = {},
): Promise<Map<number, Body[]>> {
  const queues = await Promise.all(users.map((u) => openQueue(t, app, u, params)))
  await fn()
  const out = new Map<number, Body[]>()
  for (const q of queues) out.set(q.user.id, await eventsOf(t, app, q))
  return out
}

export const ofType = (events: Body[] | undefined, type: string): Body[] => (events ?? []).filter((e) => e.type === type)
