// checkStateAfter(t, app, user, fn): "register state + applied events =
// fresh register" (upstream's verify_action). Registers a queue for every
// event type, runs fn, fetches the queue's events (each checked against its
// schema), applies them with the client model of apply-event.ts, registers
// again and asserts the two states are deeply equal. It does so for two
// clients at once: a modern one (all capabilities, include_subscribers,
// slim_presence, client_extavatar) and a legacy one (no capabilities),
// so both the modern and the legacy event forms are checked.
//
// Keys that legitimately differ between two registrations, and only those:
// * queue_id, last_event_id: the new queue's own;
// * server_timestamp: the server's clock when presence was read;
// * presence_last_update_id: may move when fn's requests touch presence.
//
// Where upstream itself leaves a client stale (its events carry nothing that
// would update the value, and its apply_event cannot do better), a caller
// names exactly that value as an UpstreamGap, with the reason; everything
// else is still compared.
import type { FastifyInstance } from 'fastify'
import type { Test } from 'tap'
import type { User } from '../../src/db/index.js'
import { as, type Params } from './client.js'
import { bodyOf } from './expect.js'
import { checkEventSchemas, MODERN_CAPABILITIES, type CapturedEvent } from './events.js'
import { applyEvents, type DeliveredEvent, type RegisterState } from './apply-event.js'

export type StateCheckTap = Pick<Test, 'same' | 'ok'>

export interface StateCheckOptions {
  /** Further register keys left out of the comparison, each with the reason (shown in the assertion's name). */
  ignore?: Record<string, string>
  /**
   * Events fn must produce for the modern client, as `type` or `type/op`
   * (a check that the scenario did something). These lists are also the
   * record of what the state check covers: test/events/state-check-coverage.test.ts
   * reads them from the test sources and fails when an event type and op of
   * the schemas is named by none.
   */
  expectTypes?: string[]
  /** The same for events only the legacy client receives (update_display_settings…). */
  expectLegacyTypes?: string[]
  /** Values upstream's own events leave stale, each with the reason (shown in the assertion's name). */
  upstreamGaps?: UpstreamGap[]
}

/** One value a client applying upstream's events cannot keep exact. */
export type UpstreamGap = { why: string; variant?: 'modern client' | 'legacy client' } & (
  | {
      /** `field` of a channel's entry in the register list `list` (for example first_message_id in never_subscribed). */
      list: string
      /** The channel, by ID or name; every entry of the list when absent. */
      stream?: number | string
      field: string
    }
  | {
      /**
       * Messages whose copies the user lost with no event that removes them
       * (a move sends such users only update_message): the client's unread
       * state forgets them, as its next message fetch would. max_message_id
       * is not recomputed by events either, so it is left out too.
       */
      lostMessageIds: number[]
    }
)

const ALWAYS_IGNORED = ['queue_id', 'last_event_id', 'server_timestamp', 'presence_last_update_id']

interface Variant {
  name: string
  params: Params
  includeSubscribers: boolean
  userListIncomplete: boolean
  clientExtavatar: boolean
}

const VARIANTS: Variant[] = [
  {
    name: 'modern client',
    params: { client_capabilities: MODERN_CAPABILITIES, include_subscribers: true, slim_presence: true, client_extavatar: true, apply_markdown: true },
    includeSubscribers: true,
    userListIncomplete: MODERN_CAPABILITIES.user_list_incomplete,
    clientExtavatar: true,
  },
  {
    name: 'legacy client',
    params: { client_capabilities: {}, include_subscribers: false, slim_presence: false, client_extavatar: false, apply_markdown: false },
    includeSubscribers: false,
    userListIncomplete: false,
    clientExtavatar: false,
  },
]

type Person = Pick<User, 'id' | 'deliveryEmail' | 'apiKey'>

async function register(app: FastifyInstance, user: Person, params: Params): Promise<RegisterState> {
  const body = bodyOf(await as(app, user).post('/register', params))
  if (body.result !== 'success') throw new Error(`register failed: ${JSON.stringify(body)}`)
  return body
}

async function drain(app: FastifyInstance, user: Person, queueId: string, lastEventId: number): Promise<CapturedEvent[]> {
  const body = bodyOf(await as(app, user).get('/events', { queue_id: queueId, last_event_id: lastEventId, dont_block: true }))
  if (body.result !== 'success') throw new Error(`GET /events failed: ${JSON.stringify(body)}`)
  return body.events as CapturedEvent[]
}

