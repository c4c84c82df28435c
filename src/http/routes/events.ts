// POST /register, GET /events, DELETE /events (spec "Register an event
// queue", "Get events", "Delete an event queue"; §States event queue).
import { Type } from 'typebox'
import type { FastifyReply } from 'fastify'
import { route } from '../route.js'
import { json, nullAsAbsent, optional, upstreamAlias } from '../params.js'
import { badRequest, missingArgument, notLoggedIn } from '../../errors.js'
import { registerQueue, registerVisitor } from '../../queries/register.js'
import type { PollAbort } from '../../events/queues/event-queues.js'
import { capabilitiesOf, MAX_EVENT_NARROW_TERMS, MAX_EVENT_TYPE_LENGTH, MAX_EVENT_TYPES, queueInputFor } from '../../queries/register-queue.js'

// JSON null means "not given" for the parameters upstream declares `| None = None`
// (the Python bindings send event_types and narrow that way).
const queueParams = {
  apply_markdown: optional(Type.Boolean()),
  client_extavatar: optional(nullAsAbsent(upstreamAlias(Type.Boolean(), 'client_gravatar'))),
  slim_presence: optional(Type.Boolean()),
  all_public_streams: optional(nullAsAbsent(Type.Boolean())),
  // Sizes bound what a queue keeps (its descriptor lives as long as the queue); queries/register-queue.ts.
  event_types: optional(nullAsAbsent(json(Type.Array(Type.String({ maxLength: MAX_EVENT_TYPE_LENGTH }), { maxItems: MAX_EVENT_TYPES })))),
  narrow: optional(nullAsAbsent(json(Type.Array(Type.Unknown(), { maxItems: MAX_EVENT_NARROW_TERMS })))),
}

const CAPABILITY_PARAMS = ['bulk_message_deletion', 'stream_typing_notifications', 'user_settings_object', 'linkifier_url_template', 'user_list_incomplete', 'include_deactivated_groups'] as const

/** Aborted when the client goes away before the response is written (the response's 'close' before its end). */
function closeSignal(reply: FastifyReply): PollAbort {
  let aborted = false
  let onAbort: (() => void) | undefined
  reply.raw.once('close', () => {
    if (reply.raw.writableFinished) return
    aborted = true
    onAbort?.()
  })
  return {
    get aborted() {
      return aborted
    },
    onAbort(fn) {
      if (aborted) {
        fn()
        return () => {}
      }
      onAbort = fn
      return () => {
        if (onAbort === fn) onAbort = undefined
      }
    },
  }
}

export const routes = [
  route({
    method: 'POST',
    url: '/register',
    auth: 'optional',
    params: {
      ...queueParams,
      include_subscribers: optional(Type.Boolean()),
      client_capabilities: optional(nullAsAbsent(json(Type.Record(Type.String(), Type.Boolean())))),
      fetch_event_types: optional(nullAsAbsent(json(Type.Array(Type.String({ maxLength: MAX_EVENT_TYPE_LENGTH }), { maxItems: MAX_EVENT_TYPES })))),
      queue_lifespan_secs: optional(Type.Integer()),
      presence_history_limit_days: optional(nullAsAbsent(Type.Integer())),
    },
    handler: async (input, ctx) => {
      const capabilities = capabilitiesOf(input.client_capabilities)
      const fetchEventTypes = input.fetch_event_types ?? input.event_types ?? null
      if (!ctx.user) {
        if (!ctx.realm.webPublicAccessEnabled) throw notLoggedIn()
        if (input.client_extavatar) throw badRequest("Invalid 'client_extavatar' parameter for anonymous request")
        if (input.include_subscribers) throw badRequest("Invalid 'include_subscribers' parameter for anonymous request")
        return registerVisitor(ctx, { fetchEventTypes, capabilities, clientExtavatar: false, includeSubscribers: false, slimPresence: input.slim_presence ?? false })
      }
      const clientExtavatar = input.client_extavatar ?? true
      const queueInput = await queueInputFor(ctx.prisma, ctx.user, { ...input, client_extavatar: clientExtavatar, lifespan_secs: input.queue_lifespan_secs }, capabilities)
      return registerQueue(ctx, ctx.user, queueInput, {
        fetchEventTypes,
        capabilities,
        clientExtavatar,
        includeSubscribers: input.include_subscribers ?? false,
        slimPresence: queueInput.slimPresence ?? false,
        presenceHistoryLimitDays: input.presence_history_limit_days,
      })
    },
  }),

  route({
    method: 'GET',
    url: '/events',
    params: {
      queue_id: optional(Type.String()),
      last_event_id: optional(Type.Integer()),
      dont_block: optional(Type.Boolean()),
      ...queueParams,
      lifespan_secs: optional(Type.Integer()),
      pronouns_field_type_supported: optional(Type.Boolean()),
      ...Object.fromEntries(CAPABILITY_PARAMS.map((name) => [name, optional(Type.Boolean())])),
    },
    handler: async (input, ctx) => {
      const dontBlock = input.dont_block ?? false
      if (input.queue_id === undefined) {
        // Implicit registration (upstream get_events_backend): only without blocking.
        if (!dontBlock) throw missingArgument('queue_id')
        const raw = input as Record<string, unknown>
        const capabilities = capabilitiesOf(Object.fromEntries(CAPABILITY_PARAMS.map((k) => [k, raw[k] === true])))
        const queueInput = await queueInputFor(
          ctx.prisma,
          ctx.user,
          { ...input, client_extavatar: input.client_extavatar ?? false },
          capabilities,
        )
        const queue = await ctx.events.register(queueInput)
        ctx.request.roostQueueId = queue.queueId
        return { events: [], queue_id: queue.queueId }
      }
      if (input.last_event_id === undefined) throw missingArgument('last_event_id')
      ctx.request.roostQueueId = input.queue_id
      const polled = ctx.events.poll({
        queueId: input.queue_id,
        userId: ctx.user.id,
        lastEventId: input.last_event_id,
        dontBlock,
        signal: dontBlock ? undefined : closeSignal(ctx.reply),
      })
      // A poll answered from memory comes without a promise: no await for it.
      return { events: polled instanceof Promise ? await polled : polled, queue_id: input.queue_id }
    },
  }),

  route({
    method: 'DELETE',
    url: '/events',
    params: { queue_id: Type.String() },
    handler: async (input, ctx) => {
      await ctx.events.delete(input.queue_id, ctx.user.id)
      return {}
    },
  }),
]
