// Register parameters → queue registration input: narrow validation for
// events (upstream check_narrow_for_events), bot defaults, capabilities.
import type { PrismaClient, User } from '../db/index.js'
import { badRequest, userNotAuthorizedForQuery } from '../errors.js'
import { parseNarrowTerm, type NarrowTerm } from '../domain/narrow.js'
import { isGuest } from '../domain/roles.js'
import { CLIENT_CAPABILITY_KEYS, type ClientCapabilities, type RegisterQueueInput } from '../events/queues/index.js'

const EVENT_NARROW_OPERATORS = new Set(['channel', 'topic', 'sender', 'is'])

/**
 * What one queue may be registered with. Upstream sets no limits (and keeps
 * unknown event types, which match nothing); these are far above what any
 * client sends (about 60 event types exist, a narrow for events has at most a
 * few terms) and bound the memory of a queue's descriptor.
 */
export const MAX_EVENT_TYPES = 100
export const MAX_EVENT_TYPE_LENGTH = 64
export const MAX_EVENT_NARROW_TERMS = 20
/** A channel or topic name, an email or an `is:` operand, with room to spare. */
export const MAX_EVENT_NARROW_OPERAND_LENGTH = 1000

/** The `narrow` of a queue: pairs of strings, with the operators events can be matched on. */
export function parseEventNarrow(raw: unknown): NarrowTerm[] {
  if (raw === undefined || raw === null) return []
  if (!Array.isArray(raw)) throw badRequest('narrow is not a list')
  return raw.map((pair, i) => {
    if (!Array.isArray(pair) || pair.length !== 2 || typeof pair[0] !== 'string' || typeof pair[1] !== 'string') {
      throw badRequest(`narrow[${i}] is not a list of two strings`)
    }
    if (pair[0].length > MAX_EVENT_TYPE_LENGTH || pair[1].length > MAX_EVENT_NARROW_OPERAND_LENGTH) {
      throw badRequest(`narrow[${i}] is too long (limit: ${MAX_EVENT_NARROW_OPERAND_LENGTH} characters)`)
    }
    const term = parseNarrowTerm(pair)
    if (!EVENT_NARROW_OPERATORS.has(term.operator)) throw badRequest(`Operator ${pair[0]} not supported.`)
    if (term.operator === 'is' && term.operand === 'followed') throw badRequest('Operand followed not supported.')
    return term
  })
}

export function capabilitiesOf(raw: Record<string, boolean> | undefined): ClientCapabilities {
  const out = {} as ClientCapabilities
  for (const key of CLIENT_CAPABILITY_KEYS) out[key] = raw?.[key] === true
  return out
}

export interface QueueParams {
  event_types?: string[]
  narrow?: unknown
  all_public_streams?: boolean
  apply_markdown?: boolean
  client_extavatar: boolean
  slim_presence?: boolean
  lifespan_secs?: number
}

/** Validates and completes the queue parameters (bots default to their registered channel and all_public_streams). */
export async function queueInputFor(prisma: PrismaClient, user: User, params: QueueParams, capabilities: ClientCapabilities): Promise<RegisterQueueInput> {
  let narrow = parseEventNarrow(params.narrow)
  let allPublicStreams = params.all_public_streams
  if (user.isBot) {
    if (narrow.length === 0 && user.defaultEventsRegisterStreamId !== null) {
      const stream = await prisma.stream.findUnique({ where: { id: user.defaultEventsRegisterStreamId } })
      if (stream) narrow = [{ operator: 'channel', operand: stream.name, negated: false }]
    }
    allPublicStreams ??= user.defaultAllPublicStreams
  }
  if (allPublicStreams && isGuest(user.role)) throw userNotAuthorizedForQuery()
  if (params.lifespan_secs !== undefined && params.lifespan_secs < 0) throw badRequest('queue_lifespan_secs must be positive')
  return {
    userId: user.id,
    userEmail: user.email,
    realmId: user.realmId,
    // Duplicates would only take room (unknown types are kept, as upstream does: they match nothing).
    eventTypes: params.event_types ? [...new Set(params.event_types)] : null,
    narrow,
    allPublicStreams: allPublicStreams ?? false,
    capabilities,
    applyMarkdown: params.apply_markdown ?? false,
    clientExtavatar: params.client_extavatar,
    slimPresence: params.slim_presence ?? false,
    lifespanSecs: params.lifespan_secs,
  }
}