/**
 * The state without the ignored keys, its channel lists in stream_id order:
 * they are sets (register sorts them by name, events append), as upstream's
 * verify_action treats them.
 */
function withoutIgnored(state: RegisterState, ignored: string[]): RegisterState {
  const out: RegisterState = { ...state }
  for (const key of ignored) delete out[key]
  for (const key of ['subscriptions', 'unsubscribed', 'never_subscribed', 'streams']) {
    const value = out[key]
    if (Array.isArray(value)) out[key] = [...(value as { stream_id: number }[])].sort((a, b) => a.stream_id - b.stream_id)
  }
  return out
}

/** The state without the fields the gaps name. */
function withoutGaps(state: RegisterState, gaps: UpstreamGap[]): RegisterState {
  const out = structuredClone(state)
  for (const gap of gaps) {
    if (!('list' in gap)) continue
    const entries = out[gap.list]
    if (!Array.isArray(entries)) continue
    for (const entry of entries as Record<string, unknown>[]) {
      if (gap.stream === undefined || entry.stream_id === gap.stream || entry.name === gap.stream) delete entry[gap.field]
    }
  }
  return out
}

/**
 * Runs fn between two registrations of `user` and asserts, for each client
 * variant, that the first state with the events applied equals the second.
 * Returns the modern client's events.
 */
export async function checkStateAfter(
  t: StateCheckTap,
  app: FastifyInstance,
  user: Person,
  fn: () => Promise<unknown>,
  options: StateCheckOptions = {},
): Promise<CapturedEvent[]> {
  const before = await Promise.all(VARIANTS.map((v) => register(app, user, v.params)))
  await fn()
  // Actions publish after their commit, before answering; the in-process bus delivers on a microtask.
  await new Promise((resolve) => setImmediate(resolve))
  const events = await Promise.all(VARIANTS.map((_, i) => drain(app, user, String(before[i]?.queue_id), Number(before[i]?.last_event_id))))
  const after = await Promise.all(VARIANTS.map((v) => register(app, user, v.params)))
  const ignored = [...ALWAYS_IGNORED, ...Object.keys(options.ignore ?? {})]
  const note = options.ignore ? ` (ignoring ${Object.entries(options.ignore).map(([k, why]) => `${k}: ${why}`).join('; ')})` : ''
  VARIANTS.forEach((variant, i) => {
    const delivered = (events[i] ?? []).filter((e) => e.type !== 'heartbeat')
    checkEventSchemas(delivered)
    const gaps = (options.upstreamGaps ?? []).filter((g) => g.variant === undefined || g.variant === variant.name)
    const lost = gaps.flatMap((g) => ('lostMessageIds' in g ? g.lostMessageIds : []))
    // The forgotten messages go through the model as a deletion would: it only drops them from the unread state.
    const forget: DeliveredEvent[] = lost.length > 0 ? [{ type: 'delete_message', message_type: 'private', message_ids: lost }] : []
    const applied = applyEvents(before[i] as RegisterState, [...(delivered as DeliveredEvent[]), ...forget], {
      userId: user.id,
      includeSubscribers: variant.includeSubscribers,
      userListIncomplete: variant.userListIncomplete,
      clientExtavatar: variant.clientExtavatar,
    })
    const skip = lost.length > 0 ? [...ignored, 'max_message_id'] : ignored
    const [got, want] = [applied, after[i] as RegisterState].map((state) => withoutGaps(withoutIgnored(state, skip), gaps))
    const gapNote = gaps.length > 0 ? ` (upstream leaves stale: ${gaps.map((g) => g.why).join('; ')})` : ''
    t.same(got, want, `${variant.name}: register state + ${delivered.length} events = fresh register${note}${gapNote}`)
  })
  await Promise.all(
    [...before, ...after].map((state) => as(app, user).delete('/events', { queue_id: String(state.queue_id) })),
  )
  const [modern, legacy] = [0, 1].map((i) => (events[i] ?? []).filter((e) => e.type !== 'heartbeat'))
  const sent = (list: CapturedEvent[], expected: string): boolean => {
    const [type, op] = expected.split('/')
    return list.some((e) => e.type === type && (op === undefined || e.op === op))
  }
  for (const type of options.expectTypes ?? []) t.ok(sent(modern ?? [], type), `a ${type} event was sent`)
  for (const type of options.expectLegacyTypes ?? []) t.ok(sent(legacy ?? [], type), `a ${type} event was sent to the legacy client`)
  return modern ?? []
}
